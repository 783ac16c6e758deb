"""One hand-checkable period of idle samples and evaluations (see conftest's docstring)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message

PERIOD_START = datetime(2026, 3, 9, 8, tzinfo=UTC)
PERIOD_END = datetime(2026, 3, 10, 8, tzinfo=UTC)
NOW = datetime(2026, 3, 10, 9, 30, tzinfo=UTC)


def _at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


EVALUATIONS = [  # (taken_at, naive, joint, stranded)
    (_at(8, 8), 0.0, 0.0, 0.0),
    (_at(9, 6), 30.0, 20.0, 10.0),
    (_at(9, 14), 30.0, 20.0, 10.0),
    (_at(9, 20), 12.0, 8.0, 4.0),
    (_at(10, 2), 12.0, 8.0, 4.0),
]
SAMPLES = {  # reservation → [(taken_at, reserved, idle, cost_per_hour)]
    "r1": [
        (_at(8, 8), 8, 1, 2.5),
        (_at(9, 6), 8, 4, 10.0),
        (_at(9, 14), 8, 2, 5.0),
        (_at(10, 2), 8, 0, 0.0),
    ],
    "r2": [(_at(9, 20), 4, 3, 3.0)],
}


@dataclass
class Period:
    cluster: object
    user: object
    reservations: dict[str, object]
    subscription: object


def make_period(
    *,
    recipients: str = "ops@example.test",
    threshold_cost: float = 0.0,
    timezone: str = "UTC",
    hour: int = 8,
    samples: dict[str, list[tuple[datetime, int, int, float]]] | None = None,
    evaluations: list[tuple[datetime, float, float, float]] | None = None,
) -> Period:
    """Rows for the fixture period (see the module docstring); ``samples`` replaces
    SAMPLES, ``evaluations`` EVALUATIONS (samples need their evaluation)."""
    from django.contrib.auth.models import Group, User

    from capacityweb.teams import team_group_name
    from recommender.models import Evaluation
    from reservations.models import IdleSample, Reservation, Subscription
    from topology.models import Cluster, Snapshot

    samples = SAMPLES if samples is None else samples
    evaluations_taken = EVALUATIONS if evaluations is None else evaluations

    cluster = Cluster.objects.create(name="prod-gpu", source_kind="files")
    evaluations = {}
    for index, (taken_at, naive, joint, stranded) in enumerate(evaluations_taken):
        snapshot = Snapshot.objects.create(
            cluster=cluster, taken_at=taken_at, content_hash=f"h{index}", model_json={}
        )
        evaluations[taken_at] = Evaluation.objects.create(
            snapshot=snapshot,
            cluster=cluster,
            taken_at=taken_at,
            result={},
            naive_cost_per_hour=naive,
            joint_cost_per_hour=joint,
            stranded_cost_per_hour=stranded,
        )
    owners = {"r1": ("team-a", 2.5), "r2": ("team-b", 1.0)}
    reservations = {}
    for name, (namespace, price) in owners.items():
        reservations[name] = Reservation.objects.create(
            cluster=cluster,
            name=name,
            owner_namespaces=[namespace],
            spec={"owner": {"namespaces": [namespace]}, "nodeNames": [f"{name}-node"]},
            price_per_gpu_hour=price,
        )
        for taken_at, reserved, idle, cost in samples.get(name, []):
            IdleSample.objects.create(
                reservation=reservations[name],
                evaluation=evaluations[taken_at],
                taken_at=taken_at,
                reserved_gpus=reserved,
                idle_gpus=idle,
                cost_per_hour=cost,
            )
    user = User.objects.create_user("owner", password="unused-password-1")
    for namespace in ("team-a", "team-b"):  # sees both reservations (capacityweb.visibility)
        user.groups.add(Group.objects.get_or_create(name=team_group_name(namespace))[0])
    subscription = Subscription.objects.create(
        user=user,
        recipients=recipients,
        cadence="daily",
        timezone=timezone,
        hour=hour,
        threshold_cost=threshold_cost,
    )
    subscription.clusters.add(cluster)
    return Period(cluster, user, reservations, subscription)


def text_and_html(message: Message) -> tuple[str, str]:
    """The plain-text and HTML parts of a received message, decoded."""
    parts = {}
    for part in message.walk():
        if part.get_content_type() in ("text/plain", "text/html"):
            parts[part.get_content_type()] = part.get_payload(decode=True).decode("utf-8")
    return parts.get("text/plain", ""), parts.get("text/html", "")
