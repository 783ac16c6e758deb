"""What GPU demand weighs when it is compared with free GPU: a lower bound.

Domain pruning (a gang's required level), "needs N GPUs in one block" and the
autoscaler's node-count bounds compare a workload's GPU demand with the free
GPU milli of physical GPUs. A pod asking one ``nvidia.com/gpu`` may get a
quarter-GPU time-slicing replica; a DRA claim for a 1g.10gb partition takes a
seventh of an H100 by its counters (KEP-4815 partitionable devices). Counting
either as a whole GPU prunes domains where the pods do fit, so the comparison
uses the least each pod can occupy anywhere in the cluster.

``advertised_gpus`` is the supply side of the same count: the
``nvidia.com/gpu`` a node advertises, which a count-based autoscaler reads
from a template (cluster-autoscaler's binpacking estimator compares requests
with the template node's allocatable).

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable

from topology.model import mig
from topology.model.hardware import (
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    Cluster,
    Device,
    DeviceRequest,
    Node,
    Pod,
)

from .allocate import selector_matches
from .records import NodeAlloc, NodeInfo, partition_fraction


def advertised_gpus(node: Node) -> int:
    """``nvidia.com/gpu`` as the node advertises it: its physical GPUs, each GPU
    that carries counted units (replicas, MIG-single instances) once per unit."""
    with_units = {d.gpu for d in node.devices if d.unit_gpu_milli is not None}
    units = sum(1 for d in node.devices if d.unit_gpu_milli is not None)
    return node.gpu_count - len(with_units) + units


def free_units(info: NodeInfo, alloc: NodeAlloc) -> int | None:
    """Untouched counted units of a node; None when its GPUs carry none."""
    units = [d for d in info.gpu_devices if d.unit_gpu_milli is not None]
    if not units:
        return None
    return sum(1 for d in units if alloc.is_untouched(d))


class GpuDemandFloor:
    """The least physical GPU milli each pod can occupy on any node its
    nodeSelector and required node affinity admit (existing nodes and
    node-group templates): a lower bound, so a domain that cannot hold it
    cannot hold the pod.

    - device-plugin GPUs: per GPU asked, the smallest unit such a node's GPU
      devices offer (a whole GPU is 1000, a replica 1000/R, a MIG-single 1g.5gb
      143); a share (milli < 1000, trace rows) weighs its milli;
    - DRA requests: a ``gpu_milli`` capacity request weighs that; otherwise each
      device weighs the least any matching GPU device takes, a partition by the
      largest fraction of any kind of counter it consumes
      (``state.partition_fraction``), rounded down (a 1g.10gb of an H100:
      max(1/7 compute, 1/8 memory) = 142).

    A pod no node admits weighs whole GPUs (nothing says otherwise).
    """

    def __init__(self, cluster: Cluster) -> None:
        self._classes = {c.name: c for c in cluster.device_classes}
        self._nodes: list[tuple[Node, list[tuple[Device, int]]]] = []
        for node in (*cluster.nodes, *(g.template for g in cluster.node_groups)):
            info = NodeInfo(node) if node.counter_sets else None
            weighed = [(d, _device_milli(d, info)) for d in node.devices if d.gpu]
            if weighed:
                self._nodes.append((node, weighed))
        self._admitting: dict[tuple[object, ...], list[tuple[Device, int]]] = {}
        self._least: dict[tuple[object, ...], int] = {}

    def pod_milli(self, pod: Pod) -> int:
        devices_key = (tuple(sorted(pod.node_selector.items())), pod.affinity)
        milli = 0
        if pod.gpu is not None:
            each = pod.gpu.milli_per_gpu
            if not pod.gpu.is_share:
                each = min(each, self._least_unit(devices_key, pod))
            milli += pod.gpu.count * each
        for claim in pod.claims:
            for request in claim.requests:
                if request.gpu:
                    milli += max(1, request.count) * self._request_milli(devices_key, pod, request)
        return milli

    def workload_milli(self, pods: Iterable[Pod]) -> int:
        return sum(self.pod_milli(p) for p in pods)

    def _devices(self, key: tuple[object, ...], pod: Pod) -> list[tuple[Device, int]]:
        """GPU devices (with their weight) of the nodes the pod's selectors admit."""
        found = self._admitting.get(key)
        if found is None:
            found = self._admitting[key] = [
                weighed
                for node, devices in self._nodes
                if _admits(pod, node)
                for weighed in devices
            ]
        return found

    def _least_unit(self, key: tuple[object, ...], pod: Pod) -> int:
        cache_key = ("plugin", key)
        least = self._least.get(cache_key)
        if least is None:
            units = [_plugin_unit_milli(d) for d, _ in self._devices(key, pod)]
            least = min((u for u in units if u is not None), default=WHOLE_GPU_MILLI)
            self._least[cache_key] = least
        return least

    def _request_milli(self, key: tuple[object, ...], pod: Pod, request: DeviceRequest) -> int:
        share = request.capacity_requests.get("gpu_milli")
        if share is not None:
            return share
        cache_key = (key, request.device_class, request.selectors)
        least = self._least.get(cache_key)
        if least is None:
            device_class = self._classes.get(request.device_class)
            selectors = (*(device_class.selectors if device_class else ()), *request.selectors)
            matching = [
                milli
                for device, milli in self._devices(key, pod)
                if all(selector_matches(device, s) for s in selectors)
            ]
            least = self._least[cache_key] = min(matching, default=WHOLE_GPU_MILLI)
        return least


def _admits(pod: Pod, node: Node) -> bool:
    """nodeSelector and required node affinity (NodeAffinity's label part)."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return not pod.affinity or any(term.matches(labels) for term in pod.affinity)


def _plugin_unit_milli(device: Device) -> int | None:
    """What one ``nvidia.com/gpu`` of this device weighs; None for other devices."""
    if device.gpu is None or device.consumes or device.driver != GPU_RESOURCE:
        return None
    if device.unit_gpu_milli is not None:
        return device.unit_gpu_milli
    return WHOLE_GPU_MILLI if device.profile is None else None


def _device_milli(device: Device, info: NodeInfo | None) -> int:
    """The least of its GPU a device takes when allocated, rounded down (seven
    1g.10gb sevenths of an H100 must still fit one GPU)."""
    if device.unit_gpu_milli is not None:
        return device.unit_gpu_milli
    if device.consumes and info is not None:
        fraction = partition_fraction(device, info)
        return int(min(1.0, fraction) * WHOLE_GPU_MILLI) if fraction > 0 else WHOLE_GPU_MILLI
    if device.profile is not None:  # a MIG device with no counters: the MIG tables
        return int(mig.instance_share(device.model, device.profile) * WHOLE_GPU_MILLI)
    return WHOLE_GPU_MILLI
