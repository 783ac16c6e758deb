"""The reservations app's answers to the signals of the apps below it (connected in
``apps.ready``): its rows as stored configuration of an ingest, its idle samples
of each stored evaluation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recommender.models import Evaluation
from reservations.adapters import idle_samples, reservation_object
from reservations.models import IdleSample, Reservation
from topology.model import hardware
from topology.models import Cluster


def stored_reservations(sender: Any, *, cluster: Cluster, **kwargs: Any) -> list[dict[str, Any]]:
    """The cluster's Reservation rows as capacityweb.io/v1alpha1 objects, for the snapshot."""
    return [reservation_object(row) for row in Reservation.objects.filter(cluster=cluster)]


def store_idle_samples(
    sender: Any,
    *,
    evaluation: Evaluation,
    model: hardware.Cluster,
    result: Mapping[str, Any],
    **kwargs: Any,
) -> None:
    """Replace the evaluation's idle samples (inside the evaluation's transaction)."""
    IdleSample.objects.filter(evaluation=evaluation).delete()
    IdleSample.objects.bulk_create(
        idle_samples(
            rows=Reservation.objects.filter(cluster_id=evaluation.cluster_id),
            idle_reservations=result.get("idleReservations") or [],
            cluster=model,
            evaluation_id=evaluation.pk,
            taken_at=evaluation.taken_at,
        )
    )
