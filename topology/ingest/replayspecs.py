"""What a replay adds on top of the openb trace: gangs (the trace has none) and teams
owning reserved nodes. Parsed from a cluster's stored ``source_settings``.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

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


@dataclass(frozen=True)
class NodeLabelSpec:
    """Labels a replay adds to every trace node carrying all of ``match``: what a
    cloud would label its nodes with (a managed pool's ``cloud.google.com/gke-nodepool``,
    the instance type), which the trace does not record.

    The replay's nodes are then grouped as a kube ingest groups them
    (``topology.kube.discovery``: pools from these labels, cluster-autoscaler's status
    among the replay's objects joined to them)."""

    match: Mapping[str, str]
    labels: Mapping[str, str]

    def applies_to(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key) == value for key, value in self.match.items())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NodeLabelSpec:
        match, labels = data.get("match"), data.get("labels")
        for field_name, value in (("match", match), ("labels", labels)):
            if not isinstance(value, Mapping) or not value:
                raise ValueError(
                    f"replay node_labels: {field_name}: must map label keys to values, "
                    f"got {value!r}"
                )
        return cls(
            match={str(k): str(v) for k, v in match.items()},  # type: ignore[union-attr]
            labels={str(k): str(v) for k, v in labels.items()},  # type: ignore[union-attr]
        )


GKE_POOL_LABEL = "cloud.google.com/gke-nodepool"


@dataclass(frozen=True)
class AutoscaledPoolSpec:
    """A GKE node pool cluster-autoscaler grows, between ``min_size`` and ``max_size``
    nodes: the replay writes it into cluster-autoscaler's status ConfigMap
    (``ca_status_object``), as CA reports every node group it manages. One managed
    instance group in ``zone`` (a zonal pool; a regional one has one per zone)."""

    pool: str
    min_size: int
    max_size: int
    zone: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AutoscaledPoolSpec:
        spec = cls(
            pool=str(data["pool"]),
            min_size=int(data["min_size"]),
            max_size=int(data["max_size"]),
            zone=str(data["zone"]),
        )
        if not 0 <= spec.min_size <= spec.max_size:
            raise ValueError(
                f"replay autoscaled_pools: {spec.pool}: needs 0 <= min_size <= max_size, got "
                f"{spec.min_size} and {spec.max_size}"
            )
        return spec


def gke_instance_group(project: str, zone: str, cluster: str, pool: str) -> str:
    """The node group name cluster-autoscaler reports for a GKE pool's managed instance
    group: its URL (``cloudprovider/gce/gce_cloud_provider.go`` ``gceMig.Id`` is
    ``GenerateMigUrl``), the group named ``gke-<cluster>-<pool>-<hash>-grp`` as GKE names
    it (the hash here is made up: it is the instance template's)."""
    digest = hashlib.sha256(f"{cluster}/{pool}".encode()).hexdigest()[:8]
    return (
        f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/"
        f"instanceGroups/gke-{cluster}-{pool}-{digest}-grp"
    )


def ca_status_object(groups: Iterable[tuple[str, int, int, int]], at: str) -> dict[str, Any]:
    """cluster-autoscaler's status ConfigMap (kube-system/cluster-autoscaler-status) for
    ``groups`` (name, min size, max size, nodes registered, all ready and at target), in
    the YAML format CA >= 1.30 writes (``clusterstate/api/types.go``
    ``ClusterAutoscalerStatus``, the shape of upstream's ``clusterstate/utils/
    status_test.yaml``); ``at``: its time."""

    def health(registered: int) -> dict[str, Any]:
        return {
            "status": "Healthy",
            "nodeCounts": {
                "registered": {
                    "total": registered,
                    "ready": registered,
                    "notStarted": 0,
                    "beingDeleted": 0,
                    "unready": {"total": 0, "resourceUnready": 0},
                },
                "longUnregistered": 0,
                "unregistered": 0,
            },
            "lastProbeTime": at,
            "lastTransitionTime": at,
        }

    def activity(status: str) -> dict[str, Any]:
        return {"status": status, "lastProbeTime": at, "lastTransitionTime": at}

    groups = list(groups)
    status = {
        "time": at,
        "autoscalerStatus": "Running",
        "clusterWide": {
            "health": health(sum(registered for *_, registered in groups)),
            "scaleUp": activity("NoActivity"),
            "scaleDown": {**activity("NoCandidates"), "candidates": 0},
        },
        "nodeGroups": [
            {
                "name": name,
                "health": {
                    **health(registered),
                    "cloudProviderTarget": registered,
                    "minSize": min_size,
                    "maxSize": max_size,
                },
                "scaleUp": activity("NoActivity"),
                "scaleDown": {**activity("NoCandidates"), "candidates": 0},
            }
            for name, min_size, max_size, registered in groups
        ],
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
        "data": {"status": yaml.safe_dump(status, sort_keys=False)},
    }
