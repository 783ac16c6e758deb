"""Evaluation task (thin): store the evaluation of a snapshot, then publish it live.

Only the cluster's latest evaluation goes out live: a snapshot from an ingester
whose clock runs behind is stored and evaluated (history keeps it), but pushing
it would roll every open page back to an older state.
"""

from __future__ import annotations

from celery import shared_task

from recommender import events, selectors, services
from recommender.models import Evaluation
from topology.models import Snapshot


@shared_task(name="recommender.tasks.evaluate_snapshot", acks_late=True)
def evaluate_snapshot(snapshot_id: int) -> int | None:
    snapshot = Snapshot.objects.filter(pk=snapshot_id).first()
    if snapshot is None:
        return None
    evaluation = services.store_evaluation(snapshot=snapshot)
    latest = selectors.latest_evaluation(cluster_id=evaluation.cluster_id)
    if latest is not None and latest.pk == evaluation.pk:
        events.publish_evaluation(evaluation)
    return evaluation.pk


@shared_task(name="recommender.tasks.keep_workload_breakdowns", acks_late=True)
def keep_workload_breakdowns(evaluation_id: int) -> int:
    """Cache every pending workload's breakdown summary of a stored evaluation, so its
    workload pages open without a scheduler pass; the number kept (0: it is gone).

    A task of its own, after the evaluation's live update: at 10,000 nodes the pass
    and the summaries take seconds (docs/BENCHMARKS.md) that open pages should not wait.
    """
    evaluation = Evaluation.objects.select_related("snapshot").filter(pk=evaluation_id).first()
    if evaluation is None:
        return 0
    return selectors.keep_breakdowns(evaluation=evaluation)
