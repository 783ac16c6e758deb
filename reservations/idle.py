"""Idle reserved capacity: GPUs someone pays for that no pod uses.

A reservation is paid per GPU-hour whether or not anything runs on it, so the
waste is a count (reserved GPUs allocated to no pod) and an integral of that
count over time (idle GPU-hours). Both are computed here from the model and a
state, without a clock: the instant ``at`` and the samples are passed in.

Paid-but-unprovisioned capacity (``Reservation.node_group``: N nodes of a
group the owner pays for but nobody has started) is idle by definition: its
GPUs are counted as reserved and idle.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from topology.model.hardware import Cluster, Node, Reservation


class GpuCellView(Protocol):
    """What idle accounting needs of one GPU in the placement state."""

    @property
    def allocated_milli(self) -> int: ...


class GpuStateView(Protocol):
    """The slice of ClusterState idle accounting reads (its GPU cells per node)."""

    def gpu_cells(self, node_name: str) -> Sequence[GpuCellView]: ...


def reserved_nodes(cluster: Cluster, reservation: Reservation) -> tuple[Node, ...]:
    """Existing nodes a reservation covers: named nodes, or nodes its selector matches.

    An empty selector covers nothing: a reservation of "every node" is never
    what an operator means, and would make every GPU look reserved.
    """
    names = set(reservation.node_names)
    selector = reservation.node_selector
    return tuple(
        node
        for node in cluster.nodes
        if node.name in names or (selector and _matches(node.labels, selector))
    )


def _matches(labels: Mapping[str, str], selector: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def unprovisioned_reserved_gpus(cluster: Cluster, reservation: Reservation) -> int:
    """GPUs of the paid-but-not-started nodes (node_group count × template GPUs)."""
    capacity = reservation.node_group
    if capacity is None:
        return 0
    for group in cluster.node_groups:
        if group.name == capacity.node_group:
            return capacity.count * group.template.gpu_count
    return 0


def idle_gpus_on(nodes: Iterable[Node], state: GpuStateView) -> int:
    """GPUs on these nodes that no pod holds any share or partition of."""
    return sum(
        1 for node in nodes for cell in state.gpu_cells(node.name) if cell.allocated_milli == 0
    )


def idle_reserved_gpus(
    cluster: Cluster, state: GpuStateView, at: datetime
) -> dict[str, tuple[int, int]]:
    """Per reservation active at ``at`` (by name): (reserved GPUs, idle reserved GPUs)."""
    result: dict[str, tuple[int, int]] = {}
    for reservation in sorted(cluster.reservations, key=lambda r: r.name):
        if not reservation.active_at(at):
            continue
        nodes = reserved_nodes(cluster, reservation)
        unprovisioned = unprovisioned_reserved_gpus(cluster, reservation)
        reserved = sum(node.gpu_count for node in nodes) + unprovisioned
        result[reservation.name] = (reserved, idle_gpus_on(nodes, state) + unprovisioned)
    return result


def idle_gpu_hours(
    samples: Sequence[tuple[datetime, int]], start: datetime, end: datetime
) -> float:
    """Integral of idle GPUs over [start, end) in GPU-hours.

    Samples form a right-open step function: a sample's value holds from its
    time until the next sample's time. Before the first sample nothing is
    known, so nothing is counted (never guessed); the last sample holds until
    ``end``. Samples need not be sorted.
    """
    if end <= start:
        return 0.0
    ordered = sorted(samples, key=lambda sample: sample[0])
    total_gpu_seconds = 0.0
    for index, (time, idle) in enumerate(ordered):
        step_end = ordered[index + 1][0] if index + 1 < len(ordered) else end
        begin, finish = max(time, start), min(step_end, end)
        if finish > begin:
            total_gpu_seconds += idle * (finish - begin).total_seconds()
    return total_gpu_seconds / 3600.0
