"""The only place that sends to channel groups.

::

    services.store_critical_pass committed ─► publish_if_latest(evaluation), before any
    task the stored signal enqueued (the deferred parts, moves) can publish
        └─► ONE group message "cluster.messages" {texts: [3 JSON texts]} to group "cluster.<id>"
              └─► channels_redis: one copy per web process ─► consumer.cluster_messages
                    └─► each browser socket: the 3 texts as they are (no re-encoding)

    snapshot_ingested signal (ingest committed) ─► publish_snapshot_ingested(snapshot_id)
        └─► ONE group message {texts: ["snapshot.ingested" text]}: open pages show the
            "newer snapshot is being evaluated" note; the evaluation's updates clear it

    evaluate_snapshot failed (time limit, error) ─► publish_evaluation_failed(snapshot)
        └─► ONE group message {texts: ["snapshot.failed" text]}: open pages re-render
            the note, which then names the failure and its reason

    a deferred part stored (tasks.work_out_part) ─► publish_part(evaluation, part)
        └─► ONE group message {texts: ["evaluation.part" text]}: open pages showing that
            evaluation re-render their regions ("being worked out" filled in)

    `ingest` created a cluster ─► publish_clusters()
        └─► ONE group message {texts: ["clusters.update" text]} to group "clusters":
            the overview adds the cards it lacks

    `make run` (in-process layer): what another process stored ─► recommender.watcher
        └─► publish_evaluation / publish_clusters from the serving process

Every message is typed and versioned::

    {"type": "heatmap.update" | "pending.update" | "recommendations.update"
             | "snapshot.ingested" | "snapshot.failed" | "clusters.update"
             | "evaluation.part",
     "version": 1, "cluster": id, "snapshot": id, "evaluation": id, "data": {...}}

(``evaluation`` is null in "snapshot.ingested" and "snapshot.failed": the snapshot
has none; "clusters.update" names no cluster, snapshot nor evaluation: its data is
``{"clusters": [every cluster's id]}``; "evaluation.part"'s data is ``{"part": name,
"missing": [the parts still missing]}``.)

``snapshot_messages`` is the current state; consumers send it on connect,
then forward what ``publish_evaluation`` sends.

Reservation details follow capacityweb.visibility: of the three, only
"recommendations.update" names reservations (``idleReservations``). The group
message carries the evaluation's ``reservationOwners``; ``texts_for`` gives each
socket the texts as they are when its user may see every name in them (staff, or
no other team's reservation there), else that message re-encoded with the others'
reservations as one "reserved (another team)" entry. Groups stay per cluster.

Messages are summaries with the URL of the full data, not the data: a
6,000-GPU cluster's heatmap cells are over a megabyte and its pending
workloads with diagnoses tens of kilobytes, and fanning them out to hundreds
of browsers would cost more than each page fetching what it shows. The three
are encoded once per publish and travel as one group message, so a publish
to N sockets is one channel-layer dispatch per socket, not three plus three
JSON encodings (docs/BENCHMARKS.md, "WebSocket fan-out").
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.urls import reverse

from capacityweb import visibility
from recommender import selectors
from recommender.models import Evaluation
from topology.models import Cluster, Snapshot

MESSAGE_VERSION = 1
CLUSTERS_GROUP = "clusters"  # the overview's socket: clusters added
GROUP_MESSAGE_TYPE = "cluster.messages"  # handled by ClusterConsumer.cluster_messages
HEATMAP_KEYS = ("cluster",)
MAX_MESSAGE_BYTES = 256 * 1024  # well under Daphne's 1 MiB WebSocket payload limit
RECOMMENDATION_KEYS = ("recommendations", "idleReservations", "cost")
RECOMMENDATIONS_TYPE = '"type": "recommendations.update"'  # how json.dumps starts that message
RECOMMENDATIONS_TYPE_WITHIN = 40


def cluster_group(cluster_id: int | None) -> str:
    """The channel group of one cluster's live updates; of the cluster list's for None."""
    return CLUSTERS_GROUP if cluster_id is None else f"cluster.{int(cluster_id)}"


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


def _pending_message(evaluation: Evaluation) -> dict[str, Any]:
    """How many workloads are pending and their verdicts; the rows are at ``dataUrl``."""
    message = _message(evaluation, "pending.update", ())
    workloads = (evaluation.result or {}).get("workloads") or []
    message["data"]["pending"] = len(workloads)
    message["data"]["verdicts"] = dict(
        sorted(Counter(str(w.get("verdict")) for w in workloads).items())
    )
    message["data"]["dataUrl"] = (
        f"{reverse('pending-workload-list')}?evaluation={evaluation.pk}&latest=false"
    )
    return message


def snapshot_messages(
    evaluation: Evaluation, viewer: visibility.Viewer = visibility.STAFF
) -> list[dict[str, Any]]:
    """The cluster's current state as the three typed messages, as ``viewer`` may read them."""
    recommendations = _message(evaluation, "recommendations.update", RECOMMENDATION_KEYS)
    return [
        _heatmap_message(evaluation),
        _pending_message(evaluation),
        _redacted(recommendations, viewer.labels(evaluation.reservation_owners)),
    ]


def _redacted(message: dict[str, Any], labels: visibility.ReservationLabels) -> dict[str, Any]:
    """A message with other teams' reservations relabelled: ``idleReservations`` and the
    recommendations' texts ("paid by reservation R") are all that name any."""
    if labels.viewer.sees_all:
        return message
    data = message["data"]
    named = {key: data[key] for key in ("idleReservations", "recommendations") if key in data}
    shown = {**data, **visibility.result(named, labels)}
    return message if shown == data else {**message, "data": shown}


def snapshot_texts(
    evaluation: Evaluation, viewer: visibility.Viewer = visibility.STAFF
) -> list[str]:
    """The three messages as the JSON text frames sockets send."""
    return [json.dumps(message) for message in snapshot_messages(evaluation, viewer)]


def texts_for(event: dict[str, Any], viewer: visibility.Viewer) -> list[str]:
    """A group message's texts as one socket's user may read them: the shared texts when
    nothing in them is hidden from the user (no re-encoding), else re-encoded."""
    labels = viewer.labels(event.get("reservationOwners"))
    texts = []
    for text in event["texts"]:
        if viewer.sees_all or RECOMMENDATIONS_TYPE not in text[:RECOMMENDATIONS_TYPE_WITHIN]:
            texts.append(text)
            continue
        message = json.loads(text)
        redacted = _redacted(message, labels)
        texts.append(text if redacted is message else json.dumps(redacted))
    return texts


def publish_evaluation(evaluation: Evaluation) -> None:
    """Send the evaluation's messages to its cluster's group, as one group message.

    First the default heatmap view goes into the shared cache: every open page
    fetches it (``dataUrl``) as soon as the message arrives.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    selectors.warm_heatmap(evaluation)
    event = {
        "type": GROUP_MESSAGE_TYPE,
        "texts": snapshot_texts(evaluation),
        "reservationOwners": evaluation.reservation_owners or {},
    }
    async_to_sync(layer.group_send)(cluster_group(evaluation.cluster_id), event)


def publish_if_latest(evaluation: Evaluation) -> None:
    """``publish_evaluation`` unless a newer evaluation of the cluster is stored: pages
    never go back to an older answer."""
    latest = selectors.latest_evaluation(cluster_id=evaluation.cluster_id)
    if latest is not None and latest.pk == evaluation.pk:
        publish_evaluation(evaluation)


def snapshot_ingested_message(snapshot: Snapshot) -> dict[str, Any]:
    """A newer snapshot of the cluster is stored and its evaluation is on its way."""
    return {
        "type": "snapshot.ingested",
        "version": MESSAGE_VERSION,
        "cluster": snapshot.cluster_id,
        "snapshot": snapshot.pk,
        "evaluation": None,
        "data": {"takenAt": snapshot.taken_at.isoformat()},
    }


def publish_snapshot_ingested(snapshot_id: int) -> None:
    """Tell the cluster's open pages that snapshot ``snapshot_id`` is being evaluated."""
    layer = get_channel_layer()
    snapshot = Snapshot.objects.filter(pk=snapshot_id).only("cluster_id", "taken_at").first()
    if layer is None or snapshot is None:
        return
    event = {
        "type": GROUP_MESSAGE_TYPE,
        "texts": [json.dumps(snapshot_ingested_message(snapshot))],
    }
    async_to_sync(layer.group_send)(cluster_group(snapshot.cluster_id), event)


def publish_evaluation_failed(snapshot: Snapshot) -> None:
    """Tell the cluster's open pages that the evaluation of ``snapshot`` failed, and why."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {
        "type": "snapshot.failed",
        "version": MESSAGE_VERSION,
        "cluster": snapshot.cluster_id,
        "snapshot": snapshot.pk,
        "evaluation": None,
        "data": {"takenAt": snapshot.taken_at.isoformat(), "reason": snapshot.evaluation_note},
    }
    event = {"type": GROUP_MESSAGE_TYPE, "texts": [json.dumps(message)]}
    async_to_sync(layer.group_send)(cluster_group(snapshot.cluster_id), event)


def clusters_message() -> dict[str, Any]:
    """Which clusters there are (one query of ids): the overview adds a card for each
    it lacks, from its own page."""
    return {
        "type": "clusters.update",
        "version": MESSAGE_VERSION,
        "cluster": None,
        "snapshot": None,
        "evaluation": None,
        "data": {"clusters": list(Cluster.objects.order_by("pk").values_list("pk", flat=True))},
    }


def publish_clusters() -> None:
    """Tell open overviews which clusters there are (after one was created)."""
    layer = get_channel_layer()
    if layer is None:
        return
    event = {"type": GROUP_MESSAGE_TYPE, "texts": [json.dumps(clusters_message())]}
    async_to_sync(layer.group_send)(cluster_group(None), event)


def part_message(evaluation: Evaluation, part: str) -> dict[str, Any]:
    """A deferred part of the evaluation is stored (or was not worked out): pages showing
    it re-render; the parts still missing are named."""
    return {
        "type": "evaluation.part",
        "version": MESSAGE_VERSION,
        "cluster": evaluation.cluster_id,
        "snapshot": evaluation.snapshot_id,
        "evaluation": evaluation.pk,
        "data": {"part": part, "missing": list(evaluation.missing or ())},
    }


def publish_part(evaluation: Evaluation, part: str) -> None:
    """Tell the cluster's open pages that ``part`` of the evaluation is in."""
    layer = get_channel_layer()
    if layer is None:
        return
    event = {"type": GROUP_MESSAGE_TYPE, "texts": [json.dumps(part_message(evaluation, part))]}
    async_to_sync(layer.group_send)(cluster_group(evaluation.cluster_id), event)
