"""Rows the API tests read: users on teams, evaluations, reservations with idle samples."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


def make_evaluation(cluster, taken_at: datetime, reservation_owners=None, **fields: Any):
    """An Evaluation row with ``result``, and its node rows grouped from result["heatmap"] by
    the adapter store_evaluation uses (``reservation_owners``: name → namespaces)."""
    from recommender.adapters import evaluated_nodes
    from recommender.models import EvaluatedNode, Evaluation
    from topology.models import Snapshot

    snapshot = Snapshot.objects.create(
        cluster=cluster,
        taken_at=taken_at,
        content_hash=f"{cluster.pk}-{taken_at.isoformat()}",
        model_json={},
    )
    evaluation = Evaluation.objects.create(
        snapshot=snapshot,
        cluster=cluster,
        taken_at=taken_at,
        result=fields.pop("result", {}),
        reservation_owners=reservation_owners or {},
        **fields,
    )
    cells = evaluation.result.get("heatmap") or []
    EvaluatedNode.objects.bulk_create(evaluated_nodes(evaluation, cells, reservation_owners or {}))
    return evaluation


def make_reservation(cluster, name: str, namespace: str, **fields: Any):
    from reservations.models import Reservation

    spec = fields.pop("spec", {"owner": {"namespaces": [namespace]}, "nodeNames": [name]})
    return Reservation.objects.create(
        cluster=cluster, name=name, owner_namespaces=[namespace], spec=spec, **fields
    )


def add_sample(reservation, evaluation, *, reserved: int, idle: int, cost_per_hour: float):
    from reservations.models import IdleSample

    return IdleSample.objects.create(
        reservation=reservation,
        evaluation=evaluation,
        taken_at=evaluation.taken_at,
        reserved_gpus=reserved,
        idle_gpus=idle,
        cost_per_hour=cost_per_hour,
    )


def make_user(username: str, *, teams: tuple[str, ...] = (), staff: bool = False):
    from django.contrib.auth.models import Group, User

    from capacityweb.teams import team_group_name

    user = User.objects.create_user(username, password="unused-password-1", is_staff=staff)
    for namespace in teams:
        user.groups.add(Group.objects.get_or_create(name=team_group_name(namespace))[0])
    return user


def token_client(user):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client
