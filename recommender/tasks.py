"""Evaluation task (thin): store the evaluation of a snapshot, then publish it live."""

from __future__ import annotations

from celery import shared_task

from recommender import events, services
from topology.models import Snapshot


@shared_task(name="recommender.tasks.evaluate_snapshot", acks_late=True)
def evaluate_snapshot(snapshot_id: int) -> int | None:
    snapshot = Snapshot.objects.filter(pk=snapshot_id).first()
    if snapshot is None:
        return None
    evaluation = services.store_evaluation(snapshot=snapshot)
    events.publish_evaluation(evaluation)
    return evaluation.pk
