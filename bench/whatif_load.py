"""The what-if load (issue 41): one user's parallel what-ifs against a real web tier and a
real worker, and what the other users see meanwhile.

::

    bench ─► fresh database on DATABASE_URL's server ─► migrate ─► load_demo (the openb demo,
          evaluated whole), users "asker" (a token) and "other" (a session)
          ─► manage.py serve (Uvicorn, 2 workers, as deployed) + one Celery worker
             (-Q what-if, 1 process) on REDIS_URL
          ─► idle: /health/live and the other user's pending page probed (the baseline)
          ─► load: "asker" keeps CLIENTS what-ifs going at once for SECONDS (POST
             /api/v1/what-if/ with a blocked workload's first relaxation; on 202 it polls
             the request until done or failed, on 429/503 it waits Retry-After), while
             /health/live and the other user's page are probed as before
          ─► p50/p99 of both probes idle and under load, the answers' states and times
             (request to done, queue included), the web processes' RSS before, after the
             load and after the what-ifs settled; the database is dropped

Targets (issue 41): /health/live p99 < 100 ms, the other user's page p99 < 1 s, web RSS
flat (the what-if never runs in a web process). Only 127.0.0.1.

    DATABASE_URL=postgres://… REDIS_URL=redis://… python -m bench.whatif_load
        [--clients 16] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

from bench.http import REPO_ROOT, bench_site, percentile

HEALTH_TARGET_MS = 100.0
PAGE_TARGET_MS = 1000.0
PROBE_INTERVAL_SECONDS = 0.1
LOAD = """
import json, django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from capacityweb.demo import load_demo
from recommender.models import WorkloadVerdict
cluster, evaluation = load_demo(now=timezone.now())
edits = [
    (row.workload, relaxation["edit"])
    for row in WorkloadVerdict.objects.filter(evaluation=evaluation, verdict="blocked")
    for relaxation in row.relaxations or []
    if relaxation.get("kind") not in ("not-searched", "order")
]
asker = User.objects.create_user("asker", is_staff=True)
other = User.objects.create_user("other", is_staff=True)
client = Client()
client.force_login(other)
print(json.dumps({"cluster": cluster.pk, "evaluation": evaluation.pk,
    "session": client.cookies["sessionid"].value, "token": Token.objects.create(user=asker).key,
    "extra": {"workload": edits[0][0], "edit": edits[0][1]}}))
"""


def tree_rss_mb(pid: int) -> dict[int, float]:
    """pid → resident MB of a process and its descendants (Linux /proc)."""
    sizes, pending = {}, [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    sizes[current] = int(line.split()[1]) / 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return sizes


async def probe(
    http: aiohttp.ClientSession, url: str, headers: dict[str, str], until: float
) -> tuple[list[float], int]:
    """GET ``url`` every PROBE_INTERVAL_SECONDS (one at a time) until ``until``."""
    latencies, failures = [], 0
    while time.monotonic() < until:
        started = time.perf_counter()
        async with http.get(url, headers=headers, allow_redirects=False) as response:
            await response.read()
            failures += response.status != 200
        latencies.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(PROBE_INTERVAL_SECONDS)
    return sorted(latencies), failures


async def asker(
    http: aiohttp.ClientSession, base: str, token: str, body: dict[str, Any], until: float
) -> dict[str, Any]:
    """One of the user's parallel what-ifs, again and again until ``until``."""
    headers = {"Authorization": f"Token {token}"}
    statuses: Counter[str] = Counter()
    answers: list[tuple[str, float]] = []
    while time.monotonic() < until:
        started = time.monotonic()
        async with http.post(f"{base}/api/v1/what-if/", json=body, headers=headers) as response:
            statuses[str(response.status)] += 1
            payload = await response.json()
            retry = float(response.headers.get("Retry-After") or 1)
        if response.status != 202:
            await asyncio.sleep(min(retry, 2.0))
            continue
        state = payload["state"]
        while state in ("queued", "working"):
            await asyncio.sleep(0.5)
            async with http.get(base + payload["url"], headers=headers) as response:
                state = (await response.json())["state"]
        answers.append((state, time.monotonic() - started))
    return {"statuses": statuses, "answers": answers}


async def measure(site: Any, clients: int, seconds: float, idle_seconds: float) -> dict[str, Any]:
    session = {"Cookie": f"sessionid={site.session}"}
    health = f"{site.base_url}/health/live"
    page = f"{site.base_url}/clusters/{site.cluster}/pending/"
    body = {"cluster": site.cluster, "workload": site.extra["workload"], **site.extra["edit"]}
    timeout = aiohttp.ClientTimeout(total=seconds + 120)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        await probe(http, page, session, time.monotonic() + 1)  # warm
        until = time.monotonic() + idle_seconds
        idle_health, idle_page = await asyncio.gather(
            probe(http, health, {}, until), probe(http, page, session, until)
        )
        rss_before = tree_rss_mb(site.server_pid)
        until = time.monotonic() + seconds
        started = time.monotonic()
        load_health, load_page, *askers = await asyncio.gather(
            probe(http, health, {}, until),
            probe(http, page, session, until),
            *(asker(http, site.base_url, site.token, body, until) for _ in range(clients)),
        )
        elapsed = time.monotonic() - started
        rss_after = tree_rss_mb(site.server_pid)
        await asyncio.sleep(5)
        rss_settled = tree_rss_mb(site.server_pid)
    statuses: Counter[str] = Counter()
    for one in askers:
        statuses.update(one["statuses"])
    answers = [a for one in askers for a in one["answers"]]
    done = sorted(seconds for state, seconds in answers if state == "done")

    def figures(latencies: list[float], failures: int) -> dict[str, Any]:
        return {
            "requests": len(latencies),
            "non200": failures,
            "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99),
            "max": latencies[-1],
        }

    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "idle": {"health": figures(*idle_health), "page": figures(*idle_page)},
        "load": {"health": figures(*load_health), "page": figures(*load_page)},
        "posts": dict(statuses),
        "answers": dict(Counter(state for state, _ in answers)),
        "doneSeconds": {"p50": percentile(done, 50), "max": done[-1]} if done else None,
        "webRssMb": {
            "before": round(sum(rss_before.values())),
            "after": round(sum(rss_after.values())),
            "settled": round(sum(rss_settled.values())),
            "perProcessBefore": sorted(round(v) for v in rss_before.values()),
            "perProcessSettled": sorted(round(v) for v in rss_settled.values()),
        },
    }


def start_worker(environment: dict[str, str]) -> tuple[subprocess.Popen[bytes], Path]:
    """One Celery worker on the what-if queue, one pool process; returns once it is ready."""
    log_path = Path(tempfile.mkstemp(prefix="capacityweb-bench-worker-", suffix=".log")[1])
    celery = Path(sys.executable).with_name("celery")
    command = [str(celery), "-A", "capacityweb", "worker", "-Q", "what-if", "-c", "1"]
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            [*command, "--loglevel", "INFO"],
            cwd=REPO_ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 90
    while "ready." not in log_path.read_text(errors="replace"):
        if worker.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the worker did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.2)
    return worker, log_path


def summary(result: dict[str, Any]) -> list[str]:
    load, idle, rss = result["load"], result["idle"], result["webRssMb"]
    health_ok = "ok" if load["health"]["p99"] < HEALTH_TARGET_MS else "over"
    page_ok = "ok" if load["page"]["p99"] < PAGE_TARGET_MS else "over"
    done = result["doneSeconds"] or {"p50": float("nan"), "max": float("nan")}
    return [
        f"whatif_load {result['clients']} parallel what-ifs of one user for "
        f"{result['seconds']} s: posts {result['posts']}, answers {result['answers']} "
        f"(done after p50 {done['p50']:.1f} s, max {done['max']:.1f} s, queue included)",
        f"whatif_load /health/live p50 {load['health']['p50']:.1f} p99 {load['health']['p99']:.1f} "
        f"ms under load (idle p99 {idle['health']['p99']:.1f} ms), target < "
        f"{HEALTH_TARGET_MS:.0f} ms: {health_ok}",
        f"whatif_load other user's pending page p50 {load['page']['p50']:.0f} p99 "
        f"{load['page']['p99']:.0f} ms under load (idle p99 {idle['page']['p99']:.0f} ms), "
        f"target < {PAGE_TARGET_MS:.0f} ms: {page_ok}",
        f"whatif_load web RSS {rss['before']} MB before, {rss['after']} MB after the load, "
        f"{rss['settled']} MB settled (per process {rss['perProcessBefore']} -> "
        f"{rss['perProcessSettled']})",
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16, help="what-ifs of one user at once")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load lasts")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="the baseline's length")
    args = parser.parse_args(argv)
    with bench_site(nodes=0, load=LOAD) as site:
        worker, worker_log = start_worker(site.environment)
        try:
            result = asyncio.run(measure(site, args.clients, args.seconds, args.idle_seconds))
        finally:
            worker.terminate()
            worker.wait(timeout=60)
            worker_log.unlink(missing_ok=True)
    print(json.dumps(result), flush=True)
    print("\n".join(summary(result)), flush=True)
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
