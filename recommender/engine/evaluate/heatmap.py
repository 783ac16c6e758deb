"""The matrices the topology heatmap draws: one cell per physical GPU.

A cell carries its place in the hierarchy by the level names the dashboard
drills through (zone › block › rack › node › GPU). A level the cluster's
topology does not define, or a node's labels do not give, is ``None``:
"unknown", drawn grey, never guessed.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recommender.engine.scheduler.state import ClusterState
from reservations.idle import reserved_nodes
from topology.model.hardware import Cluster, Node

HEATMAP_LEVELS = ("zone", "block", "rack")


@dataclass(frozen=True, slots=True)
class HeatCell:
    zone: str | None
    block: str | None
    rack: str | None
    node: str
    gpu: str
    model: str | None
    allocated_milli: int
    pods: tuple[str, ...]
    reservation: str | None
    node_group: str | None
    units: str | None = None  # counted units on this GPU: "3/4 replicas", "5/7 MIG 1g.5gb"

    def to_json(self) -> dict[str, Any]:
        shares = {"units": self.units} if self.units is not None else {}
        return {
            "zone": self.zone,
            "block": self.block,
            "rack": self.rack,
            "node": self.node,
            "gpu": self.gpu,
            "model": self.model,
            "allocatedMilli": self.allocated_milli,
            "pods": list(self.pods),
            "reservation": self.reservation,
            "nodeGroup": self.node_group,
            **shares,
        }


def level_values(cluster: Cluster, node: Node) -> dict[str, str | None]:
    """The node's domain at each heatmap level, by the level's name; None if unknown."""
    keys = {level.name: level.key for level in cluster.topology.levels}
    return {name: node.labels.get(keys[name]) if name in keys else None for name in HEATMAP_LEVELS}


def reservation_of_node(cluster: Cluster) -> Mapping[str, str]:
    """Node name → the (alphabetically first) reservation covering it."""
    owner: dict[str, str] = {}
    for reservation in sorted(cluster.reservations, key=lambda r: r.name):
        for node in reserved_nodes(cluster, reservation):
            owner.setdefault(node.name, reservation.name)
    return owner


def heatmap_cells(cluster: Cluster, state: ClusterState) -> tuple[HeatCell, ...]:
    """Every GPU of every existing node, in node then GPU order (stable for diffs)."""
    reserved = reservation_of_node(cluster)
    cells = []
    for node in sorted(cluster.nodes, key=lambda n: n.name):
        levels = level_values(cluster, node)
        for cell in state.gpu_cells(node.name):
            cells.append(
                HeatCell(
                    zone=levels["zone"],
                    block=levels["block"],
                    rack=levels["rack"],
                    node=node.name,
                    gpu=cell.gpu,
                    model=cell.model,
                    allocated_milli=cell.allocated_milli,
                    pods=tuple(sorted(cell.pods)),
                    reservation=reserved.get(node.name),
                    node_group=node.node_group,
                    units=units_text(node, cell.gpu, len(cell.pods)),
                )
            )
    return tuple(cells)


def units_text(node: Node, gpu: str, taken: int) -> str | None:
    """How many of a GPU's counted units (time-slicing/MPS replicas, MIG-single
    instances) are in use, e.g. "3/4 replicas"; None for a GPU that is one unit."""
    units = [d for d in node.devices if d.gpu == gpu and d.unit_gpu_milli is not None]
    if not units:
        return None
    profile = units[0].profile
    kind = f"MIG {profile}" if profile else "replicas"
    return f"{taken}/{len(units)} {kind}"
