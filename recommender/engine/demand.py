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

from topology import mig
from topology.hardware import (
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    Cluster,
    Device,
    DeviceRequest,
    Node,
    Pod,
)

from .allocate import selector_matches
from .state import NodeInfo, partition_fraction


def advertised_gpus(node: Node) -> int:
    """``nvidia.com/gpu`` as the node advertises it: its physical GPUs, each GPU
    that carries counted units (replicas, MIG-single instances) once per unit."""
    with_units = {d.gpu for d in node.devices if d.unit_gpu_milli is not None}
    units = sum(1 for d in node.devices if d.unit_gpu_milli is not None)
    return node.gpu_count - len(with_units) + units


class GpuDemandFloor:
    """The least physical GPU milli each pod can occupy anywhere in the cluster
    (existing nodes and node-group templates): a lower bound, so a domain that
    cannot hold it cannot hold the pod.

    - device-plugin GPUs: per GPU asked, the smallest unit any GPU device offers
      (a whole GPU is 1000, a replica 1000/R, a MIG-single 1g.5gb 143); a share
      (milli < 1000, trace rows) weighs its milli;
    - DRA requests: a ``gpu_milli`` capacity request weighs that; otherwise each
      device weighs the least any matching GPU device takes, a partition by the
      largest fraction of any kind of counter it consumes
      (``state.partition_fraction``), rounded down (a 1g.10gb of an H100:
      max(1/7 compute, 1/8 memory) = 142).
    """

    def __init__(self, cluster: Cluster) -> None:
        self._classes = {c.name: c for c in cluster.device_classes}
        nodes = [*cluster.nodes, *(g.template for g in cluster.node_groups)]
        plugin = [_plugin_unit_milli(d) for n in nodes for d in n.devices]
        self._plugin_least = min((m for m in plugin if m is not None), default=WHOLE_GPU_MILLI)
        self._gpu_devices: list[tuple[Device, int]] = []
        for node in nodes:
            info = NodeInfo(node) if node.counter_sets else None
            self._gpu_devices += [(d, _device_milli(d, info)) for d in node.devices if d.gpu]
        self._request_cache: dict[tuple[object, ...], int] = {}

    def pod_milli(self, pod: Pod) -> int:
        milli = 0
        if pod.gpu is not None:
            each = pod.gpu.milli_per_gpu
            if not pod.gpu.is_share:
                each = min(each, self._plugin_least)
            milli += pod.gpu.count * each
        for claim in pod.claims:
            for request in claim.requests:
                if request.gpu:
                    milli += max(1, request.count) * self._request_milli(request)
        return milli

    def workload_milli(self, pods: Iterable[Pod]) -> int:
        return sum(self.pod_milli(p) for p in pods)

    def _request_milli(self, request: DeviceRequest) -> int:
        share = request.capacity_requests.get("gpu_milli")
        if share is not None:
            return share
        key = (request.device_class, request.selectors)
        cached = self._request_cache.get(key)
        if cached is None:
            device_class = self._classes.get(request.device_class)
            selectors = (*(device_class.selectors if device_class else ()), *request.selectors)
            matching = [
                milli
                for device, milli in self._gpu_devices
                if all(selector_matches(device, s) for s in selectors)
            ]
            cached = self._request_cache[key] = min(matching, default=WHOLE_GPU_MILLI)
        return cached


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
