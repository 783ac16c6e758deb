"""First-fit binding of pods a trace says were running, onto nodes it does not name.

The Alibaba trace records that a pod was running at a time, not on which
node. To start a replay from the cluster as it was, such pods are bound in
order to the first node with room (cpu, memory, pod slots, GPU model and
milli): an approximation of the past, not a model of kube-scheduler (that is
``placement``, which the replay runs on every pod it then schedules). Shares
go to the fullest GPU that still fits them; whole GPUs need free GPUs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from topology.model.hardware import WHOLE_GPU_MILLI, Node, Pod


def bind_first_fit(pods: Iterable[Pod], nodes: Iterable[Node]) -> tuple[list[Pod], list[Pod]]:
    """Bind pods in order to the first node with room (cpu, memory, GPU model and milli).

    Shares go to the fullest GPU that still fits them; whole GPUs need free
    GPUs. Pods no node can hold stay unbound (returned second).
    """
    free = [_FreeNode(node) for node in nodes]
    bound: list[Pod] = []
    unplaced: list[Pod] = []
    for pod in pods:
        target = next((f for f in free if f.fits(pod)), None)
        if target is None:
            unplaced.append(pod)
            continue
        target.take(pod)
        bound.append(replace(pod, node_name=target.node.name))
    return bound, unplaced


class _FreeNode:
    __slots__ = ("node", "cpu_milli", "memory_bytes", "pods", "gpu_milli")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.cpu_milli = node.allocatable.cpu_milli
        self.memory_bytes = node.allocatable.memory_bytes
        self.pods = node.allocatable.pods or 110
        self.gpu_milli = [WHOLE_GPU_MILLI] * node.gpu_count

    def fits(self, pod: Pod) -> bool:
        requests = pod.requests
        if requests.cpu_milli > self.cpu_milli or requests.memory_bytes > self.memory_bytes:
            return False
        if self.pods < 1:
            return False
        request = pod.gpu
        if request is None:
            return True
        model = self.node.gpus[0].model if self.node.gpus else None
        if request.models and model not in request.models:
            return False
        if request.is_share:
            return any(m >= request.milli_per_gpu for m in self.gpu_milli)
        return sum(1 for m in self.gpu_milli if m == WHOLE_GPU_MILLI) >= request.count

    def take(self, pod: Pod) -> None:
        self.cpu_milli -= pod.requests.cpu_milli
        self.memory_bytes -= pod.requests.memory_bytes
        self.pods -= 1
        request = pod.gpu
        if request is None:
            return
        if request.is_share:
            fitting = [i for i, m in enumerate(self.gpu_milli) if m >= request.milli_per_gpu]
            index = min(fitting, key=lambda i: (self.gpu_milli[i], i))
            self.gpu_milli[index] -= request.milli_per_gpu
            return
        taken = 0
        for index, milli in enumerate(self.gpu_milli):
            if milli == WHOLE_GPU_MILLI and taken < request.count:
                self.gpu_milli[index] = 0
                taken += 1
