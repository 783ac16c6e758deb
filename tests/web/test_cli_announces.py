"""Issue 41 item 4: `manage.py ingest`, run as its own process beside the web tier,
announces what it stores through the shared channel layer (Redis), as the worker does:
a cluster it creates to the overviews' group, each evaluation to the cluster's group."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_manage, with_database_name
from tests.embedded_server import write_cluster

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

TIMEOUT_SECONDS = 10
MESSAGE_TYPES = ["heatmap.update", "pending.update", "recommendations.update"]


def second_shell() -> dict[str, str]:
    """This process's services (the test database, Redis) for a `manage.py` of its own."""
    from django.conf import settings

    database = settings.DATABASES["default"]["NAME"]
    return {
        **os.environ,
        "DATABASE_URL": with_database_name(os.environ["DATABASE_URL"], database),
        "EMBEDDED_WORKER": "false",
    }


async def ingest(*arguments: str) -> str:
    done = await asyncio.to_thread(
        run_manage, "ingest", *arguments, environment=second_shell(), timeout_seconds=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def listen(group: str) -> tuple[Any, str]:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return layer, channel


async def texts(layer: Any, channel: str) -> list[dict[str, Any]]:
    event = await asyncio.wait_for(layer.receive(channel), TIMEOUT_SECONDS)
    return [json.loads(text) for text in event["texts"]]


async def test_it_announces_a_cluster_it_creates_to_the_overviews(tmp_path: Path) -> None:
    from recommender import events
    from topology.models import Cluster

    write_cluster(tmp_path / "objects.json", nodes=2, pending=1, tag="first")
    layer, channel = await listen(events.cluster_group(None))
    await ingest("lab", "--source", "files", "--path", str(tmp_path))
    (message,) = await texts(layer, channel)
    created = await Cluster.objects.aget(name="lab")
    assert (message["type"], message["version"]) == ("clusters.update", 1)
    assert message["data"] == {"clusters": [created.pk]}


async def test_it_announces_each_evaluation_to_the_clusters_pages(tmp_path: Path) -> None:
    from recommender import events
    from topology.models import Cluster

    write_cluster(tmp_path / "objects.json", nodes=2, pending=1, tag="first")
    await ingest("lab", "--source", "files", "--path", str(tmp_path))
    cluster = await Cluster.objects.aget(name="lab")
    layer, channel = await listen(events.cluster_group(cluster.pk))
    write_cluster(tmp_path / "objects.json", nodes=2, pending=2, tag="second")
    printed = await ingest("lab")
    (evaluation,) = re.findall(r"evaluation (\d+):", printed)
    messages = await texts(layer, channel)
    assert [(m["type"], m["evaluation"]) for m in messages] == [
        (message_type, int(evaluation)) for message_type in MESSAGE_TYPES
    ]
    assert messages[1]["data"]["pending"] == 2
