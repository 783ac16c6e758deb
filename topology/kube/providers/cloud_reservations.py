"""Reservations from the clouds' own exports, mapped to the project's Reservation.

Read as they come out of the tools people already run:

- ``aws ec2 describe-capacity-reservations`` (JSON ``{"CapacityReservations": [...]}``,
  fields of the EC2 API's ``CapacityReservation``: ``CapacityReservationId``,
  ``InstanceType``, ``AvailabilityZone``, ``TotalInstanceCount``,
  ``AvailableInstanceCount``, ``State``, ``StartDate``, ``EndDate``,
  ``ReservationType`` ``default`` | ``capacity-block``, ``Tags``);
- ``gcloud compute reservations list --format=json`` (a JSON list of
  ``compute#reservation``: ``name``, ``zone``, ``status``,
  ``specificReservation.count`` / ``inUseCount`` /
  ``instanceProperties.machineType``);
- Karpenter's ``EC2NodeClass`` ``status.capacityReservations``
  (aws/karpenter-provider-aws ``pkg/apis/v1/ec2nodeclass_status.go``): the
  reservations Karpenter launches into; its nodes carry the label
  ``karpenter.k8s.aws/capacity-reservation-id``.

How one maps to the model::

    in use (Total - Available)  ─► Reservation <id>         nodeSelector instance type + zone
                                                            (Karpenter: capacity-reservation-id)
    not used (Available)        ─► Reservation <id>-unused  nodeGroup {group of that type, count}

Owner: the AWS tag ``capacityweb.io/owner-namespaces`` (comma-separated
namespaces); without it the reservation is unowned — nobody's pods are
placed on it by the joint plan, its idle GPUs still count, and a notice says
so. Price per GPU-hour: an On-Demand Capacity Reservation is billed at the
on-demand rate whether used or not (price table / GPUs of the type); a
Capacity Block's fee is paid up front and is not in the export: 0, with a
notice. Expired, cancelled or failed reservations are skipped with a notice.

Pure: no Django, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from topology.kube.fields import ObjectContext
from topology.kube.providers.prices import INSTANCE_TYPE_LABEL, PriceTable
from topology.model.hardware import ModelError, NodeGroup, Reservation, ReservedNodeGroupCapacity

AWS_API_VERSION = "ec2.amazonaws.com/v1"  # the reader's name for the export, not an API group
AWS_KIND = "CapacityReservation"
GCP_API_VERSION = "compute.googleapis.com/v1"
GCP_KIND = "compute#reservation"
OWNER_TAG = "capacityweb.io/owner-namespaces"
ZONE_LABEL = "topology.kubernetes.io/zone"
KARPENTER_RESERVATION_LABEL = "karpenter.k8s.aws/capacity-reservation-id"
LIVE_AWS_STATES = ("active", "scheduled")
AWS_SOURCE = "aws ec2 describe-capacity-reservations"
GCP_SOURCE = "gcloud compute reservations list"
KARPENTER_SOURCE = "Karpenter EC2NodeClass status.capacityReservations"


@dataclass(frozen=True, slots=True)
class CloudReservation:
    """One cloud reservation before it is tied to the cluster's groups and prices."""

    ctx: ObjectContext
    name: str
    source: str
    instance_type: str
    zone: str
    total: int | None  # None: the export does not say (Karpenter status)
    available: int
    capacity_block: bool
    owner_namespaces: tuple[str, ...]
    start: datetime | None
    end: datetime | None
    node_selector: Mapping[str, str]


def export_objects(document: Any) -> list[dict[str, Any]] | None:
    """A cloud export as objects ``topology.kube.parse`` dispatches on; None if it is not one."""
    if (
        isinstance(document, dict)
        and "kind" not in document
        and isinstance(document.get("CapacityReservations"), list)
    ):
        return [
            _wrapped(AWS_API_VERSION, AWS_KIND, item.get("CapacityReservationId"), item)
            for item in document["CapacityReservations"]
            if isinstance(item, dict)
        ]
    if (
        isinstance(document, list)
        and document
        and all(isinstance(i, dict) and i.get("kind") == GCP_KIND for i in document)
    ):
        return [_wrapped(GCP_API_VERSION, GCP_KIND, item.get("name"), item) for item in document]
    return None


def _wrapped(api_version: str, kind: str, name: Any, item: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": item}


# --- handlers (registered in topology.kube.parse's kind dispatch) --------------------------


def aws_capacity_reservation(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    state = ctx.text(spec.get("State"), "State")
    if state not in LIVE_AWS_STATES:
        collected.discovered.notices.append(
            ModelError(ctx.source, ctx.object, "State", f"{state or 'no state'}: skipped")
        )
        return
    tags = {
        ctx.text(t.get("Key"), f"{path}.Key"): ctx.text(t.get("Value"), f"{path}.Value")
        for path, t in ctx.items(spec.get("Tags"), "Tags")
    }
    instance_type = ctx.text(spec.get("InstanceType"), "InstanceType", required=True)
    zone = ctx.text(spec.get("AvailabilityZone"), "AvailabilityZone", required=True)
    collected.discovered.cloud_reservations.append(
        CloudReservation(
            ctx=ctx,
            name=ctx.object.partition("/")[2],
            source=AWS_SOURCE,
            instance_type=instance_type,
            zone=zone,
            total=ctx.integer(spec.get("TotalInstanceCount"), "TotalInstanceCount", minimum=0),
            available=ctx.integer(
                spec.get("AvailableInstanceCount"), "AvailableInstanceCount", minimum=0
            ),
            capacity_block=spec.get("ReservationType") == "capacity-block",
            owner_namespaces=_namespaces(tags.get(OWNER_TAG, "")),
            start=ctx.timestamp(spec.get("StartDate"), "StartDate"),
            end=ctx.timestamp(spec.get("EndDate"), "EndDate"),
            node_selector={INSTANCE_TYPE_LABEL: instance_type, ZONE_LABEL: zone},
        )
    )


def gcp_reservation(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    specific = ctx.mapping(spec.get("specificReservation"), "specificReservation")
    properties = ctx.mapping(
        specific.get("instanceProperties"), "specificReservation.instanceProperties"
    )
    machine = ctx.text(
        properties.get("machineType"),
        "specificReservation.instanceProperties.machineType",
        required=True,
    )
    zone = ctx.text(spec.get("zone"), "zone", required=True).rsplit("/", 1)[-1]
    total = ctx.integer(specific.get("count"), "specificReservation.count", minimum=0)
    in_use = ctx.integer(specific.get("inUseCount"), "specificReservation.inUseCount", minimum=0)
    collected.discovered.cloud_reservations.append(
        CloudReservation(
            ctx=ctx,
            name=ctx.object.partition("/")[2],
            source=GCP_SOURCE,
            instance_type=machine,
            zone=zone,
            total=total,
            available=max(total - in_use, 0),
            capacity_block=False,
            owner_namespaces=(),
            start=None,
            end=None,
            node_selector={INSTANCE_TYPE_LABEL: machine, ZONE_LABEL: zone},
        )
    )


def karpenter_node_class(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    status = ctx.mapping(obj.get("status"), "status")
    for path, item in ctx.items(status.get("capacityReservations"), "status.capacityReservations"):
        reservation_id = ctx.text(item.get("id"), f"{path}.id", required=True)
        collected.discovered.cloud_reservations.append(
            CloudReservation(
                ctx=ctx,
                name=reservation_id,
                source=KARPENTER_SOURCE,
                instance_type=ctx.text(item.get("instanceType"), f"{path}.instanceType"),
                zone=ctx.text(item.get("availabilityZone"), f"{path}.availabilityZone"),
                total=None,
                available=0,
                capacity_block=item.get("reservationType") == "capacity-block",
                owner_namespaces=(),
                start=None,
                end=ctx.timestamp(item.get("endTime"), f"{path}.endTime"),
                node_selector={KARPENTER_RESERVATION_LABEL: reservation_id},
            )
        )


def _namespaces(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


# --- tied to the cluster --------------------------------------------------------------


def resolve(
    found: Iterable[CloudReservation],
    node_groups: Iterable[NodeGroup],
    prices: PriceTable,
    gpus_by_type: Mapping[str, int],
) -> tuple[tuple[Reservation, ...], tuple[ModelError, ...]]:
    """Reservations of the model, and a notice for each thing the export left open.

    A reservation named by both an export and Karpenter's status is read once,
    from the export (it has the counts)."""
    groups = tuple(node_groups)
    exported = {r.name for r in found if r.source != KARPENTER_SOURCE}
    reservations: list[Reservation] = []
    notices: list[ModelError] = []
    for item in found:
        if item.source == KARPENTER_SOURCE and item.name in exported:
            continue
        price = _price_per_gpu_hour(item, prices, gpus_by_type, notices)
        if not item.owner_namespaces:
            _notice(notices, item, "owner", f"unowned (no {OWNER_TAG} tag): usable by no team")
        base = Reservation(
            name=item.name,
            owner_namespaces=item.owner_namespaces,
            start=item.start,
            end=item.end,
            price_per_gpu_hour=price,
            source=item.source,
        )
        in_use = item.total - item.available if item.total is not None else None
        if in_use is None or in_use > 0:
            reservations.append(replace(base, node_selector=dict(item.node_selector)))
        if item.available:
            group = _group_for(item, groups)
            if group is None:
                _notice(
                    notices,
                    item,
                    "AvailableInstanceCount",
                    f"{item.available} unused {item.instance_type} in {item.zone}: no node group "
                    "of that instance type and zone to start them in; not counted",
                )
                continue
            name = f"{item.name}-unused" if in_use else item.name
            capacity = ReservedNodeGroupCapacity(group.name, item.available)
            reservations.append(replace(base, name=name, node_group=capacity))
    return tuple(reservations), tuple(notices)


def _group_for(item: CloudReservation, groups: tuple[NodeGroup, ...]) -> NodeGroup | None:
    for group in groups:
        labels = group.template.labels
        zone = labels.get(ZONE_LABEL)
        if labels.get(INSTANCE_TYPE_LABEL) == item.instance_type and zone in (None, item.zone):
            return group
    return None


def _price_per_gpu_hour(
    item: CloudReservation,
    prices: PriceTable,
    gpus_by_type: Mapping[str, int],
    notices: list[ModelError],
) -> float:
    if item.capacity_block:
        _notice(
            notices,
            item,
            "ReservationType",
            "Capacity Block: its fee is paid up front and is not in the export; "
            "priced 0 (set pricePerGpuHour on a capacityweb.io Reservation)",
        )
        return 0.0
    region = item.zone[:-1] if item.zone[-1:].isalpha() and item.source == AWS_SOURCE else None
    if item.source == GCP_SOURCE:
        region = item.zone.rsplit("-", 1)[0]
    price = prices.lookup(item.instance_type, region)
    gpus = gpus_by_type.get(item.instance_type, 0)
    if price is None or not gpus:
        _notice(
            notices,
            item,
            "InstanceType",
            f"no on-demand price or GPU count for {item.instance_type}: priced 0",
        )
        return 0.0
    return round(price.per_node_hour / gpus, 6)


def _notice(notices: list[ModelError], item: CloudReservation, field: str, reason: str) -> None:
    notices.append(ModelError(item.ctx.source, item.ctx.object, field, reason))
