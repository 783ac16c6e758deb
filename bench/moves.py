"""Move instead of buy (issue 44 item 6): what the moves search finds, and its CPU time.

On the openb demo (the replay `make run` shows: the trace filled to 90 %, its
gangs and hand-made cases, its node groups and reservations) and on bench.blocked's
seeded exports (N nodes of 8 H100, one running pod each, N/4 pending single pods, no
node group: nothing can be bought), it runs the critical pass, then
``moves_for`` (``recommender.engine.moves``) and prints: the workloads blocked or
waiting for a scale-up (and how many are gangs), how many of those searched get a
verified plan (unblocked without buying), the $/h of buy plans the recommended moves
avoid, the reconciliation's $/h, the pods moved and GPUs disrupted summed over the
plans (each plan stands alone), and the search's CPU seconds (this thread's).

Every pod of the trace and of the exports is bare (no controller owner reference):
cluster-autoscaler's ``replicated`` drain rule keeps each in place, so "as read" the
search can move nothing. Each scenario is therefore also run "replicated": every
running pod given a ReplicaSet controller (as if each were a Deployment's replica),
the drain rules otherwise unchanged.

    python -m bench.moves [--nodes 2000,10000] [--no-demo]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")

AT = datetime(2026, 12, 2, tzinfo=UTC)


def replicated(cluster: Any) -> Any:
    """Every bare running pod owned by a ReplicaSet of its own name."""
    pods = tuple(
        replace(p, controller=f"ReplicaSet/{p.namespace}/{p.name}")
        if p.node_name is not None and p.controller is None
        else p
        for p in cluster.pods
    )
    return replace(cluster, pods=pods)


def demo_cluster() -> Any:
    """The demo's model as its first ingest reads it, with its node groups and
    reservations (parsed as the capacityweb.io objects the demo stores)."""
    import django

    django.setup()
    from capacityweb import demo
    from recommender.replay import source_from_settings
    from topology.kube.parse import parse_objects
    from topology.services import TRACE_DATA_DIR

    origin = AT
    source = source_from_settings(
        demo.source_settings(origin=origin), cluster_name="openb-demo", data_dir=TRACE_DATA_DIR
    )
    model = source.read(origin + timedelta(minutes=1)).model
    objects = [
        *demo.node_group_objects(),
        *(
            {
                "apiVersion": "capacityweb.io/v1alpha1",
                "kind": "Reservation",
                "metadata": {"name": r.name},
                "spec": r.spec,
            }
            for r in demo.reservations()
        ),
    ]
    config = parse_objects([("demo", o) for o in objects], cluster_name="openb-demo").cluster
    return replace(model, node_groups=config.node_groups, reservations=config.reservations)


def blocked_cluster(nodes: int) -> Any:
    from bench.blocked import blocked_export
    from topology.kube.parse import parse_objects

    export = blocked_export(nodes, 800 if nodes <= 2000 else 2500, nodes // 4, 1)
    objects = [("blocked", item) for item in export["items"]]
    return parse_objects(objects, cluster_name=f"blocked-{nodes}").cluster


def measure(name: str, cluster: Any) -> None:
    from recommender.engine.autoscaler.plan import BLOCKED, RUNS_AFTER_SCALE_UP
    from recommender.engine.evaluate.evaluation import critical_pass
    from recommender.engine.moves.report import MOVE, moves_for

    started = time.process_time()
    evaluation = critical_pass(cluster, at=AT).evaluation
    critical = time.process_time() - started
    wanted = [w for w in evaluation.workloads if w.joint.verdict in (BLOCKED, RUNS_AFTER_SCALE_UP)]
    blocked = sum(1 for w in wanted if w.joint.verdict == BLOCKED)
    gangs = {w.key for w in wanted if w.kind == "gang"}
    print(
        f"moves {name}: {len(cluster.nodes)} nodes, {len(evaluation.workloads)} pending, "
        f"{blocked} blocked + {len(wanted) - blocked} waiting for a scale-up "
        f"({len(gangs)} gangs); critical pass {critical:.2f} s CPU",
        flush=True,
    )
    for variant, model in (("as read", cluster), ("replicated", replicated(cluster))):
        started = time.thread_time()
        report = moves_for(model, evaluation)
        seconds = time.thread_time() - started
        found = [p for p in report.plans if p.plan is not None]
        gangs_found = sum(1 for p in found if p.workload in gangs)
        gangs_searched = sum(1 for p in report.plans if p.workload in gangs)
        moved = [p for p in found if p.recommend == MOVE]
        avoided = sum(p.buy_per_hour for p in moved)
        pods = sum(len(p.plan.moves) for p in found if p.plan)
        gpus = sum(p.plan.gpu_milli_disrupted for p in found if p.plan) / 1000
        blocked_found = sum(1 for p in found if p.buy_verdict == BLOCKED)
        blocked_searched = sum(1 for p in report.plans if p.buy_verdict == BLOCKED)
        print(
            f"moves {name} {variant}: searched {len(report.plans)} "
            f"(not searched {len(report.not_searched)}), unblocked without buying "
            f"{len(found)}/{len(report.plans)} (blocked {blocked_found}/{blocked_searched}, "
            f"gangs {gangs_found}/{gangs_searched}), move recommended {len(moved)}, "
            f"avoided {avoided:.2f}/h, reconciliation {report.saved_per_hour:.2f}/h "
            f"({len(report.reconciliations)} nodes), pods moved {pods}, GPUs disrupted "
            f"{gpus:g}; search {seconds:.2f} s CPU",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="2000,10000")
    parser.add_argument("--no-demo", action="store_true")
    args = parser.parse_args()
    if not args.no_demo:
        measure("openb-demo", demo_cluster())
    for nodes in [int(n) for n in args.nodes.split(",") if n]:
        measure(f"blocked-{nodes}", blocked_cluster(nodes))


if __name__ == "__main__":
    main()
