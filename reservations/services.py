"""Writes of the reservations app: reservations, a cluster's configuration (node groups and
reservations from YAML/JSON) and digest subscriptions (one transaction each).

Reservation specs arrive already accepted by ``topology.kube`` (the API's
serializer runs the parser); the row's columns are derived from the spec here,
so the spec stays the one source of truth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from reservations.models import Reservation, Subscription
from topology.kube import parse_objects
from topology.models import Cluster
from topology.services import save_node_groups
from topology.sourceread import SourcedObject


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


@transaction.atomic
def save_reservation(
    *,
    cluster: Cluster,
    name: str,
    spec: Mapping[str, Any],
    instance: Reservation | None = None,
) -> Reservation:
    """Create (instance None) or update one reservation from its spec."""
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
    reservations = [obj for _src, obj in wanted if obj["kind"] == "Reservation"]
    for obj in reservations:
        name = obj["metadata"]["name"]
        save_reservation(
            cluster=cluster, name=name, spec=obj.get("spec") or {}, instance=existing.get(name)
        )
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
