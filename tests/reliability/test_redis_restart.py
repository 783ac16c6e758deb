"""Live sockets through a real daphne and channels_redis on a throwaway Redis.

- an idle socket survives longer than redis-py's default 5 s socket timeout
  and still receives the next evaluation;
- Redis crashes and restarts (no persistence: groups are gone): clients that
  behave like static/js/live.js (on a drop: reconnect, then ``{"type":
  "resync"}``) all end up showing the evaluation stored during the outage.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings

from tests.conftest import REPO_ROOT, stop_process, with_database_name
from tests.servers import ThrowawayRedis, free_port
from tests.web.fixtures import gpu_node, ingest_and_evaluate, make_cluster, scenario_objects

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
]
CLIENTS = 5
IDLE_SECONDS = 7.0  # longer than redis-py 8's default socket_timeout of 5 s
CATCH_UP_SECONDS = 20.0
MESSAGE_TIMEOUT_SECONDS = 10.0


@pytest.fixture
def redis_server() -> Iterator[ThrowawayRedis]:
    server = ThrowawayRedis()
    try:
        server.start()
        yield server
    finally:
        server.stop()
        server.remove()


def layers_on(redis_url: str) -> dict[str, Any]:
    from django.conf import settings

    layers = {"default": {**settings.CHANNEL_LAYERS["default"]}}
    layers["default"]["CONFIG"] = {"hosts": [{"address": redis_url, "socket_timeout": None}]}
    return layers


@pytest.fixture
def daphne(redis_server: ThrowawayRedis, tmp_path: Path) -> Iterator[str]:
    """daphne on the test database and the throwaway Redis; yields its ws:// base URL."""
    from django.conf import settings

    port = free_port()
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        ),
        "REDIS_URL": redis_server.url(),
        "EMBEDDED_WORKER": "false",
    }
    log_path = tmp_path / "daphne.log"
    daphne_bin = Path(sys.executable).with_name("daphne")
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [str(daphne_bin), "-b", "127.0.0.1", "-p", str(port), "capacityweb.asgi:application"],
            cwd=REPO_ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        asyncio.run(wait_for_port(port, server))
        with override_settings(CHANNEL_LAYERS=layers_on(redis_server.url())):
            yield f"ws://127.0.0.1:{port}"
    finally:
        stop_process(server)


async def wait_for_port(port: int, server: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if server.poll() is not None:
            pytest.fail(f"daphne exited {server.returncode}")
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    pytest.fail("daphne did not listen")


@pytest.fixture
def site(client: Any, user: Any) -> dict[str, Any]:
    cluster = make_cluster("redis-fault")
    evaluation = ingest_and_evaluate(cluster, scenario_objects("reservation-idle-nodes"))
    client.force_login(user)
    return {"cluster": cluster, "evaluation": evaluation, "session": client.cookies["sessionid"]}


def newer_evaluation(site: dict[str, Any]) -> Any:
    objects = [*scenario_objects("reservation-idle-nodes"), gpu_node("after-outage", 4)]
    return ingest_and_evaluate(site["cluster"], objects)


class LiveClient:
    """What static/js/live.js does: read messages; on a drop reconnect and send resync."""

    def __init__(self, http: aiohttp.ClientSession, url: str, session: str) -> None:
        self.http, self.url = http, url
        self.headers = {"Origin": "http://127.0.0.1", "Cookie": f"sessionid={session}"}
        self.evaluations: list[int] = []
        self.reconnects = 0
        self.socket: aiohttp.ClientWebSocketResponse | None = None

    async def connect(self, resync: bool = False) -> None:
        self.socket = await self.http.ws_connect(self.url, headers=self.headers)
        if resync:
            await self.socket.send_json({"type": "resync"})

    async def read_until(self, evaluation_id: int, limit_seconds: float) -> bool:
        deadline = asyncio.get_running_loop().time() + limit_seconds
        while asyncio.get_running_loop().time() < deadline:
            try:
                message = await asyncio.wait_for(self.socket.receive(), MESSAGE_TIMEOUT_SECONDS)
            except TimeoutError:
                continue
            if message.type == aiohttp.WSMsgType.TEXT:
                self.evaluations.append(message.json()["evaluation"])
                if self.evaluations[-1] == evaluation_id:
                    return True
            else:
                self.reconnects += 1
                await asyncio.sleep(0.5)
                try:
                    await self.connect(resync=True)
                except aiohttp.ClientError:
                    continue
        return False


async def connected_clients(http: aiohttp.ClientSession, url: str, site: Any) -> list[LiveClient]:
    clients = [LiveClient(http, url, site["session"].value) for _ in range(CLIENTS)]
    for live in clients:
        await live.connect()
        assert await live.read_until(site["evaluation"].pk, MESSAGE_TIMEOUT_SECONDS)
    return clients


async def test_it_delivers_to_a_socket_idle_longer_than_the_redis_socket_timeout(
    daphne: str, site: dict[str, Any]
) -> None:
    from recommender import events

    async with aiohttp.ClientSession() as http:
        (live,) = (
            await connected_clients(http, f"{daphne}/ws/clusters/{site['cluster'].pk}/", site)
        )[:1]
        await asyncio.sleep(IDLE_SECONDS)
        newer = await sync_to_async(newer_evaluation)(site)
        await sync_to_async(events.publish_evaluation)(newer)
        assert await live.read_until(newer.pk, MESSAGE_TIMEOUT_SECONDS)
        assert live.reconnects == 0


async def test_it_brings_every_client_to_the_latest_evaluation_after_redis_restarts(
    daphne: str, redis_server: ThrowawayRedis, site: dict[str, Any]
) -> None:
    from recommender import events

    async with aiohttp.ClientSession() as http:
        url = f"{daphne}/ws/clusters/{site['cluster'].pk}/"
        clients = await connected_clients(http, url, site)
        redis_server.restart()
        newer = await sync_to_async(newer_evaluation)(site)
        await sync_to_async(events.publish_evaluation)(newer)
        caught_up = await asyncio.gather(
            *(c.read_until(newer.pk, CATCH_UP_SECONDS) for c in clients)
        )
    assert caught_up == [True] * CLIENTS
