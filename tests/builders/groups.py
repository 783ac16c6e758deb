"""What can be bought or is paid for: node groups, reservations, quota queues."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Self

from tests.builders.base import Builder
from topology.model.hardware import (
    AutoscalerRef,
    Node,
    NodeGroup,
    NodePlacement,
    QuotaQueue,
    Reservation,
    ReservedNodeGroupCapacity,
)

# --- node groups --------------------------------------------------------------------


class GroupBuilder(Builder[NodeGroup]):
    """A NodeGroup of ``template``: no selector, 0 to 10 nodes, 1.0 an hour until said."""

    def __init__(self, name: str, template: Node) -> None:
        self._built = NodeGroup(name, {}, 0, 10, 1.0, template=template)

    def template(self, template: Node) -> Self:
        """Labels, taints, allocatable and devices of a new node."""
        return self.set(template=template)

    def selector(self, selector: Mapping[str, str]) -> Self:
        return self.set(node_selector={**self._built.node_selector, **selector})

    def size(self, min_size: int, max_size: int) -> Self:
        return self.set(min_size=min_size, max_size=max_size)

    def max_size(self, max_size: int) -> Self:
        return self.set(max_size=max_size)

    def current_size(self, size: int) -> Self:
        return self.set(current_size=size)

    def price(self, per_node_hour: float) -> Self:
        return self.set(price_per_node_hour=per_node_hour)

    def placement(self, labels: Mapping[str, str], max_new_nodes: int) -> Self:
        """Where new nodes can land (topology labels) and how many."""
        placement = NodePlacement(dict(labels), max_new_nodes)
        return self.set(placements=(*self._built.placements, placement))

    def autoscaler(self, ref: AutoscalerRef | None) -> Self:
        return self.set(autoscaler=ref)


def make_group(name: str, template: Node) -> GroupBuilder:
    return GroupBuilder(name, template)


# --- reservations and queues ----------------------------------------------------------


class ReservationBuilder(Builder[Reservation]):
    """A Reservation of the namespaces given, on no node, always active, free until said."""

    def __init__(self, name: str, owners: tuple[str, ...]) -> None:
        self._built = Reservation(name, owners)

    def nodes(self, *names: str) -> Self:
        return self.set(node_names=(*self._built.node_names, *names))

    def selector(self, selector: Mapping[str, str]) -> Self:
        return self.set(node_selector={**self._built.node_selector, **selector})

    def group_capacity(self, node_group: str, count: int) -> Self:
        return self.set(node_group=ReservedNodeGroupCapacity(node_group, count))

    def start(self, at: datetime | None) -> Self:
        return self.set(start=at)

    def end(self, at: datetime | None) -> Self:
        """The first instant it no longer holds."""
        return self.set(end=at)

    def price_per_gpu_hour(self, price: float) -> Self:
        return self.set(price_per_gpu_hour=price)


def make_reservation(name: str, *owner_namespaces: str) -> ReservationBuilder:
    return ReservationBuilder(name, owner_namespaces)


class QueueBuilder(Builder[QuotaQueue]):
    """A QuotaQueue (``ClusterQueue/cq``, ``VolcanoQueue/q``…): no quota until said."""

    def __init__(self, name: str) -> None:
        self._built = QuotaQueue(name, {})

    def limit(self, resource: str, amount: int) -> Self:
        """Admitted in total without borrowing, in the pod's base units."""
        return self.set(limit={**self._built.limit, resource: amount})

    def cohort(self, cohort: str | None) -> Self:
        return self.set(cohort=cohort)

    def borrowing_limit(self, resource: str, amount: int) -> Self:
        return self.set(borrowing_limit={**(self._built.borrowing_limit or {}), resource: amount})

    def local_queue(self, key: str) -> Self:
        return self.set(local_queues=(*self._built.local_queues, key))

    def flavor_limit(self, flavor: str, resource: str, amount: int) -> Self:
        limits = {**self._built.flavor_limits}
        limits[flavor] = {**limits.get(flavor, {}), resource: amount}
        return self.set(flavor_limits=limits)


def make_queue(name: str) -> QueueBuilder:
    return QueueBuilder(name)
