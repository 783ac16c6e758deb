"""``POST /api/v1/what-if/``: the workload page's what-if over the API.

Body: ``cluster`` (id), ``workload`` ("namespace/name"), ``kind``, ``target``,
``amount`` (``recommender.engine.evaluate.edits``), optionally ``snapshot`` (an
evaluated snapshot of that cluster; default: the latest evaluated). The answer is the
workload planned alone on that snapshot without and with the edit; nothing is stored.
Bad input is a 400 naming the field.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from capacityweb import visibility
from capacityweb.api_urls import api_paths
from recommender import selectors, whatif
from recommender.engine.evaluate.edits import KINDS
from recommender.models import Evaluation


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


class WhatIfTooLong(APIException):
    status_code = 503
    default_code = "what_if_too_long"


class WhatIfView(APIView):
    """One edit of the stored snapshot's model, the workload planned again (not stored)."""

    throttle_scope = "reports"
    serializer_class = WhatIfRequestSerializer

    @extend_schema(
        request=WhatIfRequestSerializer,
        responses={
            200: WhatIfAnswerSerializer,
            400: OpenApiResponse(description="a field names nothing there, or is out of range"),
            404: OpenApiResponse(description="no evaluated snapshot of that cluster"),
            503: OpenApiResponse(description="the engine ran past the what-if's time limit"),
        },
    )
    def post(self, request: Request) -> Response:
        given = WhatIfRequestSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(given.validated_data)
        evaluation = _evaluation(data["cluster"], data.get("snapshot"))
        labels = visibility.request_viewer(request).labels(evaluation.reservation_owners)
        try:
            answer = whatif.run_what_if(
                evaluation=evaluation, workload=data["workload"], data=data, labels=labels
            )
        except whatif.WhatIfTimeout as error:
            raise WhatIfTooLong(str(error)) from None
        except whatif.WhatIfError as error:
            raise ValidationError({error.field: [error.reason]}) from None
        return Response(answer)


def _evaluation(cluster_id: int, snapshot_id: int | None) -> Evaluation:
    """The snapshot's evaluation (it must be of that cluster), else the latest one."""
    if snapshot_id is None:
        evaluation = selectors.latest_evaluation_of_cluster(
            cluster_id=cluster_id, with_result=False
        )
    else:
        evaluation = selectors.evaluation_of_snapshot(snapshot_id=snapshot_id, with_result=False)
        if evaluation is not None and evaluation.cluster_id != cluster_id:
            evaluation = None
    if evaluation is None:  # as every FilterSet answers an unknown cluster or snapshot
        raise NotFound("no evaluated snapshot of that cluster")
    return evaluation


api_paths.append(path("what-if/", WhatIfView.as_view(), name="what-if"))
