"""What the recommender tells the apps above it, without importing them.

``evaluation_stored(evaluation, model, result)`` is sent inside
``services.store_evaluation``'s transaction, after the evaluation's own rows
are replaced: a receiver writes the rows it derives from the evaluation
(the reservations app: its idle samples) in the same transaction, so a stored
evaluation never lacks them and a re-stored one never keeps stale ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.dispatch import Signal

from recommender.models import Evaluation
from topology.model import hardware

evaluation_stored = Signal()  # kwargs: evaluation, model, result


def send_evaluation_stored(
    *, evaluation: Evaluation, model: hardware.Cluster, result: Mapping[str, Any]
) -> None:
    evaluation_stored.send(sender=Evaluation, evaluation=evaluation, model=model, result=result)
