"""The recommender's answers to the topology app's signals (connected in ``apps.ready``)."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction

from recommender import selectors
from recommender.tasks import evaluate_snapshot


def evaluate_ingested_snapshot(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    """A snapshot committed by the ingest task: enqueue its evaluation."""
    evaluate_snapshot.delay(snapshot_id)


def keep_breakdowns(sender: Any, *, evaluation: Any, model: Any, **kwargs: Any) -> None:
    """An evaluation stored: once committed, sum up and cache every pending workload's
    breakdown from the model already parsed, so its workload pages open without a
    scheduler pass (a failure is logged; the page then works it out itself)."""
    transaction.on_commit(
        partial(selectors.keep_breakdowns, evaluation=evaluation, model=model), robust=True
    )
