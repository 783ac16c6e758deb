"""Nodes and their physical GPUs."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

from tests.builders.base import HOSTNAME, WHOLE_GPU, Builder, Quantity, merged_resources
from topology.model.devices import CounterSet, Device, Gpu
from topology.model.hardware import Node, Resources
from topology.model.mig import partitionable_gpu
from topology.model.terms import Taint

_KEEP: Any = object()  # GpuSpec fields a call leaves as they were


@dataclass(frozen=True)
class GpuSpec:
    """The physical GPUs ``NodeBuilder.gpus`` makes at ``build()``: names are formats of
    ``{node}`` and ``{i}`` (and ``{gpu}``, the GPU's name, for devices)."""

    count: int = 0
    model: str | None = None
    gpu_name: str = "gpu-{i}"
    device_name: str = "{gpu}"
    devices: bool = True
    capacity: Mapping[str, int] | None = field(default_factory=lambda: dict(WHOLE_GPU))
    device_model: bool = True
    shareable: bool = False


class NodeBuilder(Builder[Node]):
    """A Node: nothing allocatable, no labels, no GPUs until said."""

    def __init__(self, name: str) -> None:
        self._built = Node(name)
        self._gpus = GpuSpec()
        self._hostname = False

    def allocatable(
        self,
        cpu: Quantity | None = None,
        memory: Quantity | None = None,
        pods: int | None = None,
        extended: Mapping[str, int] | None = None,
    ) -> Self:
        """What the node offers; ``cpu`` in cores or a quantity, ``memory`` in bytes or
        a quantity; what is not said keeps its value."""
        return self.set(
            allocatable=merged_resources(self._built.allocatable, cpu, memory, pods, extended)
        )

    def resources(self, resources: Resources) -> Self:
        return self.set(allocatable=resources)

    def label(self, key: str, value: str) -> Self:
        return self.set(labels={**self._built.labels, key: value})

    def labels(self, labels: Mapping[str, str]) -> Self:
        return self.set(labels={**self._built.labels, **labels})

    def hostname(self) -> Self:
        """The ``kubernetes.io/hostname`` label the kubelet sets: the node's name,
        whatever it is named at ``build()``."""
        clone = copy.copy(self)
        clone._hostname = True
        return clone

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        return self.set(taints=(*self._built.taints, Taint(key, value, effect)))

    def gpus(self, count: int, model: str | None | object = _KEEP, **spec: Any) -> Self:
        """``count`` physical GPUs, each with one whole Device on it (``GpuSpec``).

        What is not said keeps its value, so ``H100.gpus(2)`` is two of the shape's
        GPUs. ``devices=False``: GPUs only (what counting-only code reads);
        ``capacity=None``: devices without the ``gpu_milli`` capacity;
        ``device_model=False``: devices without the model; ``shareable``: consumable
        devices several pods draw on (DRA allowMultipleAllocations).
        """
        if model is not _KEEP:
            spec["model"] = model
        clone = copy.copy(self)
        clone._gpus = replace(self._gpus, count=count, **spec)
        return clone

    def gpu(self, *gpus: Gpu) -> Self:
        """Physical GPUs as given, after those ``gpus`` makes."""
        return self.set(gpus=(*self._built.gpus, *gpus))

    def device(self, *devices: Device) -> Self:
        """Devices as given, after those ``gpus`` makes."""
        return self.set(devices=(*self._built.devices, *devices))

    def counter_set(self, *counters: CounterSet) -> Self:
        return self.set(counter_sets=(*self._built.counter_sets, *counters))

    def partitionable_gpu(self, name: str, model: str) -> Self:
        """One MIG-capable GPU as DRA publishes it: its counters and every partition
        (``topology.model.mig.partitionable_gpu``)."""
        counters, devices = partitionable_gpu(name, model)
        return self.gpu(Gpu(name, model=model)).counter_set(counters).device(*devices)

    def group(self, node_group: str | None) -> Self:
        return self.set(node_group=node_group)

    def price(self, per_node_hour: float | None) -> Self:
        return self.set(price_per_node_hour=per_node_hour)

    def unschedulable(self) -> Self:
        return self.set(unschedulable=True)

    def not_ready(self) -> Self:
        return self.set(ready=False)

    def created(self, at: float) -> Self:
        return self.set(created=at)

    def build(self) -> Node:
        node, spec = self._built, self._gpus
        labels = {**node.labels, HOSTNAME: node.name} if self._hostname else node.labels
        gpus = tuple(
            Gpu(spec.gpu_name.format(node=node.name, i=i), model=spec.model)
            for i in range(spec.count)
        )
        devices = tuple(
            Device(
                spec.device_name.format(node=node.name, i=i, gpu=gpu.name),
                gpu=gpu.name,
                model=spec.model if spec.device_model else None,
                capacity=dict(spec.capacity) if spec.capacity is not None else {},
                shareable=spec.shareable,
            )
            for i, gpu in enumerate(gpus)
            if spec.devices
        )
        return replace(
            node,
            labels=labels,
            gpus=(*gpus, *node.gpus),
            devices=(*devices, *node.devices),
        )


def make_node(name: str = "") -> NodeBuilder:
    """A node builder; ``name`` may wait for ``named`` when the builder is a shape."""
    return NodeBuilder(name)
