"""What a replay adds on top of the openb trace: gangs (the trace has none) and teams
owning reserved nodes. Parsed from a cluster's stored ``source_settings``.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from topology.ingest.trace import BLOCK_LABEL
from topology.model.hardware import WHOLE_GPU_MILLI, Gang, GpuRequest, Pod, Resources

RESERVED_FOR_LABEL = "capacityweb.io/reserved-for"


@dataclass(frozen=True)
class GangSpec:
    """A multi-pod job added on top of the trace (the trace has no gangs)."""

    namespace: str
    name: str
    members: int
    gpus_per_member: int
    gpu_models: tuple[str, ...] = ()
    required_topology: str | None = BLOCK_LABEL
    cpu_milli_per_member: int = 16_000
    memory_mib_per_member: int = 65_536
    gpu_milli_per_gpu: int = WHOLE_GPU_MILLI  # < 1000: each member takes a share of one GPU

    def pods(self) -> tuple[Pod, ...]:
        return tuple(
            Pod(
                namespace=self.namespace,
                name=f"{self.name}-{index}",
                requests=Resources(
                    cpu_milli=self.cpu_milli_per_member,
                    memory_bytes=self.memory_mib_per_member * 2**20,
                    pods=1,
                ),
                gpu=GpuRequest(
                    count=self.gpus_per_member,
                    milli_per_gpu=self.gpu_milli_per_gpu,
                    models=self.gpu_models,
                ),
                labels={"scheduling.x-k8s.io/pod-group": self.name},
                gang=f"{self.namespace}/{self.name}",
                required_topology=self.required_topology,
            )
            for index in range(self.members)
        )

    def gang(self) -> Gang:
        return Gang(
            namespace=self.namespace,
            name=self.name,
            min_member=self.members,
            required_topology=self.required_topology,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GangSpec:
        return cls(
            namespace=str(data["namespace"]),
            name=str(data["name"]),
            members=int(data["members"]),
            gpus_per_member=int(data["gpus_per_member"]),
            gpu_models=tuple(data.get("gpu_models") or ()),
            required_topology=data.get("required_topology", BLOCK_LABEL),
            gpu_milli_per_gpu=int(data.get("gpu_milli_per_gpu", WHOLE_GPU_MILLI)),
        )


@dataclass(frozen=True)
class TeamSpec:
    """A team owning reserved nodes; a seeded share of the fill's arrivals are its pods.

    Its pods select its nodes by ``RESERVED_FOR_LABEL`` (the label is added to
    those nodes), so the fill uses part of the reservation and leaves the rest idle.
    """

    namespace: str
    nodes: tuple[str, ...]
    share: float = 0.0

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TeamSpec:
        return cls(
            namespace=str(data["namespace"]),
            nodes=tuple(data.get("nodes") or ()),
            share=float(data.get("share", 0.0)),
        )
