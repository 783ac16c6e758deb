"""`manage.py serve`, the production web tier: Uvicorn workers on one port, with the
connection pool on, serving pages, the cached heatmap data and live sockets from the
test database and Redis, as compose.yaml runs it and bench/http.py measures it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from asgiref.sync import sync_to_async

from tests.conftest import with_database_name
from tests.servers import free_port, manage_py_server
from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
WORKERS = 2
REQUESTS = 20  # several per worker, so pooled connections are reused
TIMEOUT_SECONDS = 10
SERVER_APPLICATION_NAME = "capacityweb-serve-under-test"  # its connections in pg_stat_activity


@pytest.fixture
def served(supervised: tuple[str, subprocess.Popen[bytes]]) -> str:
    """`manage.py serve --workers 2` on the test database: its host:port."""
    return supervised[0]


@pytest.fixture
def supervised(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`manage.py serve --workers 2` on the test database; yields host:port and its
    process (the supervisor of the workers)."""
    from django.conf import settings

    port = free_port()
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        )
        + f"?application_name={SERVER_APPLICATION_NAME}",
        "EMBEDDED_WORKER": "false",
        "DATABASE_POOL": "true",
    }
    log_path = tmp_path / "serve.log"
    arguments = ["serve", "--port", str(port), "--workers", str(WORKERS)]
    ready = f"http://127.0.0.1:{port}/health/live"
    with manage_py_server(arguments, environment, log_path, ready) as server:
        wait_for(lambda: len(worker_pids(server.pid)) == WORKERS, "both workers started")
        yield f"127.0.0.1:{port}", server
    assert "Traceback" not in log_path.read_text(), log_path.read_text()


def worker_pids(supervisor: int) -> set[int]:
    """The live web workers of ``supervisor`` (multiprocessing's resource tracker aside)."""
    pids = set()
    for task in Path(f"/proc/{supervisor}/task").iterdir():
        for child in (task / "children").read_text().split():
            if is_alive(int(child)) and b"spawn_main" in read_proc(int(child), "cmdline"):
                pids.add(int(child))
    return pids


def read_proc(pid: int, name: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def is_alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    stat = read_proc(pid, "stat")
    return bool(stat) and stat.rsplit(b")", 1)[1].split()[0] != b"Z"


def wait_for(condition: Any, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds:.0f} s: {what}")
        time.sleep(0.2)


@pytest.fixture
def site(client: Any, db: None) -> dict[str, Any]:
    from django.contrib.auth.models import User

    user = User.objects.create_user("serve-viewer", password="serve-password-1")
    evaluation = ingest_and_evaluate(make_cluster("served"), scenario_objects("topology-block"))
    client.force_login(user)
    return {"evaluation": evaluation, "cookie": f"sessionid={client.cookies['sessionid'].value}"}


@pytest.mark.asyncio
async def test_it_serves_pages_and_cached_heatmap_data_from_its_workers(
    served: str, site: dict[str, Any]
) -> None:
    evaluation = site["evaluation"]
    headers = {"Cookie": site["cookie"]}
    data_url = f"http://{served}/clusters/{evaluation.cluster_id}/topology/data.json"
    async with aiohttp.ClientSession(headers=headers) as http:
        overview_statuses = []
        for _ in range(REQUESTS):
            async with http.get(f"http://{served}/", allow_redirects=False) as response:
                overview_statuses.append(response.status)
                overview = await response.text()
        async with http.get(data_url) as response:
            etag = response.headers["ETag"]
            payload = await response.json()
        async with http.get(data_url, headers={"If-None-Match": etag}) as response:
            revalidated = response.status
    assert overview_statuses == [200] * REQUESTS
    assert f'data-evaluation="{evaluation.id}"' in overview
    assert payload["evaluation"] == evaluation.id
    assert revalidated == 304


@pytest.mark.asyncio
async def test_it_sends_live_updates_through_its_workers(served: str, site: dict[str, Any]) -> None:
    from recommender import events

    evaluation = site["evaluation"]
    url = f"ws://{served}/ws/clusters/{evaluation.cluster_id}/"
    headers = {"Origin": "http://127.0.0.1", "Cookie": site["cookie"]}
    async with aiohttp.ClientSession() as http:
        sockets = [await http.ws_connect(url, headers=headers) for _ in range(2 * WORKERS)]
        snapshots = [
            [await s.receive_json(timeout=TIMEOUT_SECONDS) for _ in range(3)] for s in sockets
        ]
        await sync_to_async(events.publish_evaluation)(evaluation)
        published = [
            [json.loads(await s.receive_str(timeout=TIMEOUT_SECONDS)) for _ in range(3)]
            for s in sockets
        ]
        await asyncio.gather(*(s.close() for s in sockets))
    for messages in [*snapshots, *published]:
        assert [m["type"] for m in messages] == [
            "heatmap.update",
            "pending.update",
            "recommendations.update",
        ]
        assert {m["evaluation"] for m in messages} == {evaluation.id}


def terminate_server_connections() -> int:
    """Postgres closes every connection of the server under test (as a restart would).
    Runs on a thread of its own, whose connection it closes: left open, it would keep
    the test database from being dropped."""
    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                [SERVER_APPLICATION_NAME],
            )
            return int(cursor.fetchone()[0])
    finally:
        connection.close()


async def concurrent_statuses(http: aiohttp.ClientSession, url: str) -> list[int]:
    """The statuses of REQUESTS concurrent GETs of ``url`` (redirects not followed)."""

    async def one() -> int:
        async with http.get(url, allow_redirects=False) as response:
            await response.read()
            return response.status

    return list(await asyncio.gather(*(one() for _ in range(REQUESTS))))


@pytest.mark.asyncio
async def test_it_answers_every_request_after_postgres_closes_its_connections(
    served: str, site: dict[str, Any]
) -> None:
    """Request threads and pooled connections outlive requests: a closed one is replaced."""
    headers = {"Cookie": site["cookie"]}
    url = f"http://{served}/clusters/{site['evaluation'].cluster_id}/topology/"

    async with aiohttp.ClientSession(headers=headers) as http:
        before = await concurrent_statuses(http, url)
        closed = await sync_to_async(terminate_server_connections)()
        after = await concurrent_statuses(http, url)
    assert before == [200] * REQUESTS
    assert closed >= WORKERS  # each worker's pool keeps at least one
    assert after == [200] * REQUESTS


@pytest.mark.asyncio
async def test_it_restarts_a_worker_that_dies_and_keeps_answering(
    supervised: tuple[str, subprocess.Popen[bytes]], site: dict[str, Any]
) -> None:
    address, server = supervised
    workers = worker_pids(server.pid)
    victim = min(workers)

    os.kill(victim, signal.SIGKILL)
    wait_for(
        lambda: victim not in worker_pids(server.pid) and len(worker_pids(server.pid)) == WORKERS,
        "a new worker in place of the killed one",
    )

    url = f"http://{address}/clusters/{site['evaluation'].cluster_id}/topology/data.json"
    async with aiohttp.ClientSession(headers={"Cookie": site["cookie"]}) as http:
        statuses = await concurrent_statuses(http, url)
    assert statuses == [200] * REQUESTS
    assert server.poll() is None


def test_its_workers_exit_when_it_is_killed(
    supervised: tuple[str, subprocess.Popen[bytes]],
) -> None:
    """Even by SIGKILL (no chance to stop them): no worker outlives it holding the port."""
    address, server = supervised
    workers = worker_pids(server.pid)

    server.kill()
    server.wait(timeout=10)

    wait_for(lambda: not any(is_alive(pid) for pid in workers), "the workers exited")
    host, port = address.split(":")
    with socket.socket() as probe:  # no SO_REUSEPORT: fails while any worker listens
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, int(port)))


@pytest.mark.django_db(transaction=False)
def test_it_refuses_a_port_that_is_taken_with_exit_2() -> None:
    from tests.conftest import REPO_ROOT

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "EMBEDDED_WORKER": "false"},
        )
    assert done.returncode == 2, done.stderr
    assert f"--host/--port: cannot listen on 127.0.0.1:{port}" in done.stderr
