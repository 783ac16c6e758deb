"""ORM ⇄ engine for reservations: rows to Reservation objects, evaluation results to samples.

A row's columns are derived from its spec in ``reservations.services.reservation_columns``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from reservations.models import IdleSample, Reservation
from topology.adapters import PROJECT_API_VERSION
from topology.model import hardware


def reservation_object(row: Reservation) -> dict[str, Any]:
    spec: dict[str, Any] = {
        **row.spec,
        "owner": {**(row.spec.get("owner") or {}), "namespaces": list(row.owner_namespaces)},
        "pricePerGpuHour": row.price_per_gpu_hour,
    }
    for key, value in (("start", row.start), ("end", row.end)):
        if value is not None:
            spec[key] = value.isoformat().replace("+00:00", "Z")
        else:
            spec.pop(key, None)
    return {
        "apiVersion": PROJECT_API_VERSION,
        "kind": "Reservation",
        "metadata": {"name": row.name},
        "spec": spec,
    }


def reserved_gpus(reservation: hardware.Reservation, cluster: hardware.Cluster) -> int:
    """GPUs a reservation holds in the model: its named or selected nodes, or group capacity."""
    if reservation.node_group is not None:
        group = next(
            (g for g in cluster.node_groups if g.name == reservation.node_group.node_group), None
        )
        per_node = group.template.gpu_count if group else 0
        return reservation.node_group.count * per_node
    names = set(reservation.node_names)
    selector = dict(reservation.node_selector)
    total = 0
    for node in cluster.nodes:
        named = node.name in names
        selected = bool(selector) and all(node.labels.get(k) == v for k, v in selector.items())
        if named or selected:
            total += node.gpu_count
    return total


def idle_samples(
    *,
    rows: Iterable[Reservation],
    idle_reservations: Iterable[Mapping[str, Any]],
    cluster: hardware.Cluster,
    evaluation_id: int,
    taken_at: datetime,
) -> list[IdleSample]:
    """One sample per stored reservation active at ``taken_at`` (0 idle when not listed)."""
    idle_by_name = {str(item["name"]): item for item in idle_reservations}
    model_by_name = {r.name: r for r in cluster.reservations}
    samples = []
    for row in rows:
        model = model_by_name.get(row.name)
        if model is None or not model.active_at(taken_at):
            continue
        idle = idle_by_name.get(row.name) or {}
        samples.append(
            IdleSample(
                reservation=row,
                evaluation_id=evaluation_id,
                taken_at=taken_at,
                reserved_gpus=int(idle.get("reservedGpus") or reserved_gpus(model, cluster)),
                idle_gpus=int(idle.get("idleGpus") or 0),
                cost_per_hour=float(idle.get("costPerHour") or 0.0),
            )
        )
    return samples
