"""Reads of the recommender: the latest evaluation of a cluster, with bounded queries."""

from __future__ import annotations

from django.db.models import QuerySet

from recommender.models import Evaluation, Recommendation, WorkloadVerdict


def latest_evaluation(*, cluster_id: int) -> Evaluation | None:
    return (
        Evaluation.objects.filter(cluster_id=cluster_id)
        .select_related("snapshot", "cluster")
        .order_by("-taken_at", "-id")
        .first()
    )


def evaluations(*, cluster_id: int) -> QuerySet[Evaluation]:
    return Evaluation.objects.filter(cluster_id=cluster_id).order_by("-taken_at", "-id")


def recommendations(*, evaluation: Evaluation) -> QuerySet[Recommendation]:
    return Recommendation.objects.filter(evaluation=evaluation).order_by("id")


def verdicts(
    *, evaluation: Evaluation, verdict: str | None = None, namespace: str | None = None
) -> QuerySet[WorkloadVerdict]:
    rows = WorkloadVerdict.objects.filter(evaluation=evaluation)
    if verdict:
        rows = rows.filter(verdict=verdict)
    if namespace:
        rows = rows.filter(namespace=namespace)
    return rows.order_by("workload")
