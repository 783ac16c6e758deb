"""recommender.watcher: what another process stored, announced once to this process's
sockets (`make run` with a second shell), and nothing this process stored itself.

"Another process" is a store made while the watcher does not note this process's
stores (its ``evaluation_stored`` receiver is what tells the two apart)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from tests.web.fixtures import TAKEN_AT, gpu_node, ingest_and_evaluate, make_cluster

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

QUIET_SECONDS = 0.5
MESSAGE_TYPES = ["heatmap.update", "pending.update", "recommendations.update"]


async def listen(group: str) -> str:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel: str = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def heard(channel: str) -> list[list[dict[str, Any]]]:
    """Each group message the channel received until QUIET_SECONDS without one: its texts."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    events = []
    while True:
        try:
            event = await asyncio.wait_for(layer.receive(channel), QUIET_SECONDS)
        except TimeoutError:
            return events
        events.append([json.loads(text) for text in event["texts"]])


def stored_elsewhere(cluster: Any, gpus: int) -> Any:
    return ingest_and_evaluate(cluster, [gpu_node(f"n-{gpus}", gpus)])


async def test_it_announces_an_evaluation_another_process_stored(cluster: Any) -> None:
    from recommender import events
    from recommender.watcher import StoredChangeWatcher

    watcher = StoredChangeWatcher()
    await sync_to_async(watcher.look)()
    channel = await listen(events.cluster_group(cluster.id))
    evaluation = await sync_to_async(stored_elsewhere)(cluster, 8)
    announced = await sync_to_async(watcher.look)()
    (messages,) = await heard(channel)
    assert announced == [f"evaluation {evaluation.id} of cluster {cluster.id}"]
    assert [(m["type"], m["evaluation"]) for m in messages] == [
        (message_type, evaluation.id) for message_type in MESSAGE_TYPES
    ]


async def test_it_announces_an_evaluation_once(cluster: Any) -> None:
    from recommender import events
    from recommender.watcher import StoredChangeWatcher

    watcher = StoredChangeWatcher()
    await sync_to_async(watcher.look)()
    channel = await listen(events.cluster_group(cluster.id))
    await sync_to_async(stored_elsewhere)(cluster, 8)
    await sync_to_async(watcher.look)()
    again = await sync_to_async(watcher.look)()
    assert again == []
    assert len(await heard(channel)) == 1


async def test_it_leaves_an_evaluation_stored_in_this_process_to_its_storer(
    cluster: Any,
) -> None:
    from recommender import events
    from recommender.watcher import StoredChangeWatcher

    watcher = StoredChangeWatcher()
    watcher.start_noting()
    try:
        await sync_to_async(watcher.look)()
        channel = await listen(events.cluster_group(cluster.id))
        await sync_to_async(stored_elsewhere)(cluster, 8)  # noted: this process stored it
        announced = await sync_to_async(watcher.look)()
    finally:
        watcher.stop_noting()
    assert announced == []
    assert await heard(channel) == []


async def test_it_announces_only_the_latest_of_several_new_evaluations(cluster: Any) -> None:
    from recommender import events
    from recommender.watcher import StoredChangeWatcher

    watcher = StoredChangeWatcher()
    await sync_to_async(watcher.look)()
    channel = await listen(events.cluster_group(cluster.id))
    await sync_to_async(stored_elsewhere)(cluster, 8)
    latest = await sync_to_async(ingest_and_evaluate)(
        cluster, [gpu_node("n-4", 4)], taken_at=TAKEN_AT + timedelta(minutes=1)
    )
    await sync_to_async(watcher.look)()
    (messages,) = await heard(channel)
    assert {m["evaluation"] for m in messages} == {latest.id}


async def test_it_announces_a_cluster_another_process_created(cluster: Any) -> None:
    from recommender import events
    from recommender.watcher import StoredChangeWatcher

    watcher = StoredChangeWatcher()
    await sync_to_async(watcher.look)()
    channel = await listen(events.cluster_group(None))
    second = await sync_to_async(make_cluster)("second")
    announced = await sync_to_async(watcher.look)()
    again = await sync_to_async(watcher.look)()
    ((message,),) = await heard(channel)
    assert announced == [f"clusters up to {second.id}"]
    assert again == []
    assert (message["type"], message["version"]) == ("clusters.update", 1)
    assert message["data"] == {"clusters": [cluster.id, second.id]}


async def test_it_announces_nothing_that_was_there_before_its_first_look(
    evaluation: Any,
) -> None:
    from recommender import events
    from recommender.watcher import StoredChangeWatcher

    channel = await listen(events.cluster_group(evaluation.cluster_id))
    announced = await sync_to_async(StoredChangeWatcher().look)()
    assert announced == []
    assert await heard(channel) == []
