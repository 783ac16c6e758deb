"""Where a change's time goes in one `ingest --follow` pass at 2,000 nodes, phase by phase,
with the follower's caches and without them (the path of a one-shot or worker ingest,
and of every follower pass before issue 31 item 4).

    python -m bench.follow_phases [--nodes 2000] [--pods 20000] [--changes 3]

In this process: the local list/watch server of bench.follow with the same cluster, a
cluster on DATABASE_URL, and for each mode one first ingest and evaluation, then
``--changes`` times one Node's allocatable changes on the server and one pass runs as
the follower runs it (``services.ingest_from_source`` then ``store_evaluation``, the
cyclic collector paused with the cached mode as ``topology.follow`` pauses it). Each
phase is timed by wrapping the function that does it; the median over the changes is
printed. Wall seconds on a shared machine: compare the two modes within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import itertools
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PHASES = (  # (module, function, phase)
    ("topology.services", "read_source", "read the source"),
    ("topology.kube.parse", "parse_objects", "parse"),
    ("topology.model.serialize", "cluster_to_json", "model to JSON"),
    ("topology.services", "content_hash", "content hash"),
    ("django.db.models.query.QuerySet", "create", "store the snapshot row"),
    ("recommender.services", "cluster_from_snapshot", "JSON to model"),
    ("recommender.services", "evaluate", "evaluate (engine)"),
)


def _timed(times: dict[str, float], label: str, function: Callable[..., Any]) -> Callable:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            times[label] += time.perf_counter() - started

    return timed


def _wrap(times: dict[str, float]) -> None:
    import importlib

    from django.db.models.query import QuerySet

    for module_name, name, label in PHASES:
        owner: Any = QuerySet if module_name.endswith("QuerySet") else None
        owner = owner or importlib.import_module(module_name)
        setattr(owner, name, _timed(times, label, getattr(owner, name)))


def _collections(times: dict[str, float]) -> None:
    started = [0.0]

    def callback(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            times["(of which cyclic GC)"] += time.perf_counter() - started[0]

    gc.callbacks.append(callback)


def run_mode(server: Any, kubeconfig: Path, cached: bool, changes: int) -> dict[str, float]:
    from django.utils import timezone

    from recommender.services import store_evaluation
    from topology import services
    from topology.follow import collector_paused

    name = f"bench-phases-{'cached' if cached else 'uncached'}-{time.time_ns()}"
    cluster = services.save_cluster(
        name=name, source_kind="kube", source_settings={"kubeconfig": str(kubeconfig)}
    )
    snapshot = services.ingest_from_source(cluster=cluster, now=timezone.now(), follow=cached)
    store_evaluation(snapshot=snapshot, json_cache=services.json_cache(cluster=cluster))
    runs: dict[str, list[float]] = defaultdict(list)
    for _ in range(changes):
        _change_node(server, next(CHANGES))
        if cached:
            services.wait_for_change(cluster=cluster, timeout_seconds=30)
        else:
            time.sleep(1.0)  # the uncached pass reads what a 1 s watch brings
        TIMES.clear()
        started = time.perf_counter()
        with collector_paused() if cached else contextlib.nullcontext():
            snapshot = services.ingest_from_source(
                cluster=cluster, now=timezone.now(), follow=cached
            )
            assert snapshot is not None, "the change made no snapshot"
            store_evaluation(snapshot=snapshot, json_cache=services.json_cache(cluster=cluster))
        runs["whole pass"].append(time.perf_counter() - started)
        for label, seconds in TIMES.items():
            runs[label].append(seconds)
    services.close_source(cluster=cluster)
    return {label: statistics.median(values) for label, values in runs.items()}


def _change_node(server: Any, index: int) -> None:
    nodes = server.resources["Node"].items
    node = dict(nodes[sorted(nodes)[index % len(nodes)]])
    status = dict(node["status"])
    status["allocatable"] = {**status["allocatable"], "pods": str(300 + index)}
    node["status"] = status
    server.put(node)


TIMES: dict[str, float] = defaultdict(float)
CHANGES = itertools.count()  # never the same change twice: each makes a new snapshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--changes", type=int, default=3)
    options = parser.parse_args()
    if not os.environ.get("DATABASE_URL"):
        raise SystemExit("bench.follow_phases needs DATABASE_URL (Postgres)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")
    import django

    django.setup()
    from bench.follow import served_cluster

    _wrap(TIMES)
    _collections(TIMES)
    with served_cluster(options.nodes, options.pods) as (server, kubeconfig):
        results = {
            "uncached": run_mode(server, kubeconfig, False, options.changes),
            "cached": run_mode(server, kubeconfig, True, options.changes),
        }
    labels = [label for _m, _n, label in PHASES] + ["(of which cyclic GC)", "whole pass"]
    print(f"follow_phases at {options.nodes} nodes, median of {options.changes} changes (s):")
    print(f"  {'phase':<28} {'uncached':>9} {'cached':>9}")
    for label in labels:
        row = [results[mode].get(label, 0.0) for mode in ("uncached", "cached")]
        print(f"  {label:<28} {row[0]:>9.2f} {row[1]:>9.2f}")


if __name__ == "__main__":
    main()
