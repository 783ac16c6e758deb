"""What every builder shares: the copy-on-set base and Kubernetes quantities."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Generic, Self, TypeVar

from topology.model.hardware import Resources
from topology.model.quantity import cpu_milli, memory_bytes

HOSTNAME = "kubernetes.io/hostname"
WHOLE_GPU = {"gpu_milli": 1000}

Quantity = str | int | float


def merged_resources(
    base: Resources,
    cpu: Quantity | None,
    memory: Quantity | None,
    pods: int | None,
    extended: Mapping[str, int] | None,
) -> Resources:
    return Resources(
        cpu_milli=base.cpu_milli if cpu is None else cpu_milli(cpu),
        memory_bytes=base.memory_bytes if memory is None else memory_bytes(memory),
        pods=base.pods if pods is None else pods,
        extended={**base.extended, **(extended or {})},
    )


T = TypeVar("T")


class Builder(Generic[T]):
    """Holds the object built so far; every setter returns a changed copy."""

    _built: T

    def set(self, **fields: Any) -> Self:
        """Any other field of the object, as ``dataclasses.replace`` takes it."""
        clone = copy.copy(self)
        clone._built = replace(self._built, **fields)  # type: ignore[type-var]
        return clone

    def named(self, name: str) -> Self:
        """The object's ``name`` (every model object these builders make has one)."""
        return self.set(name=name)

    def build(self) -> T:
        return self._built
