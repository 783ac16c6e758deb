"""Reads for reservations: who sees which reservation, and the two cost reports.

    IdleSample rows ─► step function per reservation ─► idle GPU-hours, idle $
        (reservations.idle.idle_gpu_hours; the sample before ``start`` carries in)
                     └─► grouped by reservation | team | node_group | gpu_model
    Evaluation rows ─► step function per cluster ─► naive $, joint $, stranded $

Every report is a bounded number of queries whatever the number of rows:
one for the reservations (plus node groups and the latest evaluations when
grouping by node group or GPU model) and one for the samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection
from django.db.models import Max, OuterRef, Q, QuerySet, Subquery

from capacityweb import visibility
from capacityweb.cache import stable_digest
from capacityweb.teams import sees_all_teams, team_label, team_namespaces
from recommender.models import Evaluation
from reservations.idle import idle_gpu_hours
from reservations.models import IdleSample, Reservation, Subscription
from topology.models import Cluster, NodeGroup

GROUP_BY_CHOICES = ("reservation", "team", "node_group", "gpu_model")
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
UNKNOWN = "unknown"

# every report row says what its money is in and the period it covers (issue 34): a CSV
# read on its own is not a bare number of unknown currency over an unknown range
PERIOD_COLUMNS = ("currency", "period_start", "period_end", "period_hours")
IDLE_REPORT_COLUMNS = (
    "group",
    "reservations",
    "reserved_gpu_hours",
    "idle_gpu_hours",
    "idle_cost",
    *PERIOD_COLUMNS,
)
WASTE_MONEY_COLUMNS = ("naive_cost", "joint_cost", "stranded_cost", "savings")
WASTE_REPORT_COLUMNS = ("cluster", "evaluations", *WASTE_MONEY_COLUMNS, *PERIOD_COLUMNS)


def with_period(row: dict[str, Any], start: datetime, end: datetime) -> dict[str, Any]:
    """``row`` with the currency its money is in (``CURRENCY``) and the period it covers."""
    hours = round((end - start).total_seconds() / 3600, 6)
    period = {"period_start": start, "period_end": end, "period_hours": hours}
    return {**row, "currency": settings.CURRENCY, **period}


# --- visibility -------------------------------------------------------------------


def visible_reservations(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Reservation]:
    """Reservations whose owner namespaces intersect the user's teams (all for staff).

    Filtered by id in Python over (id, owner_namespaces) so it runs on SQLite
    too, where JSON containment lookups do not exist: two queries in all.
    """
    reservations = Reservation.objects.select_related("cluster")
    if sees_all_teams(user):
        return reservations
    teams = team_namespaces(user)
    visible_ids = [
        reservation_id
        for reservation_id, owners in Reservation.objects.values_list("id", "owner_namespaces")
        if teams & set(owners or ())
    ]
    return reservations.filter(id__in=visible_ids)


def own_subscriptions(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Subscription]:
    return Subscription.objects.filter(user_id=user.pk).prefetch_related("clusters")


# --- the idle reservations report ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReservationIdle:
    """One reservation's idle figures over a range."""

    reservation_id: int
    name: str
    cluster: str
    team: str
    owners: tuple[str, ...]
    reserved_gpu_hours: float
    idle_gpu_hours: float
    idle_cost: float


def samples_in_range(
    reservations: QuerySet[Reservation], start: datetime, end: datetime
) -> QuerySet[IdleSample]:
    """Samples taken in [start, end) plus, per reservation, the last one before ``start``.

    The earlier sample matters: its value holds until the next sample, so it
    covers the beginning of the range.
    """
    last_before_start = (
        IdleSample.objects.filter(reservation=OuterRef("reservation"), taken_at__lte=start)
        .values("reservation")
        .annotate(latest=Max("taken_at"))
        .values("latest")
    )
    return (
        IdleSample.objects.filter(reservation__in=reservations, taken_at__lt=end)
        .filter(Q(taken_at__gte=start) | Q(taken_at=Subquery(last_before_start)))
        .order_by("reservation_id", "taken_at")
        .values_list("reservation_id", "taken_at", "reserved_gpus", "idle_gpus", "cost_per_hour")
    )


def reservation_idle(
    reservations: QuerySet[Reservation], start: datetime, end: datetime
) -> list[ReservationIdle]:
    """Idle GPU-hours and $ per reservation over [start, end), clipped to its own window.

    Cost integrates the samples' ``cost_per_hour`` (idle GPUs × the price at
    the time) with the same step function as the GPU-hours.
    """
    rows = list(reservations.select_related("cluster"))
    series: dict[int, list[tuple[datetime, int, int, float]]] = defaultdict(list)
    for reservation_id, taken_at, reserved, idle, cost in samples_in_range(
        reservations, start, end
    ):
        series[reservation_id].append((taken_at, reserved, idle, cost))
    result = []
    for reservation in rows:
        window_start = max(start, reservation.start) if reservation.start else start
        window_end = min(end, reservation.end) if reservation.end else end
        points = series.get(reservation.id, [])
        result.append(
            ReservationIdle(
                reservation_id=reservation.id,
                name=reservation.name,
                cluster=reservation.cluster.name,
                team=team_label(reservation.owner_namespaces or ()),
                owners=tuple(reservation.owner_namespaces or ()),
                reserved_gpu_hours=_integral(points, 1, window_start, window_end),
                idle_gpu_hours=_integral(points, 2, window_start, window_end),
                idle_cost=_integral(points, 3, window_start, window_end),
            )
        )
    return result


def _integral(
    points: Sequence[tuple[Any, ...]], column: int, start: datetime, end: datetime
) -> float:
    return idle_gpu_hours([(point[0], point[column]) for point in points], start, end)


def reservations_for_report(
    *, cluster_ids: Iterable[int] | None = None, team: str = ""
) -> QuerySet[Reservation]:
    """Reservations of these clusters (all when None), of one team's namespace if given."""
    reservations = Reservation.objects.all()
    if cluster_ids is not None:
        reservations = reservations.filter(cluster_id__in=list(cluster_ids))
    if team:
        team_ids = [
            reservation_id
            for reservation_id, owners in reservations.values_list("id", "owner_namespaces")
            if team in (owners or ())
        ]
        reservations = reservations.filter(id__in=team_ids)
    return reservations


def idle_report(
    *,
    start: datetime,
    end: datetime,
    group_by: str = "reservation",
    cluster_ids: Iterable[int] | None = None,
    team: str = "",
    viewer: visibility.Viewer = visibility.STAFF,
) -> dict[str, Any]:
    """The idle-reservations report: rows per group (largest cost first) and totals.

    The viewer's reservations are grouped as asked; every other team's are one last row
    ``reserved (another team)`` with their GPU-hours and no cost (capacityweb.visibility).
    Totals count every GPU-hour, and the cost of the rows shown.
    """
    reservations = reservations_for_report(cluster_ids=cluster_ids, team=team)
    per_reservation = reservation_idle(reservations, start, end)
    shown = [row for row in per_reservation if viewer.sees(row.owners)]
    others = [row for row in per_reservation if not viewer.sees(row.owners)]
    keys = _group_keys(reservations, shown, group_by)
    groups: dict[str, list[ReservationIdle]] = defaultdict(list)
    for row in shown:
        groups[keys[row.reservation_id]].append(row)
    rows = [_summed(group, members) for group, members in groups.items()]
    rows.sort(key=lambda row: (-row["idle_cost"], row["group"]))
    totals = _summed("total", per_reservation)
    if others:
        rows.append({**_summed(visibility.OTHER_TEAM, others), "idle_cost": None})
        totals["idle_cost"] = round(sum(m.idle_cost for m in shown), 6)
    return {
        "start": start,
        "end": end,
        "group_by": group_by,
        "rows": [with_period(row, start, end) for row in rows],
        "totals": with_period(totals, start, end),
    }


def idle_report_version(group_by: str = "reservation") -> str:
    """A digest that changes whenever ``idle_report(group_by=...)`` could.

    Samples are only ever added (a re-stored evaluation's samples are deleted and
    written anew, with new ids) or pruned from the oldest, so the lowest and
    highest sample id stand for the samples; reservations (and their clusters'
    names) are read whole. Grouping by node group or GPU model also reads the
    node groups and the latest evaluations' GPU cells. One query (two more for
    those groupings), written out: it runs on every cached report request, and
    the ORM's building and compiling of it cost more than the query.
    """
    quote = connection.ops.quote_name
    sample, reservation = IdleSample._meta.db_table, Reservation._meta.db_table
    sql = f"""
        SELECT b.first_id, b.last_id, r.id, r.cluster_id, c.name, r.name,
               r.owner_namespaces, r.spec, r.start, r.{quote("end")}
        FROM (SELECT MIN(id) AS first_id, MAX(id) AS last_id FROM {sample}) b
        LEFT JOIN ({reservation} r JOIN {Cluster._meta.db_table} c ON c.id = r.cluster_id)
            ON 1 = 1
        ORDER BY r.id
    """  # noqa: S608 - table and column names from the models, no input
    with connection.cursor() as cursor:
        cursor.execute(sql)
        parts: list[Any] = [cursor.fetchall()]
    if group_by in ("node_group", "gpu_model"):
        parts.append(
            list(NodeGroup.objects.order_by("id").values_list("id", "cluster_id", "name", "spec"))
        )
        parts.append(Evaluation.objects.aggregate(last=Max("id")))
    return stable_digest(parts)


def _summed(group: str, members: Sequence[ReservationIdle]) -> dict[str, Any]:
    return {
        "group": group,
        "reservations": len(members),
        "reserved_gpu_hours": round(sum(m.reserved_gpu_hours for m in members), 6),
        "idle_gpu_hours": round(sum(m.idle_gpu_hours for m in members), 6),
        "idle_cost": round(sum(m.idle_cost for m in members), 6),
    }


def _group_keys(
    reservations: QuerySet[Reservation], rows: Sequence[ReservationIdle], group_by: str
) -> dict[int, str]:
    if group_by == "reservation":
        return {row.reservation_id: f"{row.cluster}/{row.name}" for row in rows}
    if group_by == "team":
        return {row.reservation_id: row.team for row in rows}
    dimensions = reservation_dimensions(reservations)
    index = 0 if group_by == "node_group" else 1
    return {row.reservation_id: dimensions[row.reservation_id][index] for row in rows}


def reservation_dimensions(reservations: QuerySet[Reservation]) -> dict[int, tuple[str, str]]:
    """Per reservation: (node group, GPU model) it reserves, ``unknown`` when not knowable.

    From the GPUs the cluster's latest evaluation marks as this reservation's
    (heatmap cells carry ``reservation``, ``nodeGroup`` and ``model``), plus the
    node group a reservation of not-yet-provisioned capacity names
    (``spec.nodeGroup``) with its template's ``nvidia.com/gpu.product``.
    Several groups or models are joined with ``+``.
    """
    rows = list(reservations)
    cluster_ids = {reservation.cluster_id for reservation in rows}
    templates = {
        (cluster_id, name): ((spec or {}).get("template") or {}).get("labels") or {}
        for cluster_id, name, spec in NodeGroup.objects.filter(
            cluster_id__in=cluster_ids
        ).values_list("cluster_id", "name", "spec")
    }
    seen = reserved_gpu_cells(cluster_ids)
    result = {}
    for reservation in rows:
        groups, models = seen.get((reservation.cluster_id, reservation.name), (set(), set()))
        groups, models = set(groups), set(models)
        named_group = ((reservation.spec or {}).get("nodeGroup") or {}).get("name")
        if named_group:
            groups.add(named_group)
            template_model = templates.get((reservation.cluster_id, named_group), {}).get(
                GPU_PRODUCT_LABEL
            )
            if template_model:
                models.add(template_model)
        result[reservation.id] = (
            "+".join(sorted(groups)) or UNKNOWN,
            "+".join(sorted(models)) or UNKNOWN,
        )
    return result


def reservation_names_of_team(*, cluster_id: int, team: str) -> frozenset[str]:
    """Names of the cluster's reservations that ``team`` (a namespace) owns (one query)."""
    return frozenset(
        reservation.name
        for reservation in Reservation.objects.filter(cluster_id=cluster_id).only(
            "name", "owner_namespaces"
        )
        if team in (reservation.owner_namespaces or [])
    )


def latest_evaluations(cluster_ids: Iterable[int] | None = None) -> QuerySet[Evaluation]:
    """Each cluster's most recent evaluation (one query)."""
    latest = Evaluation.objects.filter(cluster=OuterRef("cluster")).order_by("-taken_at")
    evaluations = Evaluation.objects.filter(id=Subquery(latest.values("id")[:1]))
    if cluster_ids is not None:
        evaluations = evaluations.filter(cluster_id__in=list(cluster_ids))
    return evaluations


def reserved_gpu_cells(
    cluster_ids: Iterable[int],
) -> dict[tuple[int, str], tuple[set[str], set[str]]]:
    """(cluster, reservation name) → (node groups, GPU models) of its GPUs, latest evaluation."""
    seen: dict[tuple[int, str], tuple[set[str], set[str]]] = {}
    for cluster_id, result in latest_evaluations(cluster_ids).values_list("cluster_id", "result"):
        for cell in (result or {}).get("heatmap") or ():
            name = cell.get("reservation") if isinstance(cell, Mapping) else None
            if not name:
                continue
            groups, models = seen.setdefault((cluster_id, name), (set(), set()))
            if cell.get("nodeGroup"):
                groups.add(str(cell["nodeGroup"]))
            if cell.get("model"):
                models.add(str(cell["model"]))
    return seen


# --- the waste report ------------------------------------------------------------------


def evaluations_in_range(
    cluster_ids: Iterable[int] | None, start: datetime, end: datetime
) -> QuerySet[Evaluation]:
    """Evaluations in [start, end) plus, per cluster, the last one before ``start``."""
    last_before_start = (
        Evaluation.objects.filter(cluster=OuterRef("cluster"), taken_at__lte=start)
        .order_by("-taken_at")
        .values("taken_at")[:1]
    )
    evaluations = Evaluation.objects.filter(taken_at__lt=end).filter(
        Q(taken_at__gte=start) | Q(taken_at=Subquery(last_before_start))
    )
    if cluster_ids is not None:
        evaluations = evaluations.filter(cluster_id__in=list(cluster_ids))
    return evaluations.order_by("cluster_id", "taken_at")


def waste_report(
    *, start: datetime, end: datetime, cluster_ids: Iterable[int] | None = None
) -> dict[str, Any]:
    """Naive vs joint spend and the naive autoscaler's stranded $ over [start, end), per cluster.

    Each evaluation's $/h holds until the next evaluation (step function), so
    the $ is the integral of $/h over the range.
    """
    cluster_ids = None if cluster_ids is None else list(cluster_ids)
    series: dict[int, list[tuple[datetime, float, float, float]]] = defaultdict(list)
    rows_in_range: dict[int, int] = defaultdict(int)
    for cluster_id, taken_at, naive, joint, stranded in evaluations_in_range(
        cluster_ids, start, end
    ).values_list(
        "cluster_id",
        "taken_at",
        "naive_cost_per_hour",
        "joint_cost_per_hour",
        "stranded_cost_per_hour",
    ):
        series[cluster_id].append((taken_at, naive, joint, stranded))
        rows_in_range[cluster_id] += int(taken_at >= start)
    clusters = (
        Cluster.objects.all()
        if cluster_ids is None
        else Cluster.objects.filter(id__in=list(cluster_ids))
    )
    rows = []
    for cluster_id, name in clusters.order_by("name").values_list("id", "name"):
        points = series.get(cluster_id, [])
        naive = _integral(points, 1, start, end)
        joint = _integral(points, 2, start, end)
        rows.append(
            {
                "cluster": name,
                "evaluations": rows_in_range[cluster_id],
                "naive_cost": round(naive, 6),
                "joint_cost": round(joint, 6),
                "stranded_cost": round(_integral(points, 3, start, end), 6),
                "savings": round(naive - joint, 6),
            }
        )
    totals = {
        column: round(sum(row[column] for row in rows), 6)
        for column in ("evaluations", *WASTE_MONEY_COLUMNS)
    }
    return {
        "start": start,
        "end": end,
        "rows": [with_period(row, start, end) for row in rows],
        "totals": with_period({"cluster": "total", **totals}, start, end),
    }


def idle_cost_seen(*, evaluation_ids: Iterable[int], viewer: visibility.Viewer) -> dict[int, float]:
    """Per evaluation, the idle $/h of the reservations ``viewer`` sees, from their idle
    samples (one query; an evaluation without a sample the viewer sees is absent)."""
    samples: dict[int, list[tuple[float, Any]]] = defaultdict(list)
    rows = IdleSample.objects.filter(evaluation_id__in=list(evaluation_ids)).values_list(
        "evaluation_id", "cost_per_hour", "reservation__owner_namespaces"
    )
    for evaluation_id, cost, owners in rows:
        samples[evaluation_id].append((cost, owners))
    return {pk: round(viewer.idle_cost(items), 6) for pk, items in samples.items()}
