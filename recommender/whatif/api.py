"""``POST /api/v1/what-if/`` and ``GET /api/v1/what-if/<id>/``: the workload page's what-if
over the API, answered by a worker (``recommender.whatif.service``).

POST body: ``cluster`` (id), ``workload`` ("namespace/name"), ``kind``, ``target``,
``amount`` (``recommender.engine.evaluate.edits``), optionally ``snapshot`` (an
evaluated snapshot of that cluster; default: the latest evaluated). The answer is 202
with the request's ``id``, ``state`` and ``url``, which GET reads: ``state`` queued /
working / done / failed, ``answer`` (done) the workload planned alone on that snapshot
without and with the edit, ``error`` (failed) ``{field: [reason]}``. Bad input found
without the snapshot (the edit, an unknown workload) is a 400 naming the field; the
user's third what-if a 429, a full queue a 503, both with Retry-After.
"""

from __future__ import annotations

from typing import Any

from django.urls import path, reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from capacityweb import visibility
from capacityweb.api.urls import api_paths
from recommender.engine.evaluate.edits import KINDS
from recommender.models import WhatIfRequest
from recommender.whatif import service as whatif


class WhatIfRequestSerializer(serializers.Serializer):
    cluster = serializers.IntegerField(min_value=1)
    workload = serializers.CharField(max_length=400)
    kind = serializers.ChoiceField(choices=KINDS)
    target = serializers.CharField(max_length=400, allow_blank=True, required=False, default="")
    amount = serializers.IntegerField(required=False, allow_null=True, default=None)
    snapshot = serializers.IntegerField(required=False, min_value=1)


class PlanSerializer(serializers.Serializer):
    verdict = serializers.CharField()
    addNodes = serializers.DictField(child=serializers.IntegerField())  # noqa: N815
    reservations = serializers.ListField(child=serializers.CharField())
    reasons = serializers.ListField(child=serializers.CharField())


class WhatIfAnswerSerializer(serializers.Serializer):
    workload = serializers.CharField()
    edit = serializers.DictField()
    text = serializers.CharField()
    before = PlanSerializer()
    after = PlanSerializer()
    changed = serializers.BooleanField()


class WhatIfQueuedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=WhatIfRequest.State.choices)
    url = serializers.CharField(help_text="GET it for the state and, when done, the answer")


class WhatIfStateSerializer(WhatIfQueuedSerializer):
    cluster = serializers.IntegerField()
    snapshot = serializers.IntegerField()
    workload = serializers.CharField()
    edit = serializers.DictField()
    createdAt = serializers.DateTimeField()  # noqa: N815
    startedAt = serializers.DateTimeField(allow_null=True)  # noqa: N815
    finishedAt = serializers.DateTimeField(allow_null=True)  # noqa: N815
    answer = WhatIfAnswerSerializer(allow_null=True, help_text="when done")
    error = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        allow_null=True,
        help_text="when failed: the field and its reason",
    )


def state_url(request_id: int) -> str:
    return reverse("what-if-state", args=[request_id])


class WhatIfView(APIView):
    """One edit of the stored snapshot's model, queued for a worker (nothing else stored)."""

    throttle_scope = "reports"
    serializer_class = WhatIfRequestSerializer

    @extend_schema(
        request=WhatIfRequestSerializer,
        responses={
            202: WhatIfQueuedSerializer,
            400: OpenApiResponse(description="a field names nothing there, or is out of range"),
            404: OpenApiResponse(description="no evaluated snapshot of that cluster"),
            429: OpenApiResponse(description="one what-if running and one waiting already"),
            503: OpenApiResponse(description="the what-if queue is full; Retry-After"),
        },
    )
    def post(self, request: Request) -> Response:
        given = WhatIfRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(given.validated_data)
        evaluation = whatif.evaluation_for(data["cluster"], data.get("snapshot"))
        if evaluation is None:  # as every FilterSet answers an unknown cluster or snapshot
            raise NotFound("no evaluated snapshot of that cluster")
        labels = visibility.request_viewer(request).labels(evaluation.reservation_owners)
        try:
            queued = whatif.submit(
                user=request.user,
                evaluation=evaluation,
                workload=data["workload"],
                data=data,
                labels=labels,
            )
        except whatif.WhatIfError as error:
            raise ValidationError({error.field: [error.reason]}) from None
        except whatif.WhatIfRefused as refused:
            return Response(
                {"detail": str(refused)},
                status=refused.status,
                headers={"Retry-After": str(refused.retry_after_seconds)},
            )
        url = state_url(queued.pk)
        body = {"id": queued.pk, "state": queued.state, "url": url}
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": url})


class WhatIfStateView(APIView):
    """One of the caller's what-ifs: its state and, when done, its answer."""

    @extend_schema(responses={200: WhatIfStateSerializer})
    def get(self, request: Request, request_id: int) -> Response:
        asked = whatif.request_of(user=request.user, request_id=request_id)
        if asked is None:
            raise NotFound("no such what-if of yours")
        return Response(state_json(asked, visibility.request_viewer(request)))


def state_json(asked: WhatIfRequest, viewer: visibility.Viewer) -> dict[str, Any]:
    """The request as GET answers it (the page's script reads the same)."""
    state = whatif.state_of(asked)
    labels = viewer.labels(asked.evaluation.reservation_owners)
    return {
        "id": asked.pk,
        "state": state,
        "url": state_url(asked.pk),
        "cluster": asked.evaluation.cluster_id,
        "snapshot": asked.evaluation.snapshot_id,
        "workload": asked.workload,
        "edit": asked.edit,
        "createdAt": asked.created_at,
        "startedAt": asked.started_at,
        "finishedAt": asked.finished_at,
        "answer": whatif.shown_answer(asked, labels) if state == asked.State.DONE else None,
        "error": whatif.error_of(asked, state),
    }


api_paths.append(path("what-if/", WhatIfView.as_view(), name="what-if"))
api_paths.append(path("what-if/<int:request_id>/", WhatIfStateView.as_view(), name="what-if-state"))
