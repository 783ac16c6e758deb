"""HTTP latency of the report pages and endpoints under concurrent clients.

::

    bench ─► fresh database capacityweb_bench_<pid> on DATABASE_URL's server ─► migrate
          ─► load: bench.synth cluster (1k nodes) ingested + evaluated + published, a user, a token
          ─► manage.py serve (Uvicorn, --workers N, as compose's web service; --server
             daphne: the single Daphne process measured before) on 127.0.0.1:<free port>
          ─► asyncio/aiohttp clients: 10 / 50 / 100 at once; each opens its connection
             with a first request (timed apart: "first"), then 10 requests, each timed
          ─► p50/p95/p99 per endpoint and concurrency; the database is dropped

Endpoints: the overview page, the topology heatmap data (JSON), the idle
reservations report (API, token auth). ``/health/live`` is the baseline
measured in the same run (the ratio column). Every load loop is bounded by a
request count and a wall-clock limit. Only 127.0.0.1.

    DATABASE_URL=postgres://… REDIS_URL=redis://… python -m bench.http [--nodes 1000]
        [--server serve|daphne] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

REPO_ROOT = Path(__file__).resolve().parents[1]
CONCURRENCY = (10, 50, 100)
REQUESTS_PER_CLIENT = 10
LIMIT_SECONDS_PER_RUN = 60.0
TARGET_P99_MS = 200.0
DEFAULT_WORKERS = 2
LOAD = """
import json, sys, django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from bench.synth import AT, synthetic_cluster
from recommender import events
from recommender.services import store_evaluation
from topology import services
from topology.models import Cluster
nodes = int(sys.argv[1])
cluster = Cluster.objects.create(name="bench", source_kind="files", source_settings={})
snapshot = services.ingest_snapshot(cluster=cluster, taken_at=AT, model=synthetic_cluster(nodes))
evaluation = store_evaluation(snapshot=snapshot)
events.publish_evaluation(evaluation)  # as the evaluate task does (warms the heatmap)
user = User.objects.create_user("bench", is_staff=True)  # no password: force_login
client = Client()
client.force_login(user)
print(json.dumps({"cluster": cluster.pk, "evaluation": evaluation.pk,
    "session": client.cookies["sessionid"].value, "token": Token.objects.create(user=user).key}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def required_environment() -> tuple[str, str]:
    database_url, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not database_url.startswith(("postgres://", "postgresql://")) or not redis_url:
        sys.exit("bench.http/bench.fanout need DATABASE_URL (Postgres) and REDIS_URL (see .ci/run)")
    return database_url, redis_url


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


@dataclass
class BenchSite:
    """A migrated, loaded database and a web server in front of it."""

    base_url: str
    environment: dict[str, str]
    cluster: int
    evaluation: int
    session: str
    token: str
    server_log: Path
    server_pid: int
    extra: dict[str, Any] = field(default_factory=dict)  # what a benchmark's own load printed


def process_tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and all its descendants so far (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited meanwhile
    return total


def _admin(database_url: str, sql: str) -> None:
    import psycopg

    maintenance = with_database(database_url, "postgres")  # the URL's own database may not exist
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(sql)


def _run(arguments: list[str], environment: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(
        arguments, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"{arguments[:3]} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _wait_for_http(url: str, server: subprocess.Popen[bytes], limit_seconds: float = 60) -> None:
    import urllib.request

    deadline = time.monotonic() + limit_seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the web server exited {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310 - 127.0.0.1
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the web server did not answer {url}")


def server_command(server_kind: str, port: int, workers: int) -> list[str]:
    """``serve``: the production web tier (manage.py serve, Uvicorn workers); ``daphne``: the
    single Daphne process measured before it, kept for comparisons in one run."""
    if server_kind == "daphne":
        daphne = Path(sys.executable).with_name("daphne")
        return [str(daphne), "-b", "127.0.0.1", "-p", str(port), "capacityweb.asgi:application"]
    return [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", str(workers)]


def _wait_for_workers(log_path: Path, server: subprocess.Popen[bytes], workers: int) -> None:
    """Until each Uvicorn worker has loaded Django (it logs "Started server process")."""
    deadline = time.monotonic() + 60
    while log_path.read_text(errors="replace").count("Started server process") < workers:
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"web workers did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.1)


@contextmanager
def bench_site(
    *,
    nodes: int,
    redis_url: str | None = None,
    server_kind: str = "serve",
    workers: int = DEFAULT_WORKERS,
    load: str = LOAD,
    **extra: str,
) -> Iterator[BenchSite]:
    """Database + data + web server for one benchmark; everything removed afterwards.
    ``load``: the script that fills the database (its last line: the BenchSite fields)."""
    database_url, default_redis = required_environment()
    name = f"capacityweb_bench_{os.getpid()}"
    _admin(database_url, f"CREATE DATABASE {name}")
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "capacityweb.settings",
        "DATABASE_URL": with_database(database_url, name),
        "REDIS_URL": redis_url or default_redis,
        "EMBEDDED_WORKER": "false",
        # The web service's settings in compose.yaml (no debug, a connection pool per
        # process) over plain HTTP: TLS and its redirect are a proxy's job in front of it.
        "DEBUG": "false",
        "DATABASE_POOL": "true",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "SECURE_SSL_REDIRECT": "false",
        "LOG_LEVEL": "WARNING",
        "THROTTLE_RATE_REPORTS": "100000000/minute",
        **extra,
    }
    server = None
    try:
        _run([sys.executable, "manage.py", "migrate", "--noinput"], environment)
        output = _run([sys.executable, "-c", load, str(nodes)], environment)
        loaded = json.loads(output.strip().splitlines()[-1])
        port = free_port()
        server_log = Path(tempfile.mkstemp(prefix="capacityweb-bench-web-", suffix=".log")[1])
        with server_log.open("wb") as log:
            server = subprocess.Popen(
                server_command(server_kind, port, workers),
                cwd=REPO_ROOT,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        base_url = f"http://127.0.0.1:{port}"
        _wait_for_http(f"{base_url}/health/live", server)
        _wait_for_workers(server_log, server, workers if server_kind == "serve" else 0)
        yield BenchSite(
            base_url, environment, **loaded, server_log=server_log, server_pid=server.pid
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        _admin(database_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def endpoints(site: BenchSite) -> dict[str, tuple[str, dict[str, str]]]:
    session = {"Cookie": f"sessionid={site.session}"}
    token = {"Authorization": f"Token {site.token}"}
    window = "start=2026-12-01T00:00:00Z&end=2026-12-03T00:00:00Z"
    report = f"/api/v1/reports/idle-reservations/?{window}"
    return {
        "baseline /health/live": ("/health/live", {}),
        "overview page": (f"/?cluster={site.cluster}", session),
        "heatmap data": (f"/clusters/{site.cluster}/topology/data.json", session),
        "idle report API": (report, token),
    }


async def _client(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str], count: int, deadline: float
) -> tuple[list[float], int]:
    latencies, failures = [], 0
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        async with http.get(url, headers=headers, allow_redirects=False) as response:
            await response.read()
            if response.status != 200:
                failures += 1
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies, failures


async def load(
    url: str, headers: dict[str, str], clients: int, server_pid: int | None = None
) -> dict[str, Any]:
    """``clients`` concurrent clients, REQUESTS_PER_CLIENT requests each, bounded in time.

    Each client first opens its keep-alive connection with one request, all at once:
    those first requests (TCP connect and accept included) are timed apart
    (``firstP99``), so the percentiles are of requests on open connections, as a
    dashboard's users and a proxy in front keep them. With ``server_pid``, also the
    server's CPU time per request (all its processes): with the load generator on the
    same cores, throughput — hence latency under a closed loop — is bound by it.
    """
    deadline = time.monotonic() + LIMIT_SECONDS_PER_RUN
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=LIMIT_SECONDS_PER_RUN)
    # Bodies are read as sent: the heatmap comes gzipped (aiohttp asks for gzip, as a browser
    # does) and is not inflated here, where it would take this machine's CPU from the server.
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, auto_decompress=False
    ) as http:
        await _client(http, url, headers, 1, deadline)  # warm the server's caches once
        firsts = await asyncio.gather(
            *(_client(http, url, headers, 1, deadline) for _ in range(clients))
        )
        cpu_before = process_tree_cpu_seconds(server_pid) if server_pid else 0.0
        client_cpu_before = time.process_time()
        started = time.monotonic()
        runs = await asyncio.gather(
            *(_client(http, url, headers, REQUESTS_PER_CLIENT, deadline) for _ in range(clients))
        )
        elapsed = time.monotonic() - started
        cpu = process_tree_cpu_seconds(server_pid) - cpu_before if server_pid else 0.0
        client_cpu = time.process_time() - client_cpu_before
    latencies = sorted(ms for run, _ in runs for ms in run)
    return {
        "requestsPerSecond": len(latencies) / elapsed,
        "serverCpuMsPerRequest": 1000 * cpu / len(latencies) if server_pid else None,
        "clientCpuMsPerRequest": 1000 * client_cpu / len(latencies),
        "requests": len(latencies),
        "non200": sum(failures for _, failures in [*runs, *firsts]),
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "mean": statistics.fmean(latencies),
        "firstP99": percentile(sorted(ms for run, _ in firsts for ms in run), 99),
    }


def percentile(sorted_values: list[float], p: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(p / 100 * len(sorted_values)) - 1))
    return sorted_values[index]


def run(nodes: int, server_kind: str = "serve", workers: int = DEFAULT_WORKERS) -> dict[str, Any]:
    rows = []
    with bench_site(nodes=nodes, server_kind=server_kind, workers=workers) as site:
        for name, (path, headers) in endpoints(site).items():
            for clients in CONCURRENCY:
                row = {"endpoint": name, "clients": clients}
                row.update(
                    asyncio.run(load(site.base_url + path, headers, clients, site.server_pid))
                )
                rows.append(row)
                print(json.dumps(row), flush=True)
    baseline = {r["clients"]: r["p99"] for r in rows if r["endpoint"].startswith("baseline")}
    for row in rows:
        row["p99VsBaseline"] = row["p99"] / baseline[row["clients"]]
    return {"nodes": nodes, "server": server_kind, "workers": workers, "rows": rows}


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        choices=("serve", "daphne"),
        default="serve",
        help="serve: manage.py serve (Uvicorn workers, as deployed); daphne: one Daphne process",
    )
    parser.add_argument(
        "--workers", type=int, default=DEFAULT_WORKERS, help="worker processes of serve"
    )


def summary(result: dict[str, Any]) -> list[str]:
    lines = []
    for row in result["rows"]:
        verdict = ""
        if row["clients"] == 50 and not row["endpoint"].startswith("baseline"):
            verdict = "  ok" if row["p99"] < TARGET_P99_MS else f"  over {TARGET_P99_MS:.0f} ms"
        lines.append(
            f"http {row['endpoint']:<22} {row['clients']:>3} clients: p50 {row['p50']:6.1f} "
            f"p95 {row['p95']:6.1f} p99 {row['p99']:6.1f} ms (x{row['p99VsBaseline']:.1f} "
            f"baseline; first requests p99 {row['firstP99']:.0f} ms), {row['requests']} req, "
            f"{row['requestsPerSecond']:.0f} req/s, "
            f"server CPU {row['serverCpuMsPerRequest']:.1f} ms/req, "
            f"load generator CPU {row['clientCpuMsPerRequest']:.1f} ms/req, "
            f"{row['non200']} non-200{verdict}"
        )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="synthetic cluster size")
    add_server_arguments(parser)
    args = parser.parse_args(argv)
    workers = f" ({args.workers} workers)" if args.server == "serve" else ""
    print(f"http: {args.server}{workers}", flush=True)
    result = run(args.nodes, args.server, args.workers)
    print("\n".join(summary(result)))
    return result


if __name__ == "__main__":
    main()
