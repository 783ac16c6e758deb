"""A ResourceClaim's ``status``: which devices it holds and for whom.

Pure: no Django, no I/O. Read by ``topology.kube.dra.claims`` for every ResourceClaim.

- ``status.allocation.devices.results[]`` (``resource.k8s.io/v1``
  ``DeviceRequestAllocationResult``): ``<driver>/<pool>/<device>`` given to a
  request; ``adminAccess: true`` results take nothing (the structured allocator,
  ``structured/internal/allocatedstate.go``, leaves admin-access allocations out of
  the allocated devices). ``consumedCapacity`` (consumable devices) is what a
  shared device gives the claim.
- ``status.allocation.nodeSelector``: where the devices can be used. The
  allocator writes ``matchFields`` ``metadata.name In [node]`` for node-local
  devices (``allocator_stable.go`` ``createNodeSelector``); label terms for
  devices reachable from several nodes. The DynamicResources plugin refuses a
  node it does not match ("resourceclaim not available on the node",
  ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`` Filter).
- ``status.reservedFor[]``: the pods using it (a claim shared by several pods is
  allocated, and counted, once).
"""

from __future__ import annotations

from typing import Any

from topology.kube.fields import ObjectContext, node_requirement
from topology.model.hardware import AllocatedDevice, ClaimAllocation, NodeSelectorTerm
from topology.model.quantity import memory_bytes

NODE_NAME_FIELD = "metadata.name"


def claim_allocation(ctx: ObjectContext, status: dict[str, Any]) -> ClaimAllocation | None:
    """The claim's allocation, or None while it is not allocated."""
    allocation = ctx.mapping(status.get("allocation"), "status.allocation")
    if not allocation:
        return None
    base = "status.allocation.devices.results"
    devices = ctx.mapping(allocation.get("devices"), "status.allocation.devices")
    results = tuple(
        _result(ctx, path, raw) for path, raw in ctx.items(devices.get("results"), base)
    )
    names, terms = _node_selector(ctx, allocation.get("nodeSelector"))
    return ClaimAllocation(results, names, terms, _reserved_for(ctx, status))


def _result(ctx: ObjectContext, path: str, raw: dict[str, Any]) -> AllocatedDevice:
    consumed = ctx.mapping(raw.get("consumedCapacity"), f"{path}.consumedCapacity")
    driver = ctx.text(raw.get("driver"), f"{path}.driver", required=True)
    return AllocatedDevice(
        request=ctx.text(raw.get("request"), f"{path}.request", required=True),
        driver=driver,
        pool=ctx.text(raw.get("pool"), f"{path}.pool", required=True),
        device=ctx.text(raw.get("device"), f"{path}.device", required=True),
        admin_access=ctx.boolean(raw.get("adminAccess"), f"{path}.adminAccess"),
        consumed_capacity={
            str(k): memory_bytes(ctx.quantity(v, f"{path}.consumedCapacity.{k}"))
            for k, v in consumed.items()
        },
    )


def _node_selector(
    ctx: ObjectContext, raw: Any
) -> tuple[tuple[str, ...], tuple[NodeSelectorTerm, ...]]:
    """``matchFields`` ``metadata.name In`` names, and label terms (ORed)."""
    base = "status.allocation.nodeSelector"
    selector = ctx.mapping(raw, base)
    names: list[str] = []
    terms: list[NodeSelectorTerm] = []
    for path, term in ctx.items(selector.get("nodeSelectorTerms"), f"{base}.nodeSelectorTerms"):
        for field_path, req in ctx.items(term.get("matchFields"), f"{path}.matchFields"):
            key = ctx.text(req.get("key"), f"{field_path}.key", required=True)
            operator = ctx.text(req.get("operator"), f"{field_path}.operator", required=True)
            if key != NODE_NAME_FIELD or operator != "In":
                ctx.fail(
                    field_path, f"only {NODE_NAME_FIELD} In is a node field, got {key} {operator}"
                )
            values = ctx.sequence(req.get("values"), f"{field_path}.values")
            names += [ctx.text(v, f"{field_path}.values") for v in values]
        expressions = ctx.items(term.get("matchExpressions"), f"{path}.matchExpressions")
        if expressions:
            terms.append(
                NodeSelectorTerm(tuple(node_requirement(ctx, p, r) for p, r in expressions))
            )
    return tuple(dict.fromkeys(names)), tuple(terms)


def _reserved_for(ctx: ObjectContext, status: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for path, ref in ctx.items(status.get("reservedFor"), "status.reservedFor"):
        if ctx.text(ref.get("resource"), f"{path}.resource") == "pods":
            found.append(ctx.text(ref.get("name"), f"{path}.name", required=True))
    return tuple(found)
