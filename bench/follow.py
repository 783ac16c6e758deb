"""Kube ingest of a 2,000-node / 20,000-pod cluster: a one-shot `ingest` (wall time and
peak memory) and what `ingest --follow` costs when nothing changes (CPU per quiet pass).

    python -m bench.follow [--nodes 2000] [--pods 20000] [--window 95] [--interval 30]

A local list/watch server (tests/ingest/kubeserver.py, 127.0.0.1) serves the openb
trace's GPU nodes repeated (renamed) to ``--nodes``, ``--pods`` Running CPU pods bound
round-robin to them, and 200 Pending GPU pods from the trace. ``manage.py ingest`` runs
in a child process against it, with the real kubernetes client, on DATABASE_URL:

1. one-shot: ``ingest NAME --source kube --kubeconfig K`` (list every kind, parse,
   store, evaluate): its wall time and its peak resident memory (``os.wait4``'s
   ``ru_maxrss`` of that child alone);
2. quiet passes: ``ingest NAME --follow --interval I`` after its first snapshot; its
   user + system CPU time over ``--window`` seconds with nothing changing, as a share
   of one core, and the passes that window held;
3. change latency: then ``--changes`` times, one Node's allocatable changes on the
   server, and the seconds until the follower prints the new snapshot, which it does
   once its evaluation is stored (what the pages show), are timed; median and worst.

Targets (issue 31): quiet passes < 2 % of a core, one-shot peak < 600 MB, a change
stored within 10 s (p95).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PENDING_GPU_PODS = 200
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


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


def _running_pod(index: int, node: str) -> dict[str, Any]:
    requests = {"cpu": "100m", "memory": "128Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"app-{index}", "namespace": f"team-{index % 20}"},
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


def follow(
    server: Any, name: str, window_seconds: float, interval_seconds: int, changes: int
) -> tuple[float, int, list[float]]:
    """Share of one core (%) `ingest --follow` uses while nothing changes, its passes,
    then the latency of ``changes`` changes."""
    log = Path(tempfile.mkstemp(prefix="bench-follow-", suffix=".log")[1])
    with log.open("wb") as output:
        child = subprocess.Popen(
            [sys.executable, "manage.py", "ingest", name, "--follow"]
            + ["--interval", str(interval_seconds)],
            cwd=REPO,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 300
        while ": unchanged" not in log.read_text():  # the first pass is a full list
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"ingest --follow did not settle:\n{log.read_text()}")
            time.sleep(0.5)
        before, passes_before = _cpu_seconds(child.pid), log.read_text().count(": unchanged")
        time.sleep(window_seconds)
        used = _cpu_seconds(child.pid) - before
        passes = log.read_text().count(": unchanged") - passes_before
        latencies = [_change_latency(server, log, index) for index in range(changes)]
    finally:
        child.terminate()
        child.wait(timeout=30)
    return 100.0 * used / window_seconds, passes, latencies


def _change_latency(server: Any, log: Path, index: int) -> float:
    """Seconds from one Node changing on the server to the follower's next snapshot."""
    stored = log.read_text().count(": snapshot ")
    node = dict(next(iter(server.resources["Node"].items.values())))
    status = dict(node["status"])
    status["allocatable"] = {**status["allocatable"], "pods": str(200 + index)}
    node["status"] = status
    started = time.monotonic()
    server.put(node)
    while log.read_text().count(": snapshot ") == stored:
        if time.monotonic() - started > 300:
            raise SystemExit(f"no snapshot after a change:\n{log.read_text()}")
        time.sleep(0.1)
    return time.monotonic() - started


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--window", type=float, default=95.0)
    parser.add_argument("--interval", type=int, default=30)
    parser.add_argument("--changes", type=int, default=5)
    options = parser.parse_args()
    if not os.environ.get("DATABASE_URL"):
        raise SystemExit("bench.follow needs DATABASE_URL (Postgres)")
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=REPO, check=True)

    from tests.ingest.kubeserver import KubeServer

    server = KubeServer().start()
    try:
        server.put_many(cluster_objects(options.nodes, options.pods))
        kubeconfig = server.kubeconfig(Path(tempfile.mkdtemp()) / "kubeconfig")
        name = f"bench-follow-{time.time_ns()}"
        seconds, peak_mib = one_shot(kubeconfig, name)
        print(
            f"follow one-shot ingest of {options.nodes} nodes / {options.pods} + "
            f"{PENDING_GPU_PODS} pods: {seconds:.1f} s, peak RSS {peak_mib:.0f} MiB"
        )
        share, passes, latencies = follow(
            server, name, options.window, options.interval, options.changes
        )
        print(
            f"follow quiet passes: {share:.1f} % of a core over {options.window:.0f} s "
            f"({passes} passes, --interval {options.interval})"
        )
        if latencies:
            print(
                f"follow change to stored snapshot: median {statistics.median(latencies):.1f} s, "
                f"worst {max(latencies):.1f} s over {len(latencies)} changes "
                f"(--interval {options.interval})"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
