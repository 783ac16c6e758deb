"""Free-but-unusable GPU capacity for the pending mix, per node and per domain.

The measure follows the fragmentation of "Beware of Fragmentation" (FGD,
Weng et al., USENIX ATC '23, the paper behind the Alibaba GPU trace): a free
GPU fraction is fragmented *for a task* when that task cannot use it, and a
node's fragmentation is the expectation over the task mix, weighted by how
often each task shape occurs. For one shape:

- the node cannot host the task at all (cpu, memory, GPU model): every free
  GPU milli is unusable;
- a whole-GPU task of ``c`` GPUs: unusable are the free milli of partly used
  GPUs, and all free milli when fewer than ``c`` GPUs are wholly free;
- a share of ``m`` milli: unusable are the free milli of GPUs with less than
  ``m`` free;
- on a node whose GPUs carry counted units (time-slicing/MPS replicas,
  MIG-single instances), a GPU asked is one unit: nothing is unusable while
  ``c`` units are free, everything once fewer are.

Nothing pending with GPUs means nothing is unusable for it: 0 everywhere.
Domains aggregate nodes by topology path, keyed ``zone=z1/block=b1``.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from recommender.engine.scheduler.demand import free_units
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import HOSTNAME_LABEL, WHOLE_GPU_MILLI, Cluster, Pod


@dataclass(frozen=True, slots=True)
class TaskShape:
    """What matters of a pending pod for fragmentation: GPUs, share, model, cpu, memory."""

    gpu_count: int
    milli_per_gpu: int
    models: tuple[str, ...]
    cpu_milli: int
    memory_bytes: int


def task_shape(pod: Pod) -> TaskShape | None:
    """The pod's GPU shape (device-plugin request or a DRA gpu_milli share); None without GPUs."""
    resources = pod.requests
    if pod.gpu is not None and pod.gpu.count > 0:
        gpu = pod.gpu
        return TaskShape(
            gpu.count, gpu.milli_per_gpu, gpu.models, resources.cpu_milli, resources.memory_bytes
        )
    for claim in pod.claims:
        for request in claim.requests:
            if not request.gpu:
                continue
            share = request.capacity_requests.get("gpu_milli")
            milli = share if share is not None else WHOLE_GPU_MILLI
            return TaskShape(request.count, milli, (), resources.cpu_milli, resources.memory_bytes)
    return None


def task_mix(pending: Iterable[Workload]) -> Counter[TaskShape]:
    return Counter(shape for w in pending for p in w.pods if (shape := task_shape(p)) is not None)


@dataclass(frozen=True, slots=True)
class FreeView:
    """What fragmentation reads of one node: free milli per GPU, GPU models, host room."""

    free: tuple[int, ...]  # per GPU, sorted
    models: frozenset[str | None]
    cpu_free_milli: int
    memory_free_bytes: int
    free_units: int | None = None  # untouched counted units (replicas, MIG-single); None: none

    @classmethod
    def of(cls, state: ClusterState, node_name: str) -> FreeView:
        info, alloc = state.info(node_name), state.alloc(node_name)
        used = alloc.gpu_milli
        return cls(
            tuple(
                sorted(
                    WHOLE_GPU_MILLI - min(WHOLE_GPU_MILLI, used.get(g.name, 0))
                    for g in info.node.gpus
                )
            ),
            info.gpu_models,
            alloc.cpu_free_milli,
            alloc.memory_free_bytes,
            free_units(info, alloc),
        )


def unusable_milli(view: FreeView, shape: TaskShape) -> int:
    """Free GPU milli of the node that a task of this shape cannot use."""
    free = view.free
    models_ok = not shape.models or any(m in shape.models for m in view.models)
    fits_host = (
        view.cpu_free_milli >= shape.cpu_milli and view.memory_free_bytes >= shape.memory_bytes
    )
    if not (models_ok and fits_host):
        return sum(free)
    if shape.milli_per_gpu >= WHOLE_GPU_MILLI and view.free_units is not None:
        # a GPU asked is one counted unit: any free unit serves, partly used GPU or not
        return 0 if view.free_units >= shape.gpu_count else sum(free)
    if shape.milli_per_gpu >= WHOLE_GPU_MILLI:
        if sum(1 for f in free if f == WHOLE_GPU_MILLI) < shape.gpu_count:
            return sum(free)
        return sum(f for f in free if f < WHOLE_GPU_MILLI)
    return sum(f for f in free if f < shape.milli_per_gpu)


def node_fragmentation(
    state: ClusterState, node_names: Iterable[str], mix: Counter[TaskShape]
) -> dict[str, int]:
    """Node → expected unusable free GPU milli over the mix (rounded to whole milli).

    Nodes in the same free state (most of a fleet: empty, or full) are worked out once.
    """
    total = sum(mix.values())
    result: dict[str, int] = {}
    known: dict[FreeView, int] = {}
    for name in node_names:
        view = FreeView.of(state, name)
        if total == 0 or not view.free:
            result[name] = 0
            continue
        value = known.get(view)
        if value is None:
            weighted = sum(n * unusable_milli(view, shape) for shape, n in mix.items())
            value = known[view] = round(weighted / total)
        result[name] = value
    return result


def domain_fragmentation(cluster: Cluster, per_node: Mapping[str, int]) -> dict[str, int]:
    """Sum per topology domain at every level above the host, keyed by the path so far."""
    levels = [lvl for lvl in cluster.topology.levels if lvl.key != HOSTNAME_LABEL]
    per_domain: dict[str, int] = {}
    for node in cluster.nodes:
        path: list[str] = []
        for level in levels:
            value = node.labels.get(level.key)
            if value is None:
                break  # unknown here: deeper levels cannot be placed either
            path.append(f"{level.name}={value}")
            key = "/".join(path)
            per_domain[key] = per_domain.get(key, 0) + per_node.get(node.name, 0)
    return dict(sorted(per_domain.items()))


def fragmentation(
    cluster: Cluster, state: ClusterState, pending: Iterable[Workload]
) -> tuple[dict[str, int], dict[str, int]]:
    """(per node, per domain) free-but-unusable GPU milli for the pending mix."""
    mix = task_mix(pending)
    names = sorted(n.name for n in cluster.nodes)
    per_node = node_fragmentation(state, names, mix)
    return per_node, domain_fragmentation(cluster, per_node)
