"""Devices that DRA claims already hold before anything is placed.

The structured allocator starts from every allocated device of every claim
(k8s.io/dynamic-resource-allocation ``structured/internal/allocatedstate.go``,
fed by the DynamicResources plugin from all ResourceClaims with
``status.allocation``), whether or not a pod using the claim is running yet,
and counts a device once however many pods share the claim (``reservedFor``).
Admin-access results take nothing.

A bound pod's claim with no allocation in the snapshot (the claim object was
not exported, or is a template's copy) is taken on the pod's node with the
first fitting devices, like a running pod's GPUs (``allocate.bound_allocation``):
the snapshot does not say which, the count is right.

A claim several pending pods name is allocated once, by the first of them placed
(the DynamicResources plugin writes ``status.allocation`` in PreBind, and the next pod
reads it from the assume cache, ``pkg/scheduler/framework/plugins/dynamicresources``):
the others take no device and fit only on that node (``claims_taken``).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from topology.model.hardware import (
    AllocatedDevice,
    ClaimAllocation,
    DeviceClaim,
    DeviceClass,
    Pod,
)

from .allocate import claim_takes
from .records import Allocation, DeviceTake, NodeAlloc, NodeInfo


def held_by_claims(
    infos: Mapping[str, NodeInfo], claims: Iterable[DeviceClaim]
) -> list[tuple[str, str, Allocation]]:
    """(node, holder key, allocation) of each allocated claim's devices, per node.

    The holder is the first pod the claim is reserved for ("ns/pod"), else the
    claim itself ("ResourceClaim ns/name"): what the heatmap names."""
    where = _device_index(infos)
    out = []
    for claim in claims:
        assert claim.allocation is not None
        per_node: dict[str, list[DeviceTake]] = {}
        for result in claim.allocation.devices:
            found = where.get((result.driver, result.pool, result.device))
            if found is None or result.admin_access:
                continue  # a device no slice of the snapshot offers; admin access takes none
            node_name, device = found
            per_node.setdefault(node_name, []).append(_take(infos[node_name], device, result))
        namespace = claim.key.partition("/")[0]
        reserved = claim.allocation.reserved_for
        holder = f"{namespace}/{reserved[0]}" if reserved else f"ResourceClaim {claim.key}"
        for node_name, takes in per_node.items():
            out.append((node_name, holder, Allocation(pods=0, devices=tuple(takes))))
    return out


def _device_index(infos: Mapping[str, NodeInfo]) -> dict[tuple[str, str, str], tuple[str, str]]:
    index = {}
    for name, info in infos.items():
        for device in info.node.devices:
            index[(device.driver, device.pool, device.name)] = (name, device.name)
    return index


def _take(info: NodeInfo, device_name: str, result: AllocatedDevice) -> DeviceTake:
    device = info.devices[device_name]
    if device.shareable and result.consumed_capacity:
        return DeviceTake(device_name, dict(result.consumed_capacity), False)
    return DeviceTake(device_name, {}, True)


def unallocated_claim_takes(
    info: NodeInfo,
    alloc: NodeAlloc,
    pod: Pod,
    classes: Mapping[str, DeviceClass],
    counted: set[str],
) -> tuple[DeviceTake, ...]:
    """First fitting devices on the pod's node for its claims not allocated in the
    snapshot and not counted yet (``counted``: claim keys already taken; updated)."""
    claims = tuple(
        c for c in pod.claims if c.allocation is None and (not c.key or c.key not in counted)
    )
    if not claims:
        return ()
    counted.update(c.key for c in claims if c.key)
    found = claim_takes(info, alloc, replace(pod, claims=claims), classes)
    return () if isinstance(found, str) else found


def claims_taken(claims: Mapping[str, tuple[str, str]], pods: tuple[Pod, ...]) -> tuple[Pod, ...]:
    """``pods`` with each claim a pod placed earlier allocated (``ClusterState.claims``:
    claim key -> (node, pod)) read as allocated on that node, holding no new device."""
    if not claims or not any(_taken(claims, c) for p in pods for c in p.claims):
        return pods
    return tuple(
        replace(
            pod,
            claims=tuple(
                replace(c, allocation=ClaimAllocation((), node_names=(claims[c.key][0],)))
                if _taken(claims, c)
                else c
                for c in pod.claims
            ),
        )
        for pod in pods
    )


def _taken(claims: Mapping[str, tuple[str, str]], claim: DeviceClaim) -> bool:
    return claim.allocation is None and bool(claim.key) and claim.key in claims
