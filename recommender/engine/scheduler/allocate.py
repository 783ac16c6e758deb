"""Which devices of a node could serve a pod: GPU counts, shares, partitions, DRA claims.

Filters ask "is there any valid set of devices?"; scores ask "which of the
valid sets is best?". Both need the same enumeration, so it lives here once.
Each function returns the candidate device takes, or a reason string when
there is none (the reason is what the diagnosis aggregates).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from topology.model.hardware import (
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    AttributeSelector,
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    GpuRequest,
    Pod,
)

from .records import GPU_MILLI, Allocation, DeviceTake, NodeAlloc, NodeInfo, pod_allocation_base

INSUFFICIENT_GPU = "Insufficient nvidia.com/gpu"
INSUFFICIENT_SHARE = "Insufficient nvidia.com/gpu share"
GPU_MEMORY_MISMATCH = "node(s) didn't match GPU memory"
CLAIMS_UNALLOCATABLE = "cannot allocate all claims"
# dynamicresources.go Filter: an allocated claim whose nodeSelector excludes the node
CLAIM_NOT_ON_NODE = "resourceclaim not available on the node"

Option = tuple[DeviceTake, ...]


def model_reason(models: tuple[str, ...]) -> str:
    return f"node(s) didn't match GPU model {'|'.join(models)}"


def _model_ok(device: Device, info: NodeInfo, request: GpuRequest) -> bool:
    if not request.models:
        return True
    model = device.model or _gpu_attr(info, device, "model")
    return model in request.models


def _memory_ok(device: Device, info: NodeInfo, request: GpuRequest) -> bool:
    if request.memory_bytes is None:
        return True
    memory = device.memory_bytes or _gpu_attr(info, device, "memory_bytes")
    return isinstance(memory, int) and memory >= request.memory_bytes


def _gpu_attr(info: NodeInfo, device: Device, name: str) -> object:
    gpu = info.gpus.get(device.gpu or "")
    return getattr(gpu, name) if gpu is not None else None


def gpu_options(info: NodeInfo, alloc: NodeAlloc, request: GpuRequest) -> list[Option] | str:
    """Device choices for a count-based GPU request, or why there are none.

    A share (milli < 1000) may use any shareable GPU device with enough free
    gpu_milli: one option per device. Whole GPUs need untouched devices; the
    lowest-indexed ones are taken (as the device plugin does): one option.
    """
    devices = info.gpu_devices
    if not devices:
        return INSUFFICIENT_GPU
    matching = [d for d in devices if _model_ok(d, info, request)]
    if not matching:
        return model_reason(request.models)
    matching = [d for d in matching if _memory_ok(d, info, request)]
    if not matching:
        return GPU_MEMORY_MISMATCH
    if request.is_share:
        return _share_options(alloc, matching, request)
    free = [d for d in matching if alloc.is_untouched(d)]
    if len(free) < request.count:
        return INSUFFICIENT_GPU
    chosen = free[: request.count]
    return [tuple(DeviceTake(d.name, {GPU_MILLI: WHOLE_GPU_MILLI}, False) for d in chosen)]


def gpu_fits(info: NodeInfo, alloc: NodeAlloc, request: GpuRequest) -> bool:
    """Whether ``gpu_options`` finds an option, without building the options (what a
    node's GPU fit costs when only the verdict is asked, as the array scores ask it)."""
    matching = [
        d for d in info.gpu_devices if _model_ok(d, info, request) and _memory_ok(d, info, request)
    ]
    if request.is_share:
        return any(_share_room(alloc, d, request) for d in matching)
    return bool(matching) and sum(1 for d in matching if alloc.is_untouched(d)) >= request.count


def gpu_fit_key(devices: Sequence[tuple[object, ...]]) -> tuple[object, ...]:
    """Everything ``gpu_fits`` reads of a node, for any request: its ``gpu_device_state``
    sorted (``gpu_fits`` only counts devices or asks whether any has room, so nodes
    whose devices differ only in order or name get one verdict)."""
    return tuple(sorted(devices))


def gpu_device_state(info: NodeInfo, alloc: NodeAlloc) -> list[tuple[object, ...]]:
    """Everything ``gpu_options`` reads of a node, per GPU device in order: its model and
    memory as ``_model_ok`` and ``_memory_ok`` resolve them, whether a share may use it
    and its free state (``_share_room``, ``is_untouched``). Two nodes alike here get the
    same options, device for device (their names aside)."""
    parts: list[tuple[object, ...]] = []
    for device in info.gpu_devices:
        model = device.model or _gpu_attr(info, device, "model")
        memory = device.memory_bytes or _gpu_attr(info, device, "memory_bytes")
        gpu = device.gpu or ""
        parts.append(
            (
                model is None,
                str(model or ""),
                isinstance(memory, int),
                memory if isinstance(memory, int) else 0,
                device.shareable,
                _plugin_whole_gpu(device),
                alloc.gpu_nonpartition_milli.get(gpu, 0) == alloc.gpu_milli.get(gpu, 0),
                alloc.device_milli_free(device),
                alloc.is_untouched(device),
            )
        )
    return parts


def _share_options(
    alloc: NodeAlloc, devices: list[Device], request: GpuRequest
) -> list[Option] | str:
    """Devices with room for a share (``_share_room``)."""
    milli = request.milli_per_gpu
    options: list[Option] = [
        (DeviceTake(d.name, {GPU_MILLI: milli}, False),)
        for d in devices
        if _share_room(alloc, d, request)
    ]
    return options or INSUFFICIENT_SHARE


def _share_room(alloc: NodeAlloc, device: Device, request: GpuRequest) -> bool:
    """Room for a share: a shareable device (the trace's GPUs, DRA consumable devices),
    and for a fraction-aware scheduler's share (KAI's ``gpu-fraction``,
    ``topology.kube.kai``) a device plugin's whole GPU too, never a counted unit (a
    replica or MIG instance is taken whole), with its GPU not partitioned and enough
    milli free."""
    gpu = device.gpu or ""
    return (
        (device.shareable or (request.shares_whole_gpus and _plugin_whole_gpu(device)))
        and alloc.gpu_nonpartition_milli.get(gpu, 0) == alloc.gpu_milli.get(gpu, 0)
        and alloc.device_milli_free(device) >= request.milli_per_gpu
    )


def _plugin_whole_gpu(device: Device) -> bool:
    return device.driver == GPU_RESOURCE and device.unit_gpu_milli is None and not device.profile


# --- DRA claims -------------------------------------------------------------------


def _lookup(mapping: Mapping[str, object], name: str) -> object:
    if name in mapping:
        return mapping[name]
    short = name.rsplit("/", 1)[-1]
    for key, value in mapping.items():
        if key.rsplit("/", 1)[-1] == short:
            return value
    return None


def _selector_value(device: Device, selector: AttributeSelector) -> object:
    if selector.target == "driver":
        return device.driver
    if selector.target == "capacity":
        value = _lookup(device.capacity, selector.name)
        if value is None and selector.name.rsplit("/", 1)[-1] == "memory":
            return device.memory_bytes
        return value
    return _lookup(device.attributes, selector.name)


def selector_matches(device: Device, selector: AttributeSelector) -> bool:
    """One compiled CEL term; a missing attribute never matches (as in CEL errors)."""
    actual = _selector_value(device, selector)
    expected = selector.value
    if actual is None:
        return False
    if selector.op == "in":
        return isinstance(expected, tuple) and str(actual) in expected
    if selector.op in ("==", "!="):
        equal = str(actual) == str(expected) if isinstance(actual, str) else actual == expected
        return equal if selector.op == "==" else not equal
    return _compare(actual, selector.op, expected)


def _compare(actual: object, op: str, expected: object) -> bool:
    if not isinstance(actual, int) or not isinstance(expected, int):
        return False
    return {
        "<": actual < expected,
        "<=": actual <= expected,
        ">": actual > expected,
        ">=": actual >= expected,
    }.get(op, False)


class _ClaimScratch:
    """Devices and counters already chosen for this pod while its claims are solved.

    ``partitionable_devices`` is the DRAPartitionableDevices feature gate of the
    simulated scheduler: off, a device that consumes counters is never allocated,
    though it still matches its requests (so an ``All`` request over it fails), as the
    structured allocator's ``allocateDevice`` does (k8s.io/dynamic-resource-allocation
    ``structured/internal/{stable,incubating}``: "Devices that consume counters can not
    be allocated if the PartitionableDevices feature is not enabled").
    """

    def __init__(self, alloc: NodeAlloc, partitionable_devices: bool = True) -> None:
        self.alloc = alloc
        self.partitionable_devices = partitionable_devices
        self.used: set[str] = set()
        self.capacity_used: dict[str, dict[str, int]] = {}
        self.counters_used: dict[str, dict[str, int]] = {}
        self.gpus_used: set[str] = set()

    def can_take(self, device: Device, request: DeviceRequest) -> bool:
        if device.consumes and not self.partitionable_devices:
            return False
        if request.capacity_requests:
            return self._capacity_ok(device, request.capacity_requests)
        if device.name in self.used or device.gpu in self.gpus_used and not device.consumes:
            return False
        if device.consumes:
            return self._counters_ok(device)
        return self.alloc.is_untouched(device)

    def _capacity_ok(self, device: Device, wanted: Mapping[str, int]) -> bool:
        if not device.shareable or device.name in self.alloc.exclusive or device.name in self.used:
            return False
        free = self.alloc.device_free.get(device.name, {})
        pending = self.capacity_used.get(device.name, {})
        for name, amount in wanted.items():
            total = device.capacity.get(name)
            if total is None:
                return False
            if free.get(name, total) - pending.get(name, 0) < amount:
                return False
        return True

    def _counters_ok(self, device: Device) -> bool:
        if device.name in self.alloc.exclusive:
            return False
        if device.gpu is not None and self.alloc.gpu_nonpartition_milli.get(device.gpu, 0) > 0:
            return False
        for use in device.consumes:
            free = self.alloc.counters_free.get(use.counter_set, {})
            pending = self.counters_used.get(use.counter_set, {})
            for name, amount in use.counters.items():
                if free.get(name, 0) - pending.get(name, 0) < amount:
                    return False
        return True

    def take(self, device: Device, request: DeviceRequest) -> DeviceTake:
        if request.capacity_requests:
            pending = self.capacity_used.setdefault(device.name, {})
            for name, amount in request.capacity_requests.items():
                pending[name] = pending.get(name, 0) + amount
            return DeviceTake(device.name, dict(request.capacity_requests), False)
        self.used.add(device.name)
        if device.gpu is not None and not device.consumes:
            self.gpus_used.add(device.gpu)
        for use in device.consumes:
            pending = self.counters_used.setdefault(use.counter_set, {})
            for name, amount in use.counters.items():
                pending[name] = pending.get(name, 0) + amount
        return DeviceTake(device.name, {}, True)


def _request_candidates(
    info: NodeInfo, request: DeviceRequest, classes: Mapping[str, DeviceClass]
) -> list[Device] | str:
    device_class = classes.get(request.device_class)
    if device_class is None:
        return f"{CLAIMS_UNALLOCATABLE}: device class {request.device_class} not found"
    selectors = (*device_class.selectors, *request.selectors)
    devices = info.node.devices
    if info.node.incomplete_pools:  # allocator_stable.go allocateOne: skipped, no error
        skipped = set(info.node.incomplete_pools)
        devices = tuple(d for d in devices if f"{d.driver}/{d.pool}" not in skipped)
    return [d for d in devices if all(selector_matches(d, s) for s in selectors)]


def claim_takes(
    info: NodeInfo,
    alloc: NodeAlloc,
    pod: Pod,
    classes: Mapping[str, DeviceClass],
    partitionable_devices: bool = True,
) -> Option | str:
    """One valid device set for all of the pod's claims on this node, or why not
    (``partitionable_devices``: the DRAPartitionableDevices gate, see ``_ClaimScratch``)."""
    scratch = _ClaimScratch(alloc, partitionable_devices)
    takes: list[DeviceTake] = []
    for claim in pod.claims:
        if claim.allocation is not None:  # its devices are held already (claims_held)
            if not claim.allocation.allows(info.node.name, info.node.labels):
                return CLAIM_NOT_ON_NODE
            continue
        result = _solve_claim(info, scratch, claim, classes)
        if isinstance(result, str):
            return result
        takes.extend(result)
    return tuple(takes)


def _solve_claim(
    info: NodeInfo,
    scratch: _ClaimScratch,
    claim: DeviceClaim,
    classes: Mapping[str, DeviceClass],
) -> list[DeviceTake] | str:
    """The claim's devices on this node. A request with subrequests (``firstAvailable``)
    takes the first subrequest that can be allocated with the others, tried in the
    structured allocator's order (``allocator_stable.go`` ``allocateOne``: depth
    first, the earlier request's subrequests outermost); the reason given is the
    first choice's."""
    first_reason: str | None = None
    for chosen in _subrequest_choices(claim):
        result = _solve_requests(info, scratch, chosen, classes)
        if not isinstance(result, str):
            return result
        first_reason = first_reason or result
    return first_reason or CLAIMS_UNALLOCATABLE


def _subrequest_choices(claim: DeviceClaim) -> Iterator[DeviceClaim]:
    """The claim with each request replaced by one of its alternatives, in priority
    order; a matchAttribute naming a request applies to the subrequest chosen for it,
    one naming ``<request>/<subrequest>`` only when that subrequest is chosen."""
    if not any(r.first_available for r in claim.requests):
        yield claim
        return
    for requests in itertools.product(*(r.alternatives() for r in claim.requests)):
        chosen = {r.name.partition("/")[0]: r.name for r in requests}
        constraints = []
        for constraint in claim.constraints:
            names = tuple(
                chosen.get(name, name)
                for name in constraint.requests
                if chosen.get(name.partition("/")[0]) in (name, chosen.get(name))
            )
            if constraint.requests and not names:
                continue  # it names only subrequests not chosen: nothing to constrain
            constraints.append(replace(constraint, requests=names))
        yield replace(claim, requests=requests, constraints=tuple(constraints))


def _solve_requests(
    info: NodeInfo,
    scratch: _ClaimScratch,
    claim: DeviceClaim,
    classes: Mapping[str, DeviceClass],
) -> list[DeviceTake] | str:
    candidates: dict[str, list[Device]] = {}
    for request in claim.requests:
        if request.allocation_mode == "All" and info.node.incomplete_pools:
            pool = info.node.incomplete_pools[0]
            return f"{CLAIMS_UNALLOCATABLE}: resource pool {pool} is currently being updated"
        found = _request_candidates(info, request, classes)
        if isinstance(found, str):
            return found
        if not found:
            return CLAIMS_UNALLOCATABLE
        candidates[request.name] = found
    for restricted in _constraint_variants(claim, candidates):
        attempt = _ClaimScratchAttempt(scratch)
        takes = _take_requests(claim, restricted, attempt.scratch)
        if takes is not None:
            attempt.commit()
            return takes
    return CLAIMS_UNALLOCATABLE


def _constraint_variants(
    claim: DeviceClaim, candidates: dict[str, list[Device]]
) -> list[dict[str, list[Device]]]:
    """Candidate sets with each matchAttribute fixed to one value (values tried sorted)."""
    variants = [candidates]
    for constraint in claim.constraints:
        names = constraint.requests or tuple(candidates)
        next_variants = []
        for variant in variants:
            values = sorted(
                {
                    str(v)
                    for name in names
                    for d in variant.get(name, [])
                    if (v := _lookup(d.attributes, constraint.attribute)) is not None
                }
            )
            for value in values:
                next_variants.append(
                    {
                        name: [
                            d
                            for d in devices
                            if name not in names
                            or str(_lookup(d.attributes, constraint.attribute)) == value
                        ]
                        for name, devices in variant.items()
                    }
                )
        variants = next_variants
    return variants


class _ClaimScratchAttempt:
    """Try one constraint variant on a throwaway copy of the scratch pad."""

    def __init__(self, scratch: _ClaimScratch) -> None:
        self.origin = scratch
        self.scratch = _ClaimScratch(scratch.alloc, scratch.partitionable_devices)
        self.scratch.used = set(scratch.used)
        self.scratch.gpus_used = set(scratch.gpus_used)
        self.scratch.capacity_used = {k: dict(v) for k, v in scratch.capacity_used.items()}
        self.scratch.counters_used = {k: dict(v) for k, v in scratch.counters_used.items()}

    def commit(self) -> None:
        self.origin.used = self.scratch.used
        self.origin.gpus_used = self.scratch.gpus_used
        self.origin.capacity_used = self.scratch.capacity_used
        self.origin.counters_used = self.scratch.counters_used


def _take_requests(
    claim: DeviceClaim, candidates: dict[str, list[Device]], scratch: _ClaimScratch
) -> list[DeviceTake] | None:
    takes: list[DeviceTake] = []
    for request in claim.requests:
        devices = candidates.get(request.name, [])
        if request.admin_access:  # matched, never taken (in-use devices allowed too)
            if request.allocation_mode != "All" and len(devices) < request.count:
                return None
            continue
        if request.allocation_mode == "All":
            if not devices or not all(scratch.can_take(d, request) for d in devices):
                return None
            takes.extend(scratch.take(d, request) for d in devices)
            continue
        chosen = 0
        for device in devices:
            if chosen == request.count:
                break
            if scratch.can_take(device, request):
                takes.append(scratch.take(device, request))
                chosen += 1
        if chosen < request.count:
            return None
    return takes


def bound_allocation(info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> Allocation:
    """What an already-running pod holds: its requests plus the first fitting devices.

    The snapshot does not say which GPU a running pod holds; the first valid
    choice is as good a guess as any and keeps the counts right.
    """
    base = pod_allocation_base(pod)
    takes: list[DeviceTake] = []
    if pod.gpu is not None:
        options = gpu_options(info, alloc, pod.gpu)
        if not isinstance(options, str):
            takes.extend(options[0])
    return Allocation(base.cpu_milli, base.memory_bytes, base.pods, base.extended, tuple(takes))


def with_devices(base: Allocation, takes: Option) -> Allocation:
    return Allocation(base.cpu_milli, base.memory_bytes, base.pods, base.extended, takes)
