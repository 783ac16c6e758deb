"""WebSocket fan-out: one published evaluation reaching 100 / 200 / 500 live browsers.

::

    N aiohttp clients ─ws─► manage.py serve (Uvicorn workers) ─► ClusterConsumer ─► group
    bench: recommender.events.publish_evaluation(e) ─► channels_redis ─► each worker
                                                     ─► its consumers

Each client connects (25 handshakes in flight at most) with a session cookie
and an allowed Origin, reads the
three snapshot messages, then waits for the three messages of the published
evaluation. Reported: time from the publish call until each client has all
three (p50/p99/max = "until the last client has it") and clients that did not
within the timeout (lost). The baseline in the same run is one client.
Bounded: connects and waits each have a wall-clock limit. Only 127.0.0.1.

    DATABASE_URL=postgres://… REDIS_URL=redis://… python -m bench.fanout [--clients 100,200,500]
        [--server serve|daphne] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

import aiohttp

from bench.http import DEFAULT_WORKERS, BenchSite, add_server_arguments, bench_site, percentile

MESSAGES_PER_EVALUATION = 3
CONNECT_LIMIT_SECONDS = 60.0
DELIVERY_LIMIT_SECONDS = 10.0
TARGET_P99_SECONDS = 1.0
CONNECTS_AT_ONCE = 25  # Daphne's listen backlog is 50: browsers arrive spread out, not at once


async def _receive(socket: aiohttp.ClientWebSocketResponse, count: int, limit: float) -> bool:
    try:
        for _ in range(count):
            message = await asyncio.wait_for(socket.receive(), limit)
            if message.type != aiohttp.WSMsgType.TEXT:
                return False
    except TimeoutError:
        return False
    return True


async def _connect(http: aiohttp.ClientSession, site: BenchSite) -> aiohttp.ClientWebSocketResponse:
    url = site.base_url.replace("http://", "ws://") + f"/ws/clusters/{site.cluster}/"
    headers = {"Origin": "http://127.0.0.1", "Cookie": f"sessionid={site.session}"}
    socket = await http.ws_connect(url, headers=headers)
    if not await _receive(socket, MESSAGES_PER_EVALUATION, CONNECT_LIMIT_SECONDS):
        raise RuntimeError("a client got no snapshot on connect")
    return socket


def _evaluation(site: BenchSite) -> Any:
    from recommender.models import Evaluation

    return Evaluation.objects.get(pk=site.evaluation)


def _publish(evaluation: Any) -> None:
    from recommender import events

    events.publish_evaluation(evaluation)


async def fan_out(site: BenchSite, clients: int) -> dict[str, Any]:
    evaluation = await asyncio.to_thread(_evaluation, site)
    connector = aiohttp.TCPConnector(limit=0)
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)

    async def connect() -> aiohttp.ClientWebSocketResponse | None:
        """A client whose handshake or snapshot fails is counted, not fatal to the run."""
        async with gate:
            try:
                return await _connect(http, site)
            except (aiohttp.ClientError, RuntimeError, TimeoutError):
                return None

    async with aiohttp.ClientSession(connector=connector) as http:
        connected = await asyncio.wait_for(
            asyncio.gather(*(connect() for _ in range(clients))), CONNECT_LIMIT_SECONDS
        )
        sockets = [s for s in connected if s is not None]

        async def arrival(socket: aiohttp.ClientWebSocketResponse) -> float | None:
            got = await _receive(socket, MESSAGES_PER_EVALUATION, DELIVERY_LIMIT_SECONDS)
            return time.perf_counter() if got else None

        waiting = [asyncio.create_task(arrival(s)) for s in sockets]
        started = time.perf_counter()
        await asyncio.to_thread(_publish, evaluation)
        arrivals = await asyncio.gather(*waiting)
        await asyncio.gather(*(s.close() for s in sockets), return_exceptions=True)
    delays = sorted(a - started for a in arrivals if a is not None)
    return {
        "clients": clients,
        "connectFailed": clients - len(sockets),
        "lost": len(sockets) - len(delays),
        "p50": percentile(delays, 50) if delays else None,
        "p99": percentile(delays, 99) if delays else None,
        "last": delays[-1] if delays else None,
    }


def _use_site_settings(site: BenchSite) -> None:
    """This process publishes like a worker does: same database and channel layer as the web."""
    for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "EMBEDDED_WORKER"):
        os.environ[key] = site.environment[key]
    import django

    django.setup()


def run(
    client_counts: list[int], nodes: int, server_kind: str = "serve", workers: int = DEFAULT_WORKERS
) -> dict[str, Any]:
    rows = []
    with bench_site(nodes=nodes, server_kind=server_kind, workers=workers) as site:
        _use_site_settings(site)
        _publish(_evaluation(site))  # warm: the first publish opens this process's Redis pool
        for clients in [1, *client_counts]:
            row = asyncio.run(fan_out(site, clients))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"nodes": nodes, "server": server_kind, "workers": workers, "rows": rows}


def summary(result: dict[str, Any]) -> list[str]:
    baseline = result["rows"][0]["last"] or float("nan")
    lines = []
    for row in result["rows"]:
        if row["last"] is None:
            lines.append(f"fanout {row['clients']:>4} clients: all {row['lost']} lost")
            continue
        healthy = row["lost"] == 0 and row["connectFailed"] == 0
        verdict = "ok" if healthy and row["p99"] < TARGET_P99_SECONDS else "over target"
        lines.append(
            f"fanout {row['clients']:>4} clients: p50 {row['p50'] * 1000:6.0f} ms, "
            f"p99 {row['p99'] * 1000:6.0f} ms, last {row['last'] * 1000:6.0f} ms "
            f"(x{row['last'] / baseline:.1f} one client), lost {row['lost']}, "
            f"failed connects {row['connectFailed']}  {verdict}"
        )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="100,200,500")
    parser.add_argument("--nodes", type=int, default=100, help="synthetic cluster size")
    add_server_arguments(parser)
    args = parser.parse_args(argv)
    result = run([int(c) for c in args.clients.split(",")], args.nodes, args.server, args.workers)
    print("\n".join(summary(result)))
    return result


if __name__ == "__main__":
    main()
