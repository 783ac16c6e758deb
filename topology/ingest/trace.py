"""The Alibaba openb GPU trace (cluster-trace-gpu-v2023) → the hardware model.

Pure: rows are dicts as ``csv.DictReader`` yields them; reading the files is
``topology.ingest.files.read_openb``. Node rows carry ``sn, cpu_milli, memory_mib,
gpu, model``; pod rows ``name, cpu_milli, memory_mib, num_gpu, gpu_milli``
and, except in the multigpu variants, ``gpu_spec, qos, pod_phase,
creation_time, …``.

The trace supports GPU sharing (the FGD paper's subject), so every trace GPU
is one *shareable* Device with ``gpu_milli`` capacity 1000. The trace has no
topology: ``with_topology_overlay`` adds synthetic zone/block/rack labels,
marked as synthetic on every node, for demos and benchmarks only.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import replace

from topology.model.hardware import (
    GPU_RESOURCE,
    HOSTNAME_LABEL,
    WHOLE_GPU_MILLI,
    Device,
    Gpu,
    GpuRequest,
    ModelError,
    Node,
    Pod,
    Resources,
)

TRACE_SOURCE = "openb"
TRACE_NAMESPACE = "openb"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
QOS_LABEL = "openb.alibaba.com/qos"
SYNTHETIC_TOPOLOGY_LABEL = "capacityweb.io/synthetic-topology"
ZONE_LABEL = "topology.kubernetes.io/zone"
BLOCK_LABEL = "cloud.google.com/gce-topology-block"
RACK_LABEL = "cloud.google.com/gce-topology-subblock"
MIB = 2**20
# The trace gives no pod-count limit; the kubelet default maxPods keeps the
# pods resource from being the binding constraint, as in the FGD simulator.
TRACE_MAX_PODS = 110
# Phases a live cluster still shows; Succeeded/Failed pods hold nothing.
LIVE_PHASES = ("Pending", "Running")


def _int_field(row: Mapping[str, str], column: str, where: str) -> int:
    text = (row.get(column) or "").strip()
    try:
        value = int(text)
    except ValueError:
        raise ModelError(TRACE_SOURCE, where, column, f"not an integer: {text!r}") from None
    if value < 0:
        raise ModelError(TRACE_SOURCE, where, column, f"must be >= 0, got {value}")
    return value


def _float_field(row: Mapping[str, str], column: str, where: str) -> float:
    text = (row.get(column) or "").strip()
    if not text:
        return 0.0
    try:
        return float(text)
    except ValueError:
        raise ModelError(TRACE_SOURCE, where, column, f"not a number: {text!r}") from None


def _required(row: Mapping[str, str], column: str, where: str) -> str:
    text = (row.get(column) or "").strip()
    if not text:
        raise ModelError(TRACE_SOURCE, where, column, "required")
    return text


# --- nodes ------------------------------------------------------------------------


def trace_node(row: Mapping[str, str], index: int = 0) -> Node:
    """One node row → a Node with one shareable whole-GPU Device per GPU."""
    name = _required(row, "sn", f"row {index}")
    where = f"Node/{name}"
    gpu_count = _int_field(row, "gpu", where)
    model = (row.get("model") or "").strip() or None
    labels = {HOSTNAME_LABEL: name}
    if gpu_count and model:
        labels[GPU_PRODUCT_LABEL] = model
    if gpu_count:
        labels[GPU_COUNT_LABEL] = str(gpu_count)
    gpus = tuple(Gpu(name=f"gpu-{i}", model=model) for i in range(gpu_count))
    return Node(
        name=name,
        labels=labels,
        allocatable=Resources(
            cpu_milli=_int_field(row, "cpu_milli", where),
            memory_bytes=_int_field(row, "memory_mib", where) * MIB,
            pods=TRACE_MAX_PODS,
        ),
        gpus=gpus,
        devices=tuple(_shareable_device(gpu) for gpu in gpus),
    )


def _shareable_device(gpu: Gpu) -> Device:
    return Device(
        name=gpu.name,
        driver=GPU_RESOURCE,
        gpu=gpu.name,
        model=gpu.model,
        capacity={"gpu_milli": WHOLE_GPU_MILLI},
        shareable=True,
    )


def trace_nodes(rows: Iterable[Mapping[str, str]]) -> tuple[Node, ...]:
    """All node rows in file order. A bad row raises ModelError naming row and column."""
    return tuple(trace_node(row, index) for index, row in enumerate(rows))


# --- pods -------------------------------------------------------------------------


def trace_pod(row: Mapping[str, str], index: int = 0) -> Pod:
    """One pod row → a pending Pod (the trace has no node assignments)."""
    name = _required(row, "name", f"row {index}")
    where = f"Pod/{TRACE_NAMESPACE}/{name}"
    qos = (row.get("qos") or "").strip()
    return Pod(
        namespace=TRACE_NAMESPACE,
        name=name,
        requests=Resources(
            cpu_milli=_int_field(row, "cpu_milli", where),
            memory_bytes=_int_field(row, "memory_mib", where) * MIB,
            pods=1,
        ),
        gpu=_gpu_request(row, where),
        labels={QOS_LABEL: qos} if qos else {},
        arrival=_float_field(row, "creation_time", where),
    )


def _gpu_request(row: Mapping[str, str], where: str) -> GpuRequest | None:
    count = _int_field(row, "num_gpu", where)
    if count == 0:
        return None
    milli = _int_field(row, "gpu_milli", where) if (row.get("gpu_milli") or "").strip() else 1000
    if milli == 0 or milli > WHOLE_GPU_MILLI:
        raise ModelError(TRACE_SOURCE, where, "gpu_milli", f"must be 1..1000, got {milli}")
    if count > 1 and milli < WHOLE_GPU_MILLI:
        raise ModelError(TRACE_SOURCE, where, "gpu_milli", "a share (< 1000) needs num_gpu 1")
    spec = (row.get("gpu_spec") or "").strip()
    models = tuple(m for m in spec.split("|") if m) if spec and spec != "nan" else ()
    return GpuRequest(count=count, milli_per_gpu=milli, models=models)


def trace_pods(rows: Iterable[Mapping[str, str]], *, bound: bool = False) -> tuple[Pod, ...]:
    """Pod rows in file order (sorted by creation_time in the trace).

    ``bound=False`` keeps every row: the arrival workload the FGD simulator
    replays. ``bound=True`` keeps only rows whose ``pod_phase`` is Pending or
    Running, the pods a live snapshot would still show (rows without a phase
    column are kept). The trace names no nodes, so no pod gets ``node_name``.
    """
    pods = []
    for index, row in enumerate(rows):
        phase = (row.get("pod_phase") or "").strip()
        if bound and phase and phase not in LIVE_PHASES:
            continue
        pods.append(trace_pod(row, index))
    return tuple(pods)


# --- synthetic topology -------------------------------------------------------------


def with_topology_overlay(
    nodes: Iterable[Node],
    *,
    zones: int,
    blocks_per_zone: int,
    racks_per_block: int,
    seed: int = 0,
) -> tuple[Node, ...]:
    """Nodes with synthetic zone/block/rack labels — an addition, not trace data.

    The trace records no topology. For demos and benchmarks the nodes are
    shuffled with ``seed`` and dealt into ``zones × blocks × racks`` domains of
    near-equal size; the same seed always gives the same labels. Every
    labelled node also carries ``capacityweb.io/synthetic-topology: "true"``
    so no page presents the overlay as real.
    """
    if min(zones, blocks_per_zone, racks_per_block) < 1:
        raise ValueError("zones, blocks_per_zone and racks_per_block must be >= 1")
    nodes = tuple(nodes)
    order = list(range(len(nodes)))
    random.Random(seed).shuffle(order)
    racks = zones * blocks_per_zone * racks_per_block
    labelled = list(nodes)
    for position, node_index in enumerate(order):
        rack = position * racks // max(len(nodes), 1)
        labelled[node_index] = _with_domain(
            nodes[node_index], rack, blocks_per_zone, racks_per_block
        )
    return tuple(labelled)


def _with_domain(node: Node, rack: int, blocks_per_zone: int, racks_per_block: int) -> Node:
    block = rack // racks_per_block
    zone = block // blocks_per_zone
    zone_name = f"zone-{zone}"
    block_name = f"{zone_name}-block-{block % blocks_per_zone}"
    rack_name = f"{block_name}-rack-{rack % racks_per_block}"
    labels = {
        **node.labels,
        ZONE_LABEL: zone_name,
        BLOCK_LABEL: block_name,
        RACK_LABEL: rack_name,
        SYNTHETIC_TOPOLOGY_LABEL: "true",
    }
    return replace(node, labels=labels)
