"""Queues: each quota queue's limit against what it has admitted, and who waits in it.

Read from the snapshot's model (``topology.model.hardware.QuotaQueue``: Kueue ClusterQueues
with their LocalQueues, Volcano and KAI Queues) and ``topology.kube.kueue.quotas.admitted_usage``
(the requests of the queue's bound pods), the same numbers ``quota_waiting`` admits
against; the waiting workloads are the evaluation's verdicts whose reason is a wait for
this queue's quota (``waiting for quota in queue <name> ...``), in the evaluation's order.

Page and API (``/api/v1/queue-usage/``) share ``QueueFilterSet``. Reads: the page's
cluster_page (4 queries), the model's queues, gangs and pods (1 or 2, none when cached:
``snapshot_queues``), the waiting verdicts (1).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import django_filters
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from recommender.models import Evaluation, WorkloadVerdict
from recommender.views import cluster_page
from topology.filters import cluster_filter
from topology.kube.kueue.quotas import QUOTA_WAIT_PREFIX, admitted_usage, amount_text
from topology.model.hardware import QuotaQueue
from topology.model.serialize import SCHEMA_VERSION, cluster_from_json
from topology.models import Snapshot


class QueueFilterSet(django_filters.FilterSet):
    """The queues of one cluster's latest snapshot (or of ``snapshot``)."""

    cluster = cluster_filter()
    snapshot = django_filters.NumberFilter(field_name="id")

    class Meta:
        model = Snapshot
        fields = ["cluster", "snapshot"]


# What the queues need of a snapshot's model: its queues, then the pods and gangs that
# say what each queue has admitted (only for a model with queues, and only once per
# content: kept in the cache by the snapshot's content hash); never its nodes.
QUEUES_KEY = "model_json__cluster__queues"
ADMITTED_KEYS = ("model_json__cluster__gangs", "model_json__cluster__pods")
USAGE_CACHE_SECONDS = 24 * 3600


def snapshot_queues(snapshot_id: int) -> tuple[tuple[QuotaQueue, ...], dict[str, Counter[str]]]:
    """The snapshot's queues and what each has admitted (``admitted_usage``). On the demo
    (an 11 MB model, 8,000 pods) reading and building the whole model took 2 s on every
    view of the queues page; now one small read, and the pods once per content."""
    rows = Snapshot.objects.filter(id=snapshot_id)
    content_hash, queues = rows.values_list("content_hash", QUEUES_KEY).get()
    if not queues:
        return (), {}
    key = f"capacityweb:queue-usage:{content_hash}"
    used = cache.get(key)
    if used is None:
        gangs, pods = rows.values_list(*ADMITTED_KEYS).get()
        admitted = _model({"queues": queues, "gangs": gangs or [], "pods": pods or []})
        used = {name: dict(amounts) for name, amounts in admitted_usage(admitted).items()}
        cache.set(key, used, USAGE_CACHE_SECONDS)
    return _model({"queues": queues}).queues, {q: Counter(a) for q, a in used.items()}


def _model(parts: dict[str, Any]) -> Any:
    """A model of only these parts of the stored one (its other fields empty)."""
    return cluster_from_json({"schemaVersion": SCHEMA_VERSION, "cluster": {"name": "", **parts}})


def queue_rows(snapshot_id: int, waiting: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row per queue; ``waiting``: (workload, reason) of quota-waiting verdicts in order."""
    queues, used = snapshot_queues(snapshot_id)
    return [queue_row(queue, used.get(queue.name, Counter()), waiting) for queue in queues]


def queue_row(
    queue: QuotaQueue, used: Counter[str], waiting: list[tuple[str, str]]
) -> dict[str, Any]:
    borrowing = queue.borrowing_limit
    resources = [
        {
            "resource": resource,
            "limit": amount_text(resource, limit),
            "used": amount_text(resource, used[resource]),
            "free": amount_text(resource, max(limit - used[resource], 0)),
            "borrowing_limit": "none"
            if queue.cohort is None
            else "unbounded"
            if borrowing is None or resource not in borrowing
            else amount_text(resource, borrowing[resource]),
        }
        for resource, limit in sorted(queue.limit.items())
    ]
    prefix = f"{QUOTA_WAIT_PREFIX}{queue.name} "
    return {
        "name": queue.name,
        "cohort": queue.cohort or "",
        "local_queues": list(queue.local_queues),
        "resources": resources,
        "waiting": [
            {"position": index, "workload": workload, "reason": reason}
            for index, (workload, reason) in enumerate(
                ((w, r) for w, r in waiting if r.startswith(prefix)), start=1
            )
        ],
    }


def quota_waits(evaluation_id: int | None) -> list[tuple[str, str]]:
    """(workload, reason) of the evaluation's verdicts waiting for quota, in stored order."""
    if evaluation_id is None:
        return []
    rows = (
        WorkloadVerdict.objects.filter(evaluation_id=evaluation_id, verdict="waiting")
        .order_by("id")
        .values_list("workload", "reasons")
    )
    return [
        (workload, reason)
        for workload, reasons in rows
        for reason in reasons or ()
        if isinstance(reason, str) and reason.startswith(QUOTA_WAIT_PREFIX)
    ]


@login_required
def queues_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id, with_result=False)
    rows: list[dict[str, Any]] = []
    if page.snapshot is not None:
        evaluation_id = page.evaluation.id if page.evaluation else None
        rows = queue_rows(page.snapshot.id, quota_waits(evaluation_id))
    context = page.context("queues")
    context["rows"] = rows
    return render(request, "dashboard/queues.html", context)


class QueueResourceSerializer(serializers.Serializer):
    resource = serializers.CharField()
    limit = serializers.CharField()
    used = serializers.CharField()
    free = serializers.CharField()
    borrowing_limit = serializers.CharField()


class QueueWaitSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    workload = serializers.CharField()
    reason = serializers.CharField()


class QueueSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    snapshot = serializers.IntegerField()
    name = serializers.CharField()
    cohort = serializers.CharField()
    local_queues = serializers.ListField(child=serializers.CharField())
    resources = QueueResourceSerializer(many=True)
    waiting = QueueWaitSerializer(many=True)


class QueueList(APIView):
    """``GET /api/v1/queue-usage/?cluster=``: the queues page's rows (QueueFilterSet)."""

    serializer_class = QueueSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("cluster", int, required=True, description="the cluster"),
            OpenApiParameter("snapshot", int, description="this snapshot's, not the latest"),
        ],
        responses={
            200: QueueSerializer(many=True),
            400: OpenApiResponse(description="no cluster given, or it names no cluster"),
        },
    )
    def get(self, request: Request) -> Response:
        filterset = QueueFilterSet(request.query_params, queryset=Snapshot.objects.all())
        if not filterset.is_valid():
            raise ValidationError(filterset.errors)
        cluster = filterset.form.cleaned_data.get("cluster")
        if cluster is None:
            raise ValidationError({"cluster": ["required: the queues of which cluster"]})
        snapshot = filterset.qs.order_by("-taken_at").only("id").first()
        if snapshot is None:
            return Response([])
        evaluation_id = (
            Evaluation.objects.filter(snapshot_id=snapshot.id).values_list("id", flat=True).first()
        )
        rows = queue_rows(snapshot.id, quota_waits(evaluation_id))
        data = [{"cluster": cluster.id, "snapshot": snapshot.id, **row} for row in rows]
        return Response(QueueSerializer(data, many=True).data)
