"""The one seeded synthetic cluster the benchmarks share.

``synthetic_cluster(nodes, seed=...)`` builds a ``topology.hardware.Cluster``
shaped like a large GPU fleet, the same for the same arguments::

    zone (4) › block (64 nodes) › rack (8 nodes) › host
      ├─ whole-GPU nodes   8 GPUs of one model per block (H100, A100, H200, L40S)
      ├─ MIG nodes         1 in 16: A100s in MIG "mixed" mode, instances as
      │                    nvidia.com/mig-1g.10gb extended resources
      └─ shared nodes      1 in 16: time-sliced GPUs (shareable devices, milli shares)

About half the GPUs are taken by bound pods. Pending demand: gangs of 2–8
pods (whole GPUs, one in three requiring a single block), MIG pods and
fractional-share pods. One node group per GPU model with placements in
concrete blocks; reservations by node names, by node selector and by
unprovisioned node-group capacity. Sizes: ``SIZES`` (1k, 10k, 50k nodes).

Pure: no Django, no clock; ``random.Random(seed)`` is the only randomness.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from topology.hardware import (
    HOSTNAME_LABEL,
    Cluster,
    Device,
    Gang,
    Gpu,
    GpuRequest,
    Node,
    NodeGroup,
    NodePlacement,
    Pod,
    Reservation,
    ReservedNodeGroupCapacity,
    Resources,
    Topology,
    TopologyLevel,
)

SIZES = (1_000, 10_000, 50_000)
AT = datetime(2026, 12, 2, tzinfo=UTC)
ZONE = "topology.kubernetes.io/zone"
BLOCK = "cloud.google.com/gce-topology-block"
RACK = "cloud.google.com/gce-topology-subblock"
PRODUCT = "nvidia.com/gpu.product"
POOL = "cloud.google.com/gke-nodepool"
MODELS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H200", "NVIDIA-L40S")
PRICE_PER_NODE_HOUR = {MODELS[0]: 88.0, MODELS[1]: 32.0, MODELS[2]: 98.0, MODELS[3]: 14.0}
MIG_RESOURCE = "nvidia.com/mig-1g.10gb"
MIG_INSTANCES_PER_NODE = 8 * 7
ZONES, NODES_PER_BLOCK, NODES_PER_RACK, GPUS_PER_NODE = 4, 64, 8, 8
GIB = 2**30
TEAMS = 20


def topology() -> Topology:
    """zone › block › rack › host: the four levels every synthetic node carries."""
    keys = ((ZONE, "zone"), (BLOCK, "block"), (RACK, "rack"), (HOSTNAME_LABEL, "host"))
    return Topology(tuple(TopologyLevel(key, name) for key, name in keys))


def block_labels(block: int) -> dict[str, str]:
    return {ZONE: f"z{block % ZONES}", BLOCK: f"b{block:04d}"}


def gpu_node(
    name: str, model: str, labels: dict[str, str], *, kind: str = "whole", group: str | None = None
) -> Node:
    """An 8-GPU node: whole devices, MIG instances (extended resources) or shareable GPUs."""
    gpus = tuple(Gpu(f"gpu-{i}", model=model, memory_bytes=80 * GIB) for i in range(8))
    devices: tuple[Device, ...] = ()
    extended: dict[str, int] = {}
    if kind == "mig":
        extended[MIG_RESOURCE] = MIG_INSTANCES_PER_NODE
    else:
        devices = tuple(
            Device(
                g.name,
                gpu=g.name,
                model=model,
                memory_bytes=g.memory_bytes,
                capacity={"gpu_milli": 1000},
                shareable=kind == "shared",
            )
            for g in gpus
        )
    return Node(
        name=name,
        labels={**labels, HOSTNAME_LABEL: name, PRODUCT: model, POOL: group or ""},
        allocatable=Resources(
            cpu_milli=192_000, memory_bytes=1536 * GIB, pods=110, extended=extended
        ),
        gpus=gpus,
        devices=devices,
        node_group=group,
    )


def _node_kind(index: int) -> str:
    return {0: "mig", 8: "shared"}.get(index % 16, "whole")


def _model_of_block(block: int) -> str:
    return MODELS[block % len(MODELS)]


def _group_name(model: str) -> str:
    return "pool-" + model.split("-")[1].lower()


def _nodes_and_bound_pods(count: int, rng: random.Random) -> tuple[list[Node], list[Pod]]:
    nodes, pods = [], []
    for i in range(count):
        block = i // NODES_PER_BLOCK
        kind = _node_kind(i)
        model = MODELS[1] if kind == "mig" else _model_of_block(block)
        labels = {**block_labels(block), RACK: f"b{block:04d}-r{(i // NODES_PER_RACK) % 8}"}
        node = gpu_node(f"n{i:05d}", model, labels, kind=kind, group=_group_name(model))
        nodes.append(node)
        pods.extend(_bound_pods(node, kind, rng))
    return nodes, pods


def _bound_pods(node: Node, kind: str, rng: random.Random) -> list[Pod]:
    requests = Resources(cpu_milli=8000, memory_bytes=64 * GIB, pods=1)
    team = f"team{rng.randrange(TEAMS):02d}"
    if kind == "mig":
        used = {**requests.extended, MIG_RESOURCE: rng.randrange(0, MIG_INSTANCES_PER_NODE)}
        extended = Resources(requests.cpu_milli, requests.memory_bytes, 1, used)
        return [Pod(team, f"bound-{node.name}", requests=extended, node_name=node.name)]
    if kind == "shared":
        return [
            Pod(
                team,
                f"bound-{node.name}-{k}",
                requests=requests,
                gpu=GpuRequest(1, milli_per_gpu=rng.choice((250, 500))),
                node_name=node.name,
            )
            for k in range(rng.randrange(0, 8))
        ]
    used = rng.choice((0, 4, 6, 8, 8, 8, 8))
    if not used:
        return []
    return [Pod(team, f"bound-{node.name}", requests, gpu=GpuRequest(used), node_name=node.name)]


def _pending(gangs: int, rng: random.Random) -> tuple[list[Gang], list[Pod]]:
    gang_list, pods = [], []
    requests = Resources(cpu_milli=4000, memory_bytes=32 * GIB, pods=1)
    for g in range(gangs):
        team = f"team{g % TEAMS:02d}"
        model = MODELS[g % len(MODELS)]
        required = BLOCK if g % 3 == 0 else None
        gang = Gang(team, f"train-{g:05d}", rng.choice((2, 4, 8, 16)), required, priority=g % 3)
        gang_list.append(gang)
        gpus = rng.choice((4, 8, 8))
        pods.extend(
            Pod(
                team,
                f"{gang.name}-{p}",
                requests=requests,
                gpu=GpuRequest(gpus),
                node_selector={PRODUCT: model},
                gang=gang.key,
                required_topology=required,
                priority=gang.priority,
                arrival=float(g),
            )
            for p in range(gang.min_member)
        )
        if g % 4 == 0:
            mig = Resources(2000, 16 * GIB, 1, {MIG_RESOURCE: rng.choice((1, 2, 7))})
            pods.append(Pod(team, f"infer-mig-{g:05d}", requests=mig, arrival=float(g)))
        if g % 4 == 1:
            share = GpuRequest(1, milli_per_gpu=rng.choice((250, 500)))
            pods.append(Pod(team, f"notebook-{g:05d}", requests, gpu=share, arrival=float(g)))
    return gang_list, pods


def _node_groups(nodes: list[Node], blocks: int) -> list[NodeGroup]:
    groups = []
    for k, model in enumerate(MODELS):
        name = _group_name(model)
        model_blocks = [b for b in range(blocks) if _model_of_block(b) == model][:8]
        placements = tuple(NodePlacement(block_labels(b), 4) for b in model_blocks)
        template = gpu_node(f"{name}-template", model, {}, group=name)
        groups.append(
            NodeGroup(
                name,
                {POOL: name},
                0,
                len(nodes) + 64,
                PRICE_PER_NODE_HOUR[model],
                template,
                placements or (NodePlacement(block_labels(k), 4),),
                current_size=sum(1 for n in nodes if n.node_group == name),
            )
        )
    return groups


def _reservations(nodes: list[Node], groups: list[NodeGroup]) -> list[Reservation]:
    window = {"start": datetime(2026, 12, 1, tzinfo=UTC), "end": datetime(2027, 1, 1, tzinfo=UTC)}
    named = tuple(n.name for n in nodes[NODES_PER_BLOCK - 4 : NODES_PER_BLOCK])
    return [
        Reservation(
            "team00-named", ("team00",), node_names=named, price_per_gpu_hour=2.5, **window
        ),
        Reservation(
            "team01-rack",
            ("team01",),
            node_selector={RACK: "b0001-r7"},
            price_per_gpu_hour=2.5,
            **window,
        ),
        Reservation(
            "team02-unprovisioned",
            ("team02",),
            node_group=ReservedNodeGroupCapacity(groups[0].name, 2),
            price_per_gpu_hour=3.0,
            **window,
        ),
    ]


def synthetic_cluster(nodes: int, *, seed: int = 0, gangs: int | None = None) -> Cluster:
    """A seeded cluster of ``nodes`` 8-GPU nodes; ``gangs`` pending gangs (default nodes/20)."""
    rng = random.Random(seed)
    node_list, bound = _nodes_and_bound_pods(nodes, rng)
    gang_list, pending = _pending(max(1, nodes // 20) if gangs is None else gangs, rng)
    blocks = -(-nodes // NODES_PER_BLOCK)
    groups = _node_groups(node_list, blocks)
    return Cluster(
        f"synthetic-{nodes}",
        topology=topology(),
        nodes=tuple(node_list),
        pods=tuple(bound + pending),
        gangs=tuple(gang_list),
        node_groups=tuple(groups),
        reservations=tuple(_reservations(node_list, groups)),
    )
