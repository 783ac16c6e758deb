"""Pending work as the scheduler sees it: gangs (all-or-nothing) and single pods.

The scheduler simulation and the autoscaler both iterate over ``Workload``s, not
pods, because a gang is only useful when every member runs: counting its pods
one by one is exactly the mistake the naive autoscaler makes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from topology.model.hardware import WHOLE_GPU_MILLI, Cluster, Device, DeviceRequest, Gang, Pod

from .allocate import selector_matches
from .demand import GpuDemandFloor


@dataclass(frozen=True, slots=True)
class Workload:
    """One unit of placement: a gang or a lone pod, in scheduling order."""

    key: str  # "namespace/name" of the gang, or of the pod
    kind: str  # "gang" | "pod"
    namespace: str
    pods: tuple[Pod, ...]
    min_member: int
    required_topology: str | None = None
    preferred_topology: str | None = None
    priority: int = 0
    arrival: float = 0.0
    # the least physical GPU milli the pods can occupy (demand.GpuDemandFloor); None:
    # not worked out, the GPUs requested stand in
    least_gpu_milli: int | None = None

    @property
    def gpus(self) -> float:
        """Whole GPUs requested; a share counts as its milli / 1000."""
        return sum(pod_gpu_milli(p) for p in self.pods) / WHOLE_GPU_MILLI

    @property
    def floor_gpu_milli(self) -> int:
        """Physical GPU milli the pods occupy at least (a replica or a partition is a
        fraction of a GPU): what GPU arithmetic compares with free GPU milli."""
        if self.least_gpu_milli is None:
            return sum(pod_gpu_milli(p) for p in self.pods)
        return self.least_gpu_milli

    @property
    def least_gpus(self) -> float:
        return self.floor_gpu_milli / WHOLE_GPU_MILLI

    @property
    def common_selector(self) -> dict[str, str]:
        """nodeSelector entries every member carries (a node lacking one hosts no member)."""
        first, *rest = self.pods
        return {
            k: v
            for k, v in first.node_selector.items()
            if all(p.node_selector.get(k) == v for p in rest)
        }


def pod_gpu_milli(pod: Pod) -> int:
    gpu_milli = pod.gpu.total_milli if pod.gpu else 0
    for claim in pod.claims:
        if claim.allocation is not None:
            continue  # already allocated: its devices are held, not asked for
        for request in claim.requests:
            if not request.gpu or request.admin_access:
                continue  # a NIC, say, or admin access: not GPU demand
            share = request.capacity_requests.get("gpu_milli")
            gpu_milli += request.count * (share if share is not None else WHOLE_GPU_MILLI)
    return gpu_milli


def pod_workload(pod: Pod) -> Workload:
    """A lone pod as a workload of one (min_member 1)."""
    return Workload(
        key=pod.key,
        kind="pod",
        namespace=pod.namespace,
        pods=(pod,),
        min_member=1,
        required_topology=pod.required_topology,
        preferred_topology=pod.preferred_topology,
        priority=pod.priority,
        arrival=pod.arrival,
    )


def _gang_workload(key: str, members: list[Pod], gang: Gang | None) -> Workload:
    members.sort(key=lambda p: (p.arrival, p.name))
    first = members[0]
    min_member = gang.min_member if gang else len(members)
    required = (gang.required_topology if gang else None) or first.required_topology
    preferred = (gang.preferred_topology if gang else None) or first.preferred_topology
    priority = max([gang.priority if gang else first.priority, *(p.priority for p in members)])
    return Workload(
        key=key,
        kind="gang",
        namespace=gang.namespace if gang else first.namespace,
        pods=tuple(members),
        min_member=min_member if min_member > 0 else len(members),
        required_topology=required,
        preferred_topology=preferred,
        priority=priority,
        arrival=min(p.arrival for p in members),
    )


def sort_key(workload: Workload) -> tuple[int, float, str]:
    """Scheduling order: priority first (desc), then arrival, then name."""
    return (-workload.priority, workload.arrival, workload.key)


def pending_workloads(
    cluster: Cluster, floor: GpuDemandFloor | None = None
) -> tuple[Workload, ...]:
    """Pending pods grouped into gangs (Cluster.gangs / Pod.gang) and lone pods.

    A gang whose members are partly bound needs ``min_member`` minus the members
    already running, never below 0 (scheduler-plugins ``pkg/coscheduling``
    Permit: a member binds once running + waiting members reach minMember). When
    the running members already reach it, every pending member schedules on its
    own (Permit allows it at once): each becomes a lone-pod workload. A need above
    the pending members is capped at them (members not yet created are not
    modelled). With members running, the gang is ready once running plus newly
    placed members reach ``min_member`` (Volcano gang plugin ``JobReadyFn``:
    ``JobInfo.ReadyTaskNum`` counts Bound, Binding, Running and Allocated tasks;
    coscheduling Permit alike): the first members still needed are the gang, each
    pending member beyond them schedules on its own, a lone-pod workload.

    ``floor``: a ``GpuDemandFloor`` of a cluster with this one's nodes, node groups
    and device classes (what it reads), when the caller keeps one across edits of
    the pending pods (``caches.only_pending_differ``); else one is made.
    """
    gangs = {g.key: g for g in cluster.gangs}
    bound_by_gang: dict[str, int] = {}
    members: dict[str, list[Pod]] = {}
    singles: list[Workload] = []
    gpu_requests = _GpuRequests(cluster)
    for pod in cluster.pods:
        pod = gpu_requests.marked(pod)
        if pod.gang is None:
            if pod.node_name is None:
                singles.append(pod_workload(pod))
        elif pod.node_name is None:
            members.setdefault(pod.gang, []).append(pod)
        else:
            bound_by_gang[pod.gang] = bound_by_gang.get(pod.gang, 0) + 1
    result = singles
    followers: dict[str, list[Workload]] = {}  # members beyond a ready gang, in its turn
    for key, pods in members.items():
        workload = _gang_workload(key, pods, gangs.get(key))
        still_needed = max(0, workload.min_member - bound_by_gang.get(key, 0))
        if still_needed == 0:
            result += [pod_workload(pod) for pod in workload.pods]
        elif bound_by_gang.get(key) and still_needed < len(pods):
            gang_pods, alone = workload.pods[:still_needed], workload.pods[still_needed:]
            result.append(replace(workload, pods=gang_pods, min_member=still_needed))
            followers[key] = [pod_workload(pod) for pod in alone]
        else:
            result.append(_with_min_member(workload, min(still_needed, len(pods))))
    floor = GpuDemandFloor(cluster) if floor is None else floor
    ordered: list[Workload] = []
    for workload in sorted(result, key=sort_key):
        ordered.append(workload)
        if workload.kind == "gang":
            ordered += followers.get(workload.key, ())
    return tuple(replace(w, least_gpu_milli=floor.workload_milli(w.pods)) for w in ordered)


class _GpuRequests:
    """Which DRA requests ask for GPUs (or parts of one): those whose device class and
    selectors match GPU devices of the cluster or of a node-group template. A request
    matching no device anywhere keeps counting as GPU demand (nothing says otherwise)."""

    def __init__(self, cluster: Cluster) -> None:
        self._classes = {c.name: c for c in cluster.device_classes}
        nodes = [*cluster.nodes, *(g.template for g in cluster.node_groups)]
        self._devices: list[Device] = [d for n in nodes for d in n.devices]
        self._known: dict[tuple[object, ...], bool] = {}

    def marked(self, pod: Pod) -> Pod:
        if not pod.claims:
            return pod
        claims = tuple(
            replace(claim, requests=tuple(self._marked(r) for r in claim.requests))
            for claim in pod.claims
        )
        return pod if claims == pod.claims else replace(pod, claims=claims)

    def _marked(self, request: DeviceRequest) -> DeviceRequest:
        key = (request.device_class, request.selectors)
        gpu = self._known.get(key)
        if gpu is None:
            device_class = self._classes.get(request.device_class)
            selectors = (*(device_class.selectors if device_class else ()), *request.selectors)
            matched = [d for d in self._devices if all(selector_matches(d, s) for s in selectors)]
            gpu = self._known[key] = not matched or any(d.gpu is not None for d in matched)
        subrequests = tuple(self._marked(s) for s in request.first_available)
        if gpu == request.gpu and subrequests == request.first_available:
            return request
        return replace(request, gpu=gpu, first_available=subrequests)


def _with_min_member(workload: Workload, min_member: int) -> Workload:
    if min_member == workload.min_member:
        return workload
    return Workload(
        key=workload.key,
        kind=workload.kind,
        namespace=workload.namespace,
        pods=workload.pods,
        min_member=min_member,
        required_topology=workload.required_topology,
        preferred_topology=workload.preferred_topology,
        priority=workload.priority,
        arrival=workload.arrival,
    )
