"""The recommender's answers to the topology app's signals (connected in ``apps.ready``)."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction

from recommender import events
from recommender.tasks import evaluate_snapshot, keep_workload_breakdowns


def announce_ingested_snapshot(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    """A snapshot committed by the ingest task: the cluster's open pages say a newer
    snapshot is being evaluated (its evaluation's live update clears the note)."""
    events.publish_snapshot_ingested(snapshot_id)


def evaluate_ingested_snapshot(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    """A snapshot committed by the ingest task: enqueue its evaluation."""
    evaluate_snapshot.delay(snapshot_id)


def keep_breakdowns(sender: Any, *, evaluation: Any, **kwargs: Any) -> None:
    """An evaluation stored: once committed, a worker sums up and caches every pending
    workload's breakdown, so its workload pages open without a scheduler pass."""
    transaction.on_commit(partial(keep_workload_breakdowns.delay, evaluation.pk))
