"""Clock skew between ingesters: a snapshot whose taken_at is older than the latest one.

It must be kept (not dropped silently) and evaluated, but it must not replace
the cluster's latest evaluation: not in the selectors the pages and the API
read, and not on the live sockets of browsers showing the newer one.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from tests.web.fixtures import TAKEN_AT, gpu_node, make_cluster, scenario_objects

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
SKEW = timedelta(minutes=5)
RECEIVE_TIMEOUT_SECONDS = 2.0


def ingest(cluster: Any, objects: list[Any], taken_at: Any) -> Any:
    from topology import services

    snapshot = services.ingest_snapshot(cluster=cluster, taken_at=taken_at, objects=objects)
    assert snapshot is not None
    return snapshot


@pytest.fixture
def skewed(db: None) -> dict[str, Any]:
    """Snapshot ``newer`` at TAKEN_AT evaluated, then ``older`` (other content) at TAKEN_AT-5min
    ingested by a worker whose clock runs behind."""
    from recommender.tasks import evaluate_snapshot

    cluster = make_cluster("skewed")
    base = scenario_objects("reservation-idle-nodes")
    newer = ingest(cluster, [*base, gpu_node("later-node", 4)], TAKEN_AT)
    evaluate_snapshot(newer.pk)
    older = ingest(cluster, base, TAKEN_AT - SKEW)
    return {"cluster": cluster, "newer": newer, "older": older}


def live_listener(cluster_id: int) -> tuple[Any, str]:
    from recommender import events

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(events.cluster_group(cluster_id), channel)
    return layer, channel


async def pushed_evaluations(layer: Any, channel: str) -> set[int]:
    import asyncio

    seen = set()
    try:
        while True:
            event = await asyncio.wait_for(layer.receive(channel), RECEIVE_TIMEOUT_SECONDS)
            seen.update(json.loads(text)["evaluation"] for text in event["texts"])
    except TimeoutError:
        return seen


def test_it_keeps_and_evaluates_the_older_snapshot(skewed: dict[str, Any]) -> None:
    from recommender.models import Evaluation
    from recommender.tasks import evaluate_snapshot

    evaluation_id = evaluate_snapshot(skewed["older"].pk)
    assert Evaluation.objects.get(pk=evaluation_id).snapshot_id == skewed["older"].pk


def test_it_keeps_the_newer_evaluation_as_the_latest(skewed: dict[str, Any]) -> None:
    from recommender import selectors
    from recommender.tasks import evaluate_snapshot

    evaluate_snapshot(skewed["older"].pk)
    latest = selectors.latest_evaluation(cluster_id=skewed["cluster"].pk)
    assert latest.snapshot_id == skewed["newer"].pk


def test_it_does_not_push_the_older_evaluation_over_the_newer_to_live_clients(
    skewed: dict[str, Any],
) -> None:
    from recommender.tasks import evaluate_snapshot

    layer, channel = live_listener(skewed["cluster"].pk)
    older_evaluation_id = evaluate_snapshot(skewed["older"].pk)
    assert older_evaluation_id not in async_to_sync(pushed_evaluations)(layer, channel)
