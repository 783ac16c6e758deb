"""Ingest benchmarks: watch events/s through the kube source, and storing a 10,000-node snapshot.

    python -m bench.ingest            (needs DATABASE_URL for the store benchmark)

1. A local list/watch server (tests/ingest/kubeserver.py) holds N Pod events
   made from openb trace rows; the real kubernetes client watches them
   through ``KubeSource.watch`` into its store. Target: ≥ 2,000 events/s.
2. The openb trace's 1,213 nodes are repeated (renamed) to 10,000 nodes with
   the trace's pods; ``ingest_snapshot`` parses nothing (a model is given) but
   serialises, hashes and writes it. Target: < 15 s.
3. The same 10,000 nodes and 8,152 trace pods as Kubernetes objects: the whole
   ingest including ``kube.parse_objects``.
4. One-shot ``manage.py ingest --source kube`` of 2,000 nodes and 20,000 Running pods
   shaped like real ones (``bench/realpods.py``: managedFields, env, probes, volumes,
   container statuses; about 10 kB of JSON each) plus the 200 Pending GPU pods of
   ``bench.follow``, served by the local list/watch server: wall time and the child's
   peak RSS (issues 31, 45: < 600 MiB; ``--one-shot`` runs only this part). The child
   runs the README's command as a user has it: SQLite (a fresh file, migrated) and DEBUG
   on, the defaults of ``make run``; ``--baseline-ref REF`` runs REF's tree (a temporary
   git worktree) the same way against the same server, before this tree.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data" / "alibaba-gpu-v2023" / "csv"
WATCH_EVENTS = 20_000
STORE_NODES = 10_000
ONE_SHOT_NODES = 2_000
ONE_SHOT_PODS = 20_000


def bench_watch(events: int = WATCH_EVENTS) -> float:
    """Watch events per second applied to the kube source's store."""
    from tests.ingest.kubeobjects import trace_pod_object
    from tests.ingest.kubeserver import KubeServer
    from topology.ingest.kubeapi import api_client_from
    from topology.ingest.kubekinds import DEFAULT_KINDS
    from topology.ingest.kubesource import KubeSource

    with (DATA / "openb_pod_list_default.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    pod_kind = next(k for k in DEFAULT_KINDS if k.kind == "Pod")
    server = KubeServer().start()
    try:
        server.close_when_idle = True
        kubeconfig = server.kubeconfig(Path(tempfile.gettempdir()) / "bench-kubeconfig")
        source = KubeSource(api_client_from(kubeconfig=str(kubeconfig)), kinds=[pod_kind])
        source.relist(pod_kind)
        objects = []
        for index in range(events):
            obj = trace_pod_object(rows[index % len(rows)])
            obj["metadata"]["name"] = f"{obj['metadata']['name']}-{index // len(rows)}"
            objects.append(obj)
        server.put_many(objects)
        started = time.perf_counter()
        applied = 0
        while applied < events:
            applied += source.watch(pod_kind, watch_seconds=60)
        elapsed = time.perf_counter() - started
    finally:
        server.stop()
    assert len(source.stores["Pod"]) == events
    return events / elapsed


def bench_store(nodes: int = STORE_NODES) -> tuple[float, float]:
    """Seconds to serialise+hash+write one snapshot of ``nodes`` nodes (and of one evaluation)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")
    django.setup()
    from django.core.management import call_command

    from topology import services
    from topology.ingest.files import read_openb
    from topology.models import Cluster

    call_command("migrate", verbosity=0)
    trace = read_openb(DATA.parent, "default", bound=True)
    copies = [
        replace(node, name=f"{node.name}-{index // len(trace.nodes)}")
        for index, node in zip(range(nodes), _cycle(trace.nodes), strict=False)
    ]
    model = replace(trace, nodes=tuple(copies))
    name = f"bench-{nodes}-{time.time_ns()}"
    cluster = Cluster.objects.create(name=name, source_kind=Cluster.SourceKind.REPLAY)
    started = time.perf_counter()
    snapshot = services.ingest_snapshot(cluster=cluster, taken_at=datetime.now(UTC), model=model)
    elapsed = time.perf_counter() - started
    assert snapshot is not None and snapshot.object_counts["nodes"] == nodes
    cluster.delete()
    return elapsed, len(model.pods)


def bench_store_objects(nodes: int = STORE_NODES) -> tuple[float, int]:
    """Seconds for the whole ingest of Kubernetes objects: parse, serialise, hash, write."""
    from tests.ingest.kubeobjects import openb_rows, trace_node_object, trace_pod_object
    from topology import services
    from topology.models import Cluster

    rows = openb_rows("openb_node_list_gpu_node.csv", 10**6)
    objects = []
    for index in range(nodes):
        obj = trace_node_object(rows[index % len(rows)])
        obj["metadata"]["name"] = f"{obj['metadata']['name']}-{index // len(rows)}"
        objects.append(("bench", obj))
    pods = [("bench", trace_pod_object(r)) for r in openb_rows("openb_pod_list_default.csv", 10**6)]
    name = f"bench-objects-{nodes}-{time.time_ns()}"
    cluster = Cluster.objects.create(name=name, source_kind=Cluster.SourceKind.FILES)
    started = time.perf_counter()
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=datetime.now(UTC), objects=[*objects, *pods]
    )
    elapsed = time.perf_counter() - started
    assert snapshot is not None and snapshot.object_counts["nodes"] == nodes
    cluster.delete()
    return elapsed, len(pods)


def bench_one_shot(
    nodes: int = ONE_SHOT_NODES, pods: int = ONE_SHOT_PODS, trees: Sequence[Path] = (REPO,)
) -> tuple[list[tuple[float, float]], int]:
    """Seconds and peak RSS (MiB) of one `manage.py ingest --source kube` child per tree
    reading ``nodes`` nodes and ``pods`` realistic Running pods; the pods' mean JSON size."""

    from bench.follow import PENDING_GPU_PODS, cluster_objects
    from bench.realpods import json_bytes, running_pod
    from tests.ingest.kubeserver import KubeServer

    base = cluster_objects(nodes, 0)  # the nodes and the Pending GPU pods
    node_names = [o["metadata"]["name"] for o in base if o["kind"] == "Node"]
    server = KubeServer().start()
    try:
        server.put_many(base)
        sizes = 0
        for start in range(0, pods, 1000):  # in batches: the server copies each object
            batch = [
                running_pod(i, node_names[i % nodes]) for i in range(start, min(start + 1000, pods))
            ]
            sizes += sum(json_bytes(p) for p in batch)
            server.put_many(batch)
        assert len(server.resources["Pod"].items) == pods + PENDING_GPU_PODS
        kubeconfig = server.kubeconfig(Path(tempfile.mkdtemp()) / "kubeconfig")
        runs = [one_shot_peak(kubeconfig, f"bench-one-shot-{time.time_ns()}", t) for t in trees]
    finally:
        server.stop()
    return runs, sizes // max(pods, 1)


# Runs manage.py in the child and writes the child's own high-water RSS (VmHWM, kB) to
# the file named by argv[1] as it exits. Not ``ru_maxrss``: Linux keeps the pre-exec
# high-water mark of the process that spawned the child (fs/exec.c ``exec_mmap``
# ``setmax_mm_hiwater_rss``), so a child started by this benchmark, which holds the
# served objects (about 1 GB at 20,000 real-looking pods), reports at least that.
_PEAK_WRAPPER = """
import runpy, sys
out = sys.argv.pop(1)
try:
    runpy.run_path("manage.py", run_name="__main__")
finally:
    with open("/proc/self/status") as status, open(out, "w") as peak:
        peak.write(next(l.split()[1] for l in status if l.startswith("VmHWM")))
"""


def one_shot_peak(kubeconfig: Path, name: str, tree: Path = REPO) -> tuple[float, float]:
    """Seconds and the child's own peak RSS (MiB) of one `manage.py ingest --source kube`
    run in ``tree`` with the README's defaults: SQLite (a fresh file) and DEBUG on."""
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "DATABASE_URL")}
    env["DATABASE_URL"] = f"sqlite:///{Path(tempfile.mkdtemp()) / 'db.sqlite3'}"
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=tree, env=env, check=True)
    out = Path(tempfile.mkstemp(prefix="bench-peak-")[1])
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _PEAK_WRAPPER, str(out), "ingest", name, "--source", "kube"]
        + ["--kubeconfig", str(kubeconfig)],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    elapsed = time.perf_counter() - started
    return elapsed, int(out.read_text()) / 1024


def _cycle(items):  # type: ignore[no-untyped-def]
    while True:
        yield from items


def main() -> None:
    sys.path.insert(0, str(REPO))
    from bench.follow import baseline_tree, remove_tree

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one-shot", action="store_true", help="only part 4")
    parser.add_argument("--nodes", type=int, default=ONE_SHOT_NODES, help="part 4's nodes")
    parser.add_argument("--pods", type=int, default=ONE_SHOT_PODS, help="part 4's pods")
    parser.add_argument("--baseline-ref", default="", help="part 4 of this commit too")
    options = parser.parse_args()
    if not options.one_shot:
        _throughput()
    baseline = baseline_tree(options.baseline_ref) if options.baseline_ref else None
    try:
        trees = [baseline, REPO] if baseline else [REPO]
        runs, pod_bytes = bench_one_shot(options.nodes, options.pods, trees)
    finally:
        if baseline:
            remove_tree(baseline)
    for tree, (seconds, peak_mib) in zip(trees, runs, strict=True):
        which = f" (baseline {options.baseline_ref})" if tree != REPO else ""
        print(
            f"ingest one-shot{which} of {options.nodes} nodes / {options.pods} realistic pods "
            f"({pod_bytes:,} bytes of JSON each), SQLite, DEBUG on: {seconds:.1f} s, "
            f"peak RSS {peak_mib:.0f} MiB (target < 600 MiB)"
        )


def _throughput() -> None:
    rate = bench_watch()
    print(f"kube source watch: {WATCH_EVENTS} events, {rate:,.0f} events/s (target >= 2,000)")
    seconds, pods = bench_store()
    print(f"store snapshot: {STORE_NODES} nodes, {pods} pods in {seconds:.2f} s (target < 15 s)")
    seconds, pods = bench_store_objects()
    print(f"parse+store objects: {STORE_NODES} Nodes, {pods} Pods in {seconds:.2f} s")


if __name__ == "__main__":
    main()
