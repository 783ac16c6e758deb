"""The recommender's answers to the topology app's signals (connected in ``apps.ready``)."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction

from recommender import events, selectors
from recommender.moves import reports as moves
from recommender.tasks import (
    evaluate_snapshot,
    find_moves,
    keep_workload_breakdowns,
    work_out_part,
)


def announce_ingested_snapshot(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    """A snapshot committed by the ingest task: the cluster's open pages say a newer
    snapshot is being evaluated (its evaluation's live update clears the note)."""
    events.publish_snapshot_ingested(snapshot_id)


def evaluate_ingested_snapshot(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    """A snapshot committed by the ingest task: enqueue its evaluation."""
    evaluate_snapshot.delay(snapshot_id)


def evaluate_unevaluated_latest(sender: Any, *, cluster_id: int, **kwargs: Any) -> None:
    """An ingest found nothing new: if the cluster's latest snapshot still has no
    evaluation (nor a recorded skip or failure), enqueue it again."""
    latest = selectors.latest_unevaluated_snapshot(cluster_id=cluster_id)
    if latest is not None:
        evaluate_snapshot.delay(latest.pk)


def keep_breakdowns(sender: Any, *, evaluation: Any, **kwargs: Any) -> None:
    """An evaluation stored: once committed, a worker sums up and caches every pending
    workload's breakdown, so its workload pages open without a scheduler pass."""
    transaction.on_commit(partial(keep_workload_breakdowns.delay, evaluation.pk))


def find_moves_later(sender: Any, *, evaluation: Any, **kwargs: Any) -> None:
    """An evaluation stored: its earlier move report (a re-stored snapshot's) is dropped in
    the same transaction, and once committed a worker works out the new one."""
    moves.forget_moves(evaluation=evaluation)
    transaction.on_commit(partial(find_moves.delay, evaluation.pk))


def work_out_parts_later(sender: Any, *, evaluation: Any, **kwargs: Any) -> None:
    """A critical pass stored (its deferred parts in ``missing``): once committed, a task
    per part works it out and stores it into this write of the evaluation
    (``recommender.parts``); a whole evaluation stored has none left."""
    stored_at = evaluation.stored_at.isoformat()
    for part in evaluation.missing or ():
        transaction.on_commit(partial(work_out_part.delay, evaluation.pk, stored_at, part))
