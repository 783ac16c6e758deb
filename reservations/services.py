"""Writes of the reservations app: reservations, a cluster's configuration (node groups and
reservations from YAML/JSON) and digest subscriptions (one transaction each).

Reservation specs arrive already accepted by ``topology.kube.parse`` (the API's
serializer runs the parser); the row's columns are derived from the spec here,
so the spec stays the one source of truth. Every path that writes a reservation
(API, admin, YAML in admin, ``load_config``, the demo) goes through
``save_reservation``, which checks it against the cluster first
(``check_reservation``): who may own it, whether what it reserves is the cluster's,
and whether another team already holds those GPUs then (``reservations.overlap``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from capacityweb.teams import sees_all_teams, team_namespaces
from reservations.models import Reservation, Subscription
from reservations.overlap import Claim, first_conflict
from topology.ingest.sourceread import SourcedObject
from topology.kube.parse import parse_objects
from topology.model.hardware import ModelError
from topology.models import Cluster, NodeGroup, Snapshot
from topology.services import save_node_groups


def _when(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def reservation_columns(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Column values of a Reservation row from its (validated) spec."""
    return {
        "spec": dict(spec),
        "owner_namespaces": sorted((spec.get("owner") or {}).get("namespaces") or []),
        "price_per_gpu_hour": float(spec.get("pricePerGpuHour") or 0.0),
        "start": _when(spec.get("start")),
        "end": _when(spec.get("end")),
    }


Caller = AbstractBaseUser | AnonymousUser | None  # None: an operator (CLI, admin, demo)


def claim_of(name: str, spec: Mapping[str, Any]) -> Claim:
    """What a (validated) reservation spec holds, for ``reservations.overlap``."""
    group = spec.get("nodeGroup") or {}
    return Claim(
        name=name,
        owners=frozenset((spec.get("owner") or {}).get("namespaces") or ()),
        node_names=tuple(spec.get("nodeNames") or ()),
        node_selector=dict(spec.get("nodeSelector") or {}),
        node_group=group.get("name"),
        node_group_count=int(group.get("count") or 0),
        start=_when(spec.get("start")),
        end=_when(spec.get("end")),
    )


def cluster_inventory(cluster: Cluster) -> tuple[dict[str, dict[str, str]] | None, dict[str, int]]:
    """The cluster's nodes (name → labels) as its latest snapshot has them (None: no snapshot
    yet, nothing to check names against) and each node group's maxSize (stored groups over
    the snapshot's). Two queries."""
    latest = (
        Snapshot.objects.filter(cluster=cluster)
        .order_by("-taken_at", "-id")
        .values_list("model_json__cluster__nodes", "model_json__cluster__node_groups")
        .first()
    )
    if latest is None:
        nodes, sizes = None, {}
    else:
        nodes = {node["name"]: node.get("labels") or {} for node in latest[0] or ()}
        sizes = {group["name"]: int(group.get("max_size") or 0) for group in latest[1] or ()}
    sizes.update(NodeGroup.objects.filter(cluster=cluster).values_list("name", "max_size"))
    return nodes, sizes


def check_reservation(
    *, cluster: Cluster, name: str, spec: Mapping[str, Any], caller: Caller = None
) -> None:
    """Refuse (ModelError naming the field) a reservation the caller may not make.

    - every owner namespace is one of the caller's teams (staff and operators: any);
    - the nodes it names are nodes of the cluster (its latest snapshot; with none yet
      there is nothing to check names against) and its node group is the cluster's;
    - no reservation of other owners holds the same GPUs in an overlapping window.
    """
    obj = f"Reservation/{name}"
    claim = claim_of(name, spec)
    if caller is not None and not sees_all_teams(caller):
        foreign = sorted(claim.owners - team_namespaces(caller))
        if foreign:
            reason = f"{', '.join(foreign)}: not one of your teams (every owner must be)"
            raise ModelError("", obj, "spec.owner.namespaces", reason)
    nodes, group_sizes = cluster_inventory(cluster)
    for index, node in enumerate(claim.node_names):
        if nodes is not None and node not in nodes:
            reason = f"{node!r}: no such node in cluster {cluster.name}"
            raise ModelError("", obj, f"spec.nodeNames[{index}]", reason)
    if claim.node_group is not None and claim.node_group not in group_sizes:
        reason = f"{claim.node_group!r}: no such node group in cluster {cluster.name}"
        raise ModelError("", obj, "spec.nodeGroup.name", reason)
    others = [
        claim_of(other.name, other.spec)
        for other in Reservation.objects.filter(cluster=cluster).exclude(name=name)
    ]
    conflict = first_conflict(claim, others, nodes=nodes or {}, group_sizes=group_sizes)
    if conflict is not None:
        holder = _holder(conflict.other, caller)
        raise ModelError("", obj, conflict.field, f"{conflict.reason} by {holder} then")


def check_may_change(*, reservation: Reservation, caller: Caller = None) -> None:
    """Refuse a change or deletion unless every current owner is one of the caller's teams
    (staff and operators: any): a co-owner may not drop or delete the other team's share."""
    if caller is None or sees_all_teams(caller):
        return
    foreign = sorted(set(reservation.owner_namespaces or ()) - team_namespaces(caller))
    if foreign:
        reason = f"{', '.join(foreign)}: co-owns it and is not one of your teams"
        raise ModelError("", f"Reservation/{reservation.name}", "spec.owner.namespaces", reason)


@transaction.atomic
def delete_reservation(*, reservation: Reservation, caller: Caller = None) -> None:
    check_may_change(reservation=reservation, caller=caller)
    reservation.delete()


def _holder(other: Claim, caller: Caller) -> str:
    """The other reservation by name where the caller may see it, else only that it is
    another team's (the visibility policy: capacityweb.visibility)."""
    if caller is None or sees_all_teams(caller) or other.owners & team_namespaces(caller):
        return f"Reservation/{other.name} ({', '.join(sorted(other.owners))})"
    return "another team's reservation"


NAME_NOT_AVAILABLE = "not available in this cluster; choose another name"


class NameNotAvailable(ModelError):
    """A new reservation's name is taken in its cluster. Said the same whoever holds it:
    the refusal must not tell another team that a reservation of that name exists, nor
    whose it is (a name is the cluster's: the reservation taint carries it)."""

    def __init__(self, name: str) -> None:
        super().__init__("", f"Reservation/{name}", "metadata.name", NAME_NOT_AVAILABLE)


@transaction.atomic
def save_reservation(
    *,
    cluster: Cluster,
    name: str,
    spec: Mapping[str, Any],
    instance: Reservation | None = None,
    caller: Caller = None,
) -> Reservation:
    """Create (instance None) or update one reservation from its spec, once
    ``check_reservation`` accepts it. The cluster's row is locked meanwhile, so two
    writers cannot both pass the overlap check with GPUs each other claims, nor both
    take one name (NameNotAvailable, checked first: it reveals nothing of the other)."""
    Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
    if instance is None and Reservation.objects.filter(cluster=cluster, name=name).exists():
        raise NameNotAvailable(name)
    if instance is not None:
        check_may_change(reservation=instance, caller=caller)
    check_reservation(cluster=cluster, name=name, spec=spec, caller=caller)
    columns = reservation_columns(spec)
    if instance is None:
        return Reservation.objects.create(cluster=cluster, name=name, **columns)
    for field, value in columns.items():
        setattr(instance, field, value)
    instance.save(update_fields=list(columns))
    return instance


@transaction.atomic
def load_configuration(*, cluster: Cluster, objects: Sequence[SourcedObject]) -> dict[str, int]:
    """Save the NodeGroup and Reservation objects of a YAML/JSON input; all or nothing.

    Every object is validated by ``kube.parse_objects`` first; the first error
    aborts the load (raised as the ModelError naming object, field and reason).
    """
    wanted = [(src, obj) for src, obj in objects if obj.get("kind") in ("NodeGroup", "Reservation")]
    parsed = parse_objects(wanted, cluster_name=cluster.name)
    if parsed.errors:
        raise parsed.errors[0]
    groups = [obj for _src, obj in wanted if obj["kind"] == "NodeGroup"]
    save_node_groups(cluster=cluster, objects=groups)
    existing = {r.name: r for r in Reservation.objects.filter(cluster=cluster)}
    reservations = [(src, obj) for src, obj in wanted if obj["kind"] == "Reservation"]
    for source, obj in reservations:
        name = obj["metadata"]["name"]
        try:
            save_reservation(
                cluster=cluster, name=name, spec=obj.get("spec") or {}, instance=existing.get(name)
            )
        except ModelError as error:  # named by the file it came from, as the parser's are
            raise ModelError(source, error.object, error.field, error.reason) from error
    return {"nodeGroups": len(groups), "reservations": len(reservations)}


@transaction.atomic
def save_subscription(
    *,
    user: AbstractBaseUser,
    fields: Mapping[str, Any],
    clusters: Iterable[Cluster] | None = None,
    instance: Subscription | None = None,
) -> Subscription:
    """Create or update a subscription of ``user``; ``clusters`` None keeps the current set."""
    subscription = instance or Subscription(user=user)
    for field, value in fields.items():
        setattr(subscription, field, value)
    subscription.save()
    if clusters is not None:
        subscription.clusters.set(list(clusters))
    return subscription
