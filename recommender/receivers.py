"""The recommender's answers to the topology app's signals (connected in ``apps.ready``)."""

from __future__ import annotations

from typing import Any

from recommender.tasks import evaluate_snapshot


def evaluate_ingested_snapshot(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    """A snapshot committed by the ingest task: enqueue its evaluation."""
    evaluate_snapshot.delay(snapshot_id)
