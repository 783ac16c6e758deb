"""The one seeded synthetic cluster the benchmarks share.

``synthetic_cluster(nodes, seed=...)`` builds a ``topology.model.hardware.Cluster``
shaped like a large GPU fleet, the same for the same arguments::

    zone (4) › block (64 nodes) › rack (8 nodes) › host
      ├─ whole-GPU nodes   8 GPUs of one model per block (H100, A100, H200, L40S)
      ├─ MIG nodes         1 in 16: A100s in MIG "mixed" mode, instances as
      │                    nvidia.com/mig-1g.10gb extended resources
      └─ shared nodes      1 in 16: time-sliced GPUs (shareable devices, milli shares)

About half the GPUs are taken by bound pods. Pending demand: gangs of 2–16
pods (whole GPUs, one in three requiring a single block), MIG pods and
fractional-share pods. One node group per GPU model with placements in
concrete blocks; reservations by node names, by node selector and by
unprovisioned node-group capacity. Sizes: ``SIZES`` (1k, 10k, 50k nodes).

``issue_shape=True`` is the snapshot of issue #6 (``bench/evaluate.py``):
every pending pod is a member of a gang of ``GANG_PODS`` (whole-GPU gangs,
one in eight a MIG gang, one in eight a GPU-sharing gang) and there are
``GROUPS_PER_MODEL`` node groups per GPU model (block b's nodes belong to
group b mod 40), so 10,000 nodes and 500 gangs give 80,000 GPUs, 5,000
pending pods and 40 node groups.

Pure: no Django, no clock; ``random.Random(seed)`` is the only randomness.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

from topology.model.hardware import (
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
GANG_PODS = 10
GROUPS_PER_MODEL = 10


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


def _group_name(model: str, index: int | None = None) -> str:
    """``pool-h100`` (one group per model) or ``pool-h100-3`` (``GROUPS_PER_MODEL`` of them)."""
    base = "pool-" + model.split("-")[1].lower()
    return base if index is None else f"{base}-{index}"


def _group_index(block: int, per_model: int) -> int | None:
    """Which of a model's groups block ``block``'s nodes belong to (None: the only one)."""
    return None if per_model == 1 else (block // len(MODELS)) % per_model


def _nodes_and_bound_pods(
    count: int, rng: random.Random, per_model: int
) -> tuple[list[Node], list[Pod]]:
    nodes, pods = [], []
    for i in range(count):
        block = i // NODES_PER_BLOCK
        kind = _node_kind(i)
        model = MODELS[1] if kind == "mig" else _model_of_block(block)
        labels = {**block_labels(block), RACK: f"b{block:04d}-r{(i // NODES_PER_RACK) % 8}"}
        group = _group_name(model, _group_index(block, per_model))
        node = gpu_node(f"n{i:05d}", model, labels, kind=kind, group=group)
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


def _issue_pending(gangs: int, rng: random.Random) -> tuple[list[Gang], list[Pod]]:
    """Issue #6's demand: ``gangs`` gangs of ``GANG_PODS`` pods, nothing else pending."""
    gang_list, pods = [], []
    for g in range(gangs):
        team = f"team{g % TEAMS:02d}"
        required = BLOCK if g % 3 == 0 else None
        gang = Gang(team, f"train-{g:05d}", GANG_PODS, required, priority=g % 3)
        gang_list.append(gang)
        member = _issue_member(g, rng)
        pods.extend(
            replace(
                member,
                namespace=team,
                name=f"{gang.name}-{p}",
                gang=gang.key,
                required_topology=required,
                priority=gang.priority,
                arrival=float(g),
            )
            for p in range(GANG_PODS)
        )
    return gang_list, pods


def _issue_member(g: int, rng: random.Random) -> Pod:
    """One gang's member shape: whole GPUs of one model, MIG instances or a GPU share."""
    requests = Resources(cpu_milli=4000, memory_bytes=32 * GIB, pods=1)
    if g % 8 == 4:
        mig = Resources(2000, 16 * GIB, 1, {MIG_RESOURCE: rng.choice((1, 2, 7))})
        return Pod("", "", requests=mig)
    if g % 8 == 5:
        return Pod("", "", requests, gpu=GpuRequest(1, milli_per_gpu=rng.choice((250, 500))))
    model = MODELS[g % len(MODELS)]
    gpus = rng.choice((4, 8, 8))
    return Pod("", "", requests, gpu=GpuRequest(gpus), node_selector={PRODUCT: model})


def _node_groups(nodes: list[Node], blocks: int, per_model: int) -> list[NodeGroup]:
    return [
        _node_group(nodes, blocks, k, model, per_model, index)
        for k, model in enumerate(MODELS)
        for index in (range(per_model) if per_model > 1 else (None,))
    ]


def _node_group(
    nodes: list[Node], blocks: int, k: int, model: str, per_model: int, index: int | None
) -> NodeGroup:
    """One group: its template, placements in (up to 8 of) its own blocks, its current size."""
    name = _group_name(model, index)
    own = [
        b
        for b in range(blocks)
        if _model_of_block(b) == model and _group_index(b, per_model) == index
    ][:8]
    placements = tuple(NodePlacement(block_labels(b), 4) for b in own)
    template = gpu_node(f"{name}-template", model, {}, group=name)
    fallback = k if index is None else k + len(MODELS) * index
    return NodeGroup(
        name,
        {POOL: name},
        0,
        len(nodes) + 64,
        PRICE_PER_NODE_HOUR[model],
        template,
        placements or (NodePlacement(block_labels(fallback), 4),),
        current_size=sum(1 for n in nodes if n.node_group == name),
    )


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


def synthetic_cluster(
    nodes: int, *, seed: int = 0, gangs: int | None = None, issue_shape: bool = False
) -> Cluster:
    """A seeded cluster of ``nodes`` 8-GPU nodes; ``gangs`` pending gangs (default nodes/20).

    ``issue_shape``: issue #6's snapshot (fixed-size gangs only, 40 node groups).
    """
    rng = random.Random(seed)
    per_model = GROUPS_PER_MODEL if issue_shape else 1
    node_list, bound = _nodes_and_bound_pods(nodes, rng, per_model)
    gang_count = max(1, nodes // 20) if gangs is None else gangs
    pending_of = _issue_pending if issue_shape else _pending
    gang_list, pending = pending_of(gang_count, rng)
    blocks = -(-nodes // NODES_PER_BLOCK)
    groups = _node_groups(node_list, blocks, per_model)
    return Cluster(
        f"synthetic-{nodes}",
        topology=topology(),
        nodes=tuple(node_list),
        pods=tuple(bound + pending),
        gangs=tuple(gang_list),
        node_groups=tuple(groups),
        reservations=tuple(_reservations(node_list, groups)),
    )
