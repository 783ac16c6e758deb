"""Counted device-plugin units: which units a pod gets, and what GPU demand weighs.

The NVIDIA device plugin advertises ``nvidia.com/gpu`` as a count, and
kube-scheduler's NodeResourcesFit only compares counts
(``pkg/scheduler/framework/plugins/noderesources/fit.go``: a pod fits while
the sum of requests stays within allocatable). Under MIG *single* strategy a
unit is a MIG instance, under time-slicing or MPS a replica of a GPU
(``topology.dra.plugin_gpus``); several units share one physical GPU::

    physical GPU gpu-0 (what the heatmap draws)
     ├─ gpu-0-replica-0   250 milli  ← pod a
     ├─ gpu-0-replica-1   250 milli  ← pod b
     ├─ gpu-0-replica-2   250 milli
     └─ gpu-0-replica-3   250 milli

Which units a pod gets lives here; what GPU demand weighs in ``demand``:

- ``preferred_units``: which free units a pod takes, following the device
  plugin's default ``distributed`` policy (``internal/rm/allocate.go``: the
  GPU with the fewest allocated replicas first, then the one this allocation
  touched least), so the heatmap shows the spread the plugin produces;
- ``advertised_gpus``: the ``nvidia.com/gpu`` count a node advertises (what a
  count-based autoscaler reads from a template).

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Sequence

from topology.hardware import Device, Node

from .state import NodeAlloc


def preferred_units(alloc: NodeAlloc, free: Sequence[Device], count: int) -> list[Device]:
    """``count`` of the ``free`` devices, as the device plugin would pick them.

    Whole GPUs (no units among them): the lowest-indexed, as before. Units: one
    at a time from the physical GPU with the fewest units taken (counting those
    just picked), then the one this pod picked least, then node order.
    """
    if not any(d.unit_gpu_milli is not None for d in free):
        return list(free[:count])
    taken: dict[str, int] = {}
    order: dict[str, int] = {}
    for device in free:
        order.setdefault(device.gpu or "", len(order))
    for gpu in order:
        taken[gpu] = len(alloc.gpu_pods.get(gpu, ()))
    picked: dict[str, int] = dict.fromkeys(order, 0)
    remaining = list(free)
    chosen: list[Device] = []
    while len(chosen) < count and remaining:
        best = min(
            remaining,
            key=lambda d: (
                taken[d.gpu or ""] + picked[d.gpu or ""],
                picked[d.gpu or ""],
                order[d.gpu or ""],
            ),
        )
        remaining.remove(best)
        picked[best.gpu or ""] += 1
        chosen.append(best)
    return chosen


def advertised_gpus(node: Node) -> int:
    """``nvidia.com/gpu`` as the node advertises it: physical GPUs, with each GPU
    that carries counted units counted once per unit (what cluster-autoscaler
    reads from a template's allocatable)."""
    with_units = {d.gpu for d in node.devices if d.unit_gpu_milli is not None}
    units = sum(1 for d in node.devices if d.unit_gpu_milli is not None)
    return node.gpu_count - len(with_units) + units
