"""A fleet (issue 41 item 5): several clusters' evaluations on 1, then 2 Celery worker
processes sharing one Postgres and one Redis.

::

    bench ─► fresh database on DATABASE_URL's server ─► migrate
          ─► CLUSTERS blocked-heavy exports (bench.blocked, seeds 1..CLUSTERS) ingested
          ─► per worker count W (1, 2): W × ``celery -A capacityweb worker -Q celery -c 1``
             started and each snapshot's evaluate task sent, timed until every cluster's
             critical pass is stored ("verdicts") and until every deferred part is in too
             ("whole"); the workers' CPU (their process
             trees) and their peak RSS; the workers stopped, the evaluations deleted and the
             evaluate tasks sent again for the next W
          ─► the database is dropped

Each worker is one process (``-c 1``), as a worker machine of one core would run: with
W workers W clusters are evaluated at once. The evaluation task keeps its critical pass
for the deferred parts that follow it (``recommender.parts``); a part picked up by the
other worker runs the critical pass again, which the CPU per cluster shows.

    DATABASE_URL=postgres://… REDIS_URL=redis://… python -m bench.fleet
        [--clusters 8] [--nodes 2000] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.http import (
    REPO_ROOT,
    _admin,
    _run,
    process_tree_cpu_seconds,
    required_environment,
    with_database,
)
from bench.whatif_load import tree_rss_mb

LIMIT_SECONDS = 3600.0
LOAD = """
import json, sys, django
django.setup()
from pathlib import Path
from django.utils.dateparse import parse_datetime
from bench.blocked import AT, blocked_export
from topology import services
from topology.ingest.files import read_objects
from topology.models import Cluster
clusters, nodes, directory = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
for index in range(1, clusters + 1):
    path = directory / f"fleet-{index}.json"
    path.write_text(json.dumps(blocked_export(nodes, 800, nodes // 4, index)))
    cluster = Cluster.objects.create(name=f"fleet-{index}", source_kind="files",
        source_settings={})
    services.ingest_snapshot(cluster=cluster, taken_at=parse_datetime(AT),
        objects=read_objects(path))
    path.unlink()
print(json.dumps({"clusters": Cluster.objects.count()}))
"""
AGAIN = """
import django
django.setup()
from recommender.models import Evaluation
from recommender.tasks import evaluate_snapshot
from topology.models import Snapshot
Evaluation.objects.all().delete()  # a snapshot with an evaluation is not evaluated again
for snapshot in Snapshot.objects.all():
    evaluate_snapshot.delay(snapshot.pk)
"""


def progress(environment: dict[str, str]) -> dict[str, int]:
    """Evaluations stored, those whole (every part stored or failed), parts failed: one
    query, not a Django process (polled twice a second on the cores the workers use)."""
    import psycopg

    with psycopg.connect(environment["DATABASE_URL"]) as connection:
        rows = connection.execute("SELECT missing, parts_failed FROM recommender_evaluation")
        found = [(set(missing or ()), set(failed or {})) for missing, failed in rows]
    return {
        "stored": len(found),
        "whole": sum(1 for missing, failed in found if missing <= failed),
        "failed": sum(len(failed) for _missing, failed in found),
    }


def run_workers(environment: dict[str, str], workers: int, clusters: int) -> dict[str, Any]:
    """Start ``workers`` one-process workers; time them until every evaluation is whole."""
    celery = Path(sys.executable).with_name("celery")
    processes, logs = [], []
    started = time.monotonic()
    for index in range(workers):
        log = Path(tempfile.mkstemp(prefix=f"capacityweb-bench-fleet-{index}-", suffix=".log")[1])
        with log.open("wb") as out:
            command = [str(celery), "-A", "capacityweb", "worker", "-Q", "celery", "-c", "1"]
            name = ["-n", f"fleet{index}-{secrets.token_hex(3)}@%h", "--loglevel", "WARNING"]
            processes.append(
                subprocess.Popen(
                    [*command, *name], cwd=REPO_ROOT, env=environment, stdout=out, stderr=out
                )
            )
        logs.append(log)
    verdicts_at = whole_at = None
    peak_rss = [0.0] * workers
    try:
        while time.monotonic() - started < LIMIT_SECONDS:
            for index, process in enumerate(processes):
                if process.poll() is not None:
                    raise RuntimeError(f"worker {index} exited:\n{logs[index].read_text()[-3000:]}")
                peak_rss[index] = max(peak_rss[index], sum(tree_rss_mb(process.pid).values()))
            state = progress(environment)
            now = time.monotonic() - started
            if verdicts_at is None and state["stored"] >= clusters:
                verdicts_at = now
            if state["whole"] >= clusters:
                whole_at = now
                break
            time.sleep(0.5)
        cpu = [process_tree_cpu_seconds(p.pid) for p in processes]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=120)
        for log in logs:
            log.unlink(missing_ok=True)
    return {
        "workers": workers,
        "clusters": clusters,
        "verdictsSeconds": verdicts_at,
        "wholeSeconds": whole_at,
        "partsFailed": state["failed"],
        "cpuSeconds": sum(cpu),
        "cpuPerCluster": sum(cpu) / clusters,
        "peakRssMb": [round(r) for r in peak_rss],
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--nodes", type=int, default=2000, help="nodes per cluster")
    parser.add_argument("--workers", default="1,2", help="worker counts, one run each")
    args = parser.parse_args(argv)
    database_url, redis_url = required_environment()
    name = f"capacityweb_bench_fleet_{os.getpid()}"
    _admin(database_url, f"CREATE DATABASE {name}")
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "capacityweb.settings",
        "DATABASE_URL": with_database(database_url, name),
        "REDIS_URL": redis_url,
        "EMBEDDED_WORKER": "false",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "LOG_LEVEL": "WARNING",
    }
    results = []
    try:
        _run([sys.executable, "manage.py", "migrate", "--noinput"], environment)
        with tempfile.TemporaryDirectory(prefix="capacityweb-fleet-") as directory:
            load = [sys.executable, "-c", LOAD, str(args.clusters), str(args.nodes), directory]
            _run(load, environment, timeout=LIMIT_SECONDS)
        for workers in (int(w) for w in args.workers.split(",")):
            # the evaluate tasks, sent afresh (an ingest outside the ingest task sends none)
            _run([sys.executable, "-c", AGAIN], environment)
            result = {"nodes": args.nodes, **run_workers(environment, workers, args.clusters)}
            results.append(result)
            print(json.dumps(result), flush=True)
    finally:
        _admin(database_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    for result in results:
        print(
            f"fleet {result['clusters']} clusters x {result['nodes']} nodes on "
            f"{result['workers']} worker process(es): verdicts of all in "
            f"{result['verdictsSeconds']:.1f} s, whole answers in {result['wholeSeconds']:.1f} s "
            f"wall; worker CPU {result['cpuPerCluster']:.1f} s per cluster; peak RSS per "
            f"worker {result['peakRssMb']} MB; parts failed {result['partsFailed']}",
            flush=True,
        )
    return results


if __name__ == "__main__":
    main()
