"""The only place that sends to channel groups.

::

    evaluate_snapshot task ─► publish_evaluation(evaluation)
                                 └─► group "cluster.<id>" ─► consumer.cluster_message ─► browser

Every message is typed and versioned::

    {"type": "heatmap.update" | "pending.update" | "recommendations.update",
     "version": 1, "cluster": id, "snapshot": id, "evaluation": id, "data": {...}}

``snapshot_messages`` is the current state; consumers send it on connect,
then forward what ``publish_evaluation`` sends.

The heatmap message carries a summary and the URL of the heatmap data, not
the cells: a 6,000-GPU cluster's cells are over a megabyte, above Daphne's
WebSocket frame limit, and fanning them out to hundreds of browsers would
cost more than each page fetching the one level it shows.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.urls import reverse

from recommender.models import Evaluation

MESSAGE_VERSION = 1
GROUP_MESSAGE_TYPE = "cluster.message"
HEATMAP_KEYS = ("cluster",)
MAX_MESSAGE_BYTES = 256 * 1024  # well under Daphne's 1 MiB WebSocket payload limit
PENDING_KEYS = ("workloads", "diagnoses")
RECOMMENDATION_KEYS = ("recommendations", "idleReservations", "cost")


def cluster_group(cluster_id: int) -> str:
    """The channel group of one cluster's live updates."""
    return f"cluster.{int(cluster_id)}"


def _message(evaluation: Evaluation, message_type: str, keys: tuple[str, ...]) -> dict[str, Any]:
    result = evaluation.result or {}
    return {
        "type": message_type,
        "version": MESSAGE_VERSION,
        "cluster": evaluation.cluster_id,
        "snapshot": evaluation.snapshot_id,
        "evaluation": evaluation.pk,
        "data": {
            "takenAt": evaluation.taken_at.isoformat(),
            **{key: result.get(key) for key in keys if key in result},
        },
    }


def _heatmap_message(evaluation: Evaluation) -> dict[str, Any]:
    message = _message(evaluation, "heatmap.update", HEATMAP_KEYS)
    cells = (evaluation.result or {}).get("heatmap") or []
    message["data"]["cells"] = len(cells)
    message["data"]["allocatedMilli"] = sum(cell.get("allocatedMilli") or 0 for cell in cells)
    message["data"]["dataUrl"] = reverse("topology-data", args=[evaluation.cluster_id])
    return message


def snapshot_messages(evaluation: Evaluation) -> list[dict[str, Any]]:
    """The cluster's current state as the three typed messages."""
    return [
        _heatmap_message(evaluation),
        _message(evaluation, "pending.update", PENDING_KEYS),
        _message(evaluation, "recommendations.update", RECOMMENDATION_KEYS),
    ]


def publish_evaluation(evaluation: Evaluation) -> None:
    """Send the evaluation's messages to its cluster's group."""
    layer = get_channel_layer()
    if layer is None:
        return
    group = cluster_group(evaluation.cluster_id)
    for message in snapshot_messages(evaluation):
        async_to_sync(layer.group_send)(group, {"type": GROUP_MESSAGE_TYPE, "message": message})
