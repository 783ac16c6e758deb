"""The live dashboard sockets: ``/ws/clusters/<id>/`` (one cluster), ``/ws/clusters/`` (the list).

    connect ─► anonymous? close 4401 ─► unknown cluster? close 4404
            └► join events.cluster_group(id) ─► send events.snapshot_messages(latest)
    group "cluster.messages" ─► forward its JSON texts (events.texts_for: as the user
                                may read them, capacityweb.visibility)
    client {"type": "resync"} ─► send the snapshot again
    client {"type": "resync", "evaluation": id} ─► send it only if the latest is another
           (live.js asks so when no message came for LIVE_POLL_SECONDS: one small query)

    /ws/clusters/ (the overview): anonymous? close 4401
            └► join events.cluster_group(None) ─► send events.clusters_message()
    group "cluster.messages" ─► forward ("clusters.update": every cluster's id)
    client {"type": "resync", ...} ─► send the list again

Thin, as the Channels docs show it: authenticate, join the group, forward. What
a message contains is decided in recommender.events, nowhere else.
"""

from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from capacityweb import visibility
from recommender import events, selectors
from topology.models import Cluster

CLOSE_UNAUTHENTICATED = 4401
CLOSE_UNKNOWN_CLUSTER = 4404


@database_sync_to_async
def cluster_exists(cluster_id: int) -> bool:
    return Cluster.objects.filter(pk=cluster_id).exists()


@database_sync_to_async
def current_texts(
    cluster_id: int, viewer: visibility.Viewer, unless_evaluation: Any = None
) -> list[str]:
    """The cluster's current state as message texts; none if the latest evaluation's id is
    ``unless_evaluation`` (the client shows it already)."""
    if unless_evaluation is not None:
        latest_id = selectors.latest_evaluation_id(cluster_id=cluster_id)
        if latest_id is None or str(latest_id) == str(unless_evaluation):
            return []
    evaluation = selectors.latest_evaluation(cluster_id=cluster_id)
    return events.snapshot_texts(evaluation, viewer) if evaluation is not None else []


@database_sync_to_async
def clusters_text() -> str:
    return json.dumps(events.clusters_message())


@database_sync_to_async
def viewer_of(user: Any) -> visibility.Viewer:
    return visibility.viewer_of(user)


class LiveConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """What both live sockets do: refuse with a code a browser can read, leave the group,
    ignore a frame that is not JSON, forward the group's messages."""

    group_name = ""
    viewer: visibility.Viewer = visibility.STAFF

    async def refuse(self, code: int) -> None:
        """Accept, then close with ``code``: a close before accept reaches a browser as
        a bare handshake failure (1006), so it could not tell "sign in" from "retry"."""
        await self.accept()
        await self.close(code=code)

    async def join(self, group_name: str) -> None:
        self.group_name = group_name
        await self.channel_layer.group_add(self.group_name, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group_name:
            await self.channel_layer.group_discard(self.group_name, self.channel_name)

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        """A frame that is not JSON is ignored (as a message of no known type)."""
        try:
            return await super().decode_json(text_data)
        except ValueError:
            return None

    async def cluster_messages(self, event: dict[str, Any]) -> None:
        """One publish: the texts were encoded once by events, for every socket; events
        re-encodes one only for a user who may not read a reservation named in it."""
        for text in events.texts_for(event, self.viewer):
            await self.send(text_data=text)


class ClusterConsumer(LiveConsumer):
    """Streams one cluster's typed, versioned updates to a signed-in browser."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.refuse(CLOSE_UNAUTHENTICATED)
            return
        self.cluster_id = int(self.scope["url_route"]["kwargs"]["cluster_id"])
        if not await cluster_exists(self.cluster_id):
            await self.refuse(CLOSE_UNKNOWN_CLUSTER)
            return
        self.viewer = await viewer_of(user)  # its teams, read once per socket
        await self.join(events.cluster_group(self.cluster_id))
        await self.send_snapshot()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "resync":
            await self.send_snapshot(unless_evaluation=content.get("evaluation"))

    async def send_snapshot(self, unless_evaluation: Any = None) -> None:
        for text in await current_texts(self.cluster_id, self.viewer, unless_evaluation):
            await self.send(text_data=text)


class ClusterListConsumer(LiveConsumer):
    """The overview's socket: which clusters there are, on connect and when one is added
    (ids only: the page renders a card it lacks from its own URL, as the viewer may see it)."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.refuse(CLOSE_UNAUTHENTICATED)
            return
        await self.join(events.cluster_group(None))
        await self.send(text_data=await clusters_text())

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "resync":
            await self.send(text_data=await clusters_text())


class NoRouteConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """Any other ``/ws/...`` path: closed with 4404, as an unknown cluster (Channels'
    URLRouter raises ValueError for a path no route matches, which the server answered
    as an error of its own)."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_UNKNOWN_CLUSTER)
