"""Kube ingest of a 2,000-node / 20,000-pod cluster: a one-shot `ingest` (wall time and
peak memory), what `ingest --follow` costs when nothing changes (CPU share of quiet
passes) and how long a change takes to reach the page (latency p50/p95), against a
baseline commit measured in the same run.

    python -m bench.follow [--nodes 2000] [--pods 20000] [--window 95] [--interval 30]
                           [--changes 20] [--baseline-ref REF] [--baseline-interval 5]
                           [--blocked]

A local list/watch server (tests/ingest/kubeserver.py, 127.0.0.1) serves the openb
trace's GPU nodes repeated (renamed) to ``--nodes``, ``--pods`` Running CPU pods bound
round-robin to them, and 200 Pending GPU pods from the trace (``--blocked``: the
blocked-heavy cluster of ``bench.blocked`` instead of the trace's nodes and pods, issue
41's "change to the page" target); it sends a BOOKMARK on
an idle watch once a minute, as kube-apiserver's watch cache does
(``staging/src/k8s.io/apiserver/pkg/storage/cacher``: bookmarks about every minute).
``manage.py ingest`` runs in a child process against it, with the real kubernetes
client, on DATABASE_URL:

1. one-shot: ``ingest NAME --source kube --kubeconfig K`` (list every kind, parse,
   store, evaluate): its wall time and its peak resident memory (``os.wait4``'s
   ``ru_maxrss`` of that child alone);
2. for this tree, then for ``--baseline-ref`` (checked out in a temporary git worktree,
   run with the same interpreter and database; skipped when that fails), one after
   the other so they never compete for the cores:
   a. quiet passes: ``ingest NAME2 --source kube --kubeconfig K --follow --interval I``
      after its first snapshot; its user + system CPU time over ``--window`` seconds
      with nothing changing, as a share of one core, and the passes that window held;
   b. change latency: ``--changes`` times, one object changes on the server (in turn: a
      Node's allocatable, a Pod added, that Pod's labels, a Running Pod deleted), and the
      seconds until the follower prints the new snapshot, which it does once its
      evaluation is stored and published (what the pages and the API show), are timed;
      median, p95 (nearest rank) and worst, and the follower's resident memory after.

Targets (issue 31): quiet passes < 2 % of a core, one-shot peak < 600 MB, a change
on the page within 10 s (p95).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from tests.ingest.kubeserver import KubeServer
PENDING_GPU_PODS = 200
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
BOOKMARK_EVERY_SECONDS = 60.0
SETTLE_SECONDS = 600.0
# Change numbers, never repeated within a run: each follower (this tree, the baseline)
# sees changes no other made before it on the same server, so each makes a new snapshot.
CHANGES = itertools.count()


def blocked_objects(nodes: int, pods: int) -> list[dict[str, Any]]:
    """The blocked-heavy kind (issue 41, ``bench.blocked``: ``nodes`` nodes of 8 H100
    with one seeded Running pod each, nodes / 4 pending over 800 shapes, about a fifth
    of them blocked), plus ``pods`` small Running pods bound round-robin (the ones the
    changes delete)."""
    from bench.blocked import blocked_export

    items = blocked_export(nodes, 800, nodes // 4, seed=1)["items"]
    names = [o["metadata"]["name"] for o in items if o["kind"] == "Node"]
    return [*items, *(_running_pod(i, names[i % len(names)]) for i in range(pods))]


def cluster_objects(nodes: int, pods: int) -> list[dict[str, Any]]:
    from tests.ingest.kubeobjects import openb_rows, trace_node_object, trace_pod_object

    rows = openb_rows("openb_node_list_gpu_node.csv", 10**6)
    node_objects = []
    for index in range(nodes):
        obj = trace_node_object(rows[index % len(rows)])
        name = f"{obj['metadata']['name']}-{index // len(rows)}"
        obj["metadata"]["name"] = name
        obj["metadata"]["labels"]["kubernetes.io/hostname"] = name
        node_objects.append(obj)
    running = [_running_pod(i, node_objects[i % nodes]["metadata"]["name"]) for i in range(pods)]
    pending = [
        trace_pod_object(r) for r in openb_rows("openb_pod_list_default.csv", PENDING_GPU_PODS)
    ]
    return [*node_objects, *running, *pending]


def _running_pod(index: int, node: str, prefix: str = "app") -> dict[str, Any]:
    requests = {"cpu": "100m", "memory": "128Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{index}", "namespace": f"team-{index % 20}"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "app", "image": "app", "resources": {"requests": requests}}],
        },
        "status": {"phase": "Running"},
    }


def one_shot(kubeconfig: Path, name: str) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one `manage.py ingest` child."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "manage.py", "ingest", name, "--source", "kube"]
        + ["--kubeconfig", str(kubeconfig)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"ingest exited with status {status}")
    return elapsed, usage.ru_maxrss / 1024


@dataclass
class FollowFigures:
    quiet_share_percent: float
    quiet_passes: int
    latencies_seconds: list[float]
    rss_mib: float


def follow(
    tree: Path, server: Any, kubeconfig: Path, options: argparse.Namespace, interval: int
) -> FollowFigures:
    """`ingest --follow` of ``tree`` (this repository or the baseline's worktree): its
    CPU share while nothing changes, then the latency of ``options.changes`` changes."""
    log = Path(tempfile.mkstemp(prefix="bench-follow-", suffix=".log")[1])
    name = f"bench-follow-{time.time_ns()}"
    with log.open("wb") as output:
        child = subprocess.Popen(
            [sys.executable, "manage.py", "ingest", name, "--source", "kube"]
            + ["--kubeconfig", str(kubeconfig), "--follow", "--interval", str(interval)],
            cwd=tree,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + SETTLE_SECONDS
        while ": unchanged" not in log.read_text():  # the first pass is a full list
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"ingest --follow did not settle:\n{log.read_text()}")
            time.sleep(0.5)
        before, passes_before = _cpu_seconds(child.pid), log.read_text().count(": unchanged")
        time.sleep(options.window)
        used = _cpu_seconds(child.pid) - before
        passes = log.read_text().count(": unchanged") - passes_before
        latencies = [_change_latency(server, log, next(CHANGES)) for _ in range(options.changes)]
        rss_mib = _rss_mib(child.pid)
    finally:
        child.terminate()
        try:
            child.wait(timeout=120)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=30)
    return FollowFigures(100.0 * used / options.window, passes, latencies, rss_mib)


def _change_latency(server: Any, log: Path, index: int) -> float:
    """Seconds from one change on the server to the follower's next snapshot (evaluated)."""
    time.sleep(1.0)  # the previous change's pass has ended: the follower waits
    stored = log.read_text().count(": snapshot ")
    started = time.monotonic()
    _change(server, index)
    while log.read_text().count(": snapshot ") == stored:
        if time.monotonic() - started > 300:
            raise SystemExit(f"no snapshot after a change:\n{log.read_text()}")
        time.sleep(0.05)
    return time.monotonic() - started


def _change(server: Any, index: int) -> None:
    """In turn: a Node's allocatable changes; a Pod is added; its labels change; one of
    the Running pods goes."""
    nodes = server.resources["Node"].items
    node_name = sorted(nodes)[index % len(nodes)]
    pod = _running_pod(index // 4, nodes[node_name]["metadata"]["name"], prefix="bench-change")
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    step = index % 4
    if step == 0:
        node = dict(nodes[node_name])
        status = dict(node["status"])
        status["allocatable"] = {**status["allocatable"], "pods": str(200 + index)}
        node["status"] = status
        server.put(node)
    elif step == 1:
        server.put(pod)
    elif step == 2:
        current = server.resources["Pod"].items[f"{namespace}/{name}"]
        server.put({**current, "metadata": {**current["metadata"], "labels": {"changed": "yes"}}})
    else:  # one of the cluster's own pods: never back to a state seen before
        gone = _running_pod(index, "", prefix="app")["metadata"]
        server.delete("Pod", gone["name"], gone["namespace"])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


def _report(label: str, figures: FollowFigures, options: argparse.Namespace, interval: int) -> None:
    print(
        f"follow quiet passes ({label}): {figures.quiet_share_percent:.1f} % of a core over "
        f"{options.window:.0f} s ({figures.quiet_passes} passes, --interval {interval})"
    )
    latencies = figures.latencies_seconds
    if latencies:
        print(
            f"follow change to the page ({label}): p50 {statistics.median(latencies):.1f} s, "
            f"p95 {_p95(latencies):.1f} s, worst {max(latencies):.1f} s over "
            f"{len(latencies)} changes (--interval {interval}); follower RSS "
            f"{figures.rss_mib:.0f} MiB"
        )


def baseline_tree(ref: str) -> Path | None:
    """A temporary git worktree of ``ref`` (detached), or None when git cannot make one."""
    path = Path(tempfile.mkdtemp(prefix="bench-baseline-")) / "tree"
    made = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ref],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        print(f"follow baseline {ref} skipped: {made.stderr.strip()}")
        return None
    return path


def remove_tree(path: Path) -> None:
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
        capture_output=True,
    )


@contextmanager
def served_cluster(
    nodes: int, pods: int, blocked: bool = False
) -> Iterator[tuple[KubeServer, Path]]:
    """The local list/watch server (127.0.0.1) holding ``cluster_objects(nodes, pods)``
    (``blocked_objects`` with ``blocked``) and a kubeconfig for it; the server stops
    when the block ends."""
    from tests.ingest.kubeserver import KubeServer

    server = KubeServer()
    server.bookmark_every_seconds = BOOKMARK_EVERY_SECONDS
    server.start()
    try:
        objects = blocked_objects if blocked else cluster_objects
        server.put_many(objects(nodes, pods))
        yield server, server.kubeconfig(Path(tempfile.mkdtemp()) / "kubeconfig")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--window", type=float, default=95.0)
    parser.add_argument("--interval", type=int, default=30)
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--baseline-ref", default="", help="commit to compare with")
    parser.add_argument("--baseline-interval", type=int, default=5)
    parser.add_argument(
        "--blocked", action="store_true", help="the blocked-heavy kind of bench.blocked"
    )
    options = parser.parse_args()
    if not os.environ.get("DATABASE_URL"):
        raise SystemExit("bench.follow needs DATABASE_URL (Postgres)")
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=REPO, check=True)

    with served_cluster(options.nodes, options.pods, options.blocked) as (server, kubeconfig):
        seconds, peak_mib = one_shot(kubeconfig, f"bench-follow-{time.time_ns()}")
        kind = (
            f"blocked-heavy, {options.nodes // 4} pending"
            if options.blocked
            else (f"{PENDING_GPU_PODS} pending")
        )
        print(
            f"follow one-shot ingest of {options.nodes} nodes / {options.pods} running pods "
            f"({kind}): {seconds:.1f} s, peak RSS {peak_mib:.0f} MiB"
        )
        figures = follow(REPO, server, kubeconfig, options, options.interval)
        _report("this tree", figures, options, options.interval)
        tree = baseline_tree(options.baseline_ref) if options.baseline_ref else None
        if tree is not None:
            try:
                interval = options.baseline_interval
                baseline = follow(tree, server, kubeconfig, options, interval)
                _report(f"baseline {options.baseline_ref}", baseline, options, interval)
            finally:
                remove_tree(tree)


if __name__ == "__main__":
    main()
