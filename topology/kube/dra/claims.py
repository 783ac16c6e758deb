"""DRA claims and classes: ResourceClaim, ResourceClaimTemplate, DeviceClass →
``DeviceClaim`` / ``DeviceClass``, and each pod's claims resolved against them.

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches the three kinds here (handlers
take its first-pass collection); ResourceSlices are ``topology.kube.dra.slices``'s. CEL selectors
beyond the compiled subset (``topology.kube.dra.cel``) and ``distinctAttribute`` become
unsupported reasons on the pods using them; ``firstAvailable`` is read as the
request's subrequests (``DeviceRequest.first_available``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from topology.kube.dra import status as dra_status
from topology.kube.dra.cel import CelUnsupported, compile_selector
from topology.kube.fields import ObjectContext, namespace_name
from topology.model.hardware import (
    AttributeSelector,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    MatchAttribute,
    Node,
)
from topology.model.quantity import memory_bytes


def resource_claim(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    if "spec" in spec and "devices" not in spec:
        ctx.fail("spec.spec", "a ResourceClaim has spec.devices; spec.spec belongs to a template")
    namespace, name = namespace_name(ctx)
    claim, reasons = _device_claim(ctx, name, spec, "spec")
    status = ctx.mapping(obj.get("status"), "status")
    allocation = dra_status.claim_allocation(ctx, status)
    claim = replace(claim, key=f"{namespace}/{name}", allocation=allocation)
    collected.claims[(namespace, name)] = (claim, reasons)


def resource_claim_template(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    outer = ctx.mapping(obj.get("spec"), "spec")
    spec = ctx.mapping(outer.get("spec"), "spec.spec")
    namespace, name = namespace_name(ctx)
    collected.templates[(namespace, name)] = _device_claim(ctx, name, spec, "spec.spec")


def device_class(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    name = ctx.object.partition("/")[2]
    selectors, reasons = selector_list(ctx, spec.get("selectors"), "spec.selectors")
    extended = ctx.text(spec.get("extendedResourceName"), "spec.extendedResourceName") or None
    collected.device_classes[name] = (DeviceClass(name, selectors, extended), tuple(reasons))


def _device_claim(
    ctx: ObjectContext, name: str, spec: dict[str, Any], base: str
) -> tuple[DeviceClaim, tuple[str, ...]]:
    devices = ctx.mapping(spec.get("devices"), f"{base}.devices")
    requests, unsupported = [], []
    for path, raw in ctx.items(devices.get("requests"), f"{base}.devices.requests"):
        request, reasons = _device_request(ctx, path, raw)
        requests.append(request)
        unsupported += reasons
    constraints = []
    for path, raw in ctx.items(devices.get("constraints"), f"{base}.devices.constraints"):
        if raw.get("distinctAttribute"):
            unsupported.append("DRA constraint distinctAttribute not supported")
            continue
        attribute = ctx.text(raw.get("matchAttribute"), f"{path}.matchAttribute", required=True)
        names = ctx.sequence(raw.get("requests"), f"{path}.requests")
        constraints.append(
            MatchAttribute(attribute, tuple(ctx.text(n, f"{path}.requests") for n in names))
        )
    return DeviceClaim(name, tuple(requests), tuple(constraints)), tuple(unsupported)


def _device_request(
    ctx: ObjectContext, path: str, raw: dict[str, Any]
) -> tuple[DeviceRequest, list[str]]:
    """One ``spec.devices.requests[]`` entry: ``exactly`` (v1; inline in v1beta1) or
    ``firstAvailable``, a prioritized list of subrequests (KEP-4816: the structured
    allocator tries them in order, ``allocator_stable.go`` ``allocateOne``)."""
    name = ctx.text(raw.get("name"), f"{path}.name", required=True)
    if raw.get("firstAvailable") is not None:
        subrequests, reasons = [], []
        for sub_path, sub in ctx.items(raw.get("firstAvailable"), f"{path}.firstAvailable"):
            sub_name = ctx.text(sub.get("name"), f"{sub_path}.name", required=True)
            subrequest, sub_reasons = _request_body(ctx, sub_path, sub_name, sub)
            subrequests.append(subrequest)
            reasons += sub_reasons
        if not subrequests:
            ctx.fail(f"{path}.firstAvailable", "must name at least one subrequest")
        return replace(subrequests[0], name=name, first_available=tuple(subrequests)), reasons
    if "exactly" in raw:
        body = ctx.mapping(raw.get("exactly"), f"{path}.exactly")
        return _request_body(ctx, f"{path}.exactly", name, body)
    return _request_body(ctx, path, name, raw)


def _request_body(
    ctx: ObjectContext, base: str, name: str, body: dict[str, Any]
) -> tuple[DeviceRequest, list[str]]:
    """The fields of an exact request, which a subrequest shares (but ``adminAccess``)."""
    mode = ctx.text(body.get("allocationMode"), f"{base}.allocationMode") or "ExactCount"
    if mode not in ("ExactCount", "All"):
        ctx.fail(f"{base}.allocationMode", f"must be ExactCount or All, got {mode!r}")
    selectors, reasons = selector_list(ctx, body.get("selectors"), f"{base}.selectors")
    capacity = ctx.mapping(
        ctx.mapping(body.get("capacity"), f"{base}.capacity").get("requests"),
        f"{base}.capacity.requests",
    )
    request = DeviceRequest(
        name=name,
        device_class=ctx.text(
            body.get("deviceClassName"), f"{base}.deviceClassName", required=True
        ),
        count=ctx.integer(body.get("count"), f"{base}.count", default=1, minimum=1),
        allocation_mode=mode,
        selectors=selectors,
        capacity_requests={
            str(k): memory_bytes(ctx.quantity(v, f"{base}.capacity.requests.{k}"))
            for k, v in capacity.items()
        },
        admin_access=ctx.boolean(body.get("adminAccess"), f"{base}.adminAccess"),
    )
    return request, reasons


def selector_list(ctx: ObjectContext, raw: Any, field_name: str):  # type: ignore[no-untyped-def]
    """CEL selectors compiled to AttributeSelectors, plus reasons for those beyond the subset."""
    selectors: list[AttributeSelector] = []
    reasons: list[str] = []
    for path, item in ctx.items(raw, field_name):
        cel = ctx.mapping(item.get("cel"), f"{path}.cel")
        expression = ctx.text(cel.get("expression"), f"{path}.cel.expression", required=True)
        try:
            selectors += compile_selector(expression)
        except CelUnsupported as error:
            reasons.append(str(error))
    return tuple(selectors), reasons


def allocated_claims(collected: Any) -> tuple[DeviceClaim, ...]:
    """Every ResourceClaim holding devices (``status.allocation``), by namespace/name."""
    return tuple(
        claim for _, (claim, _) in sorted(collected.claims.items()) if claim.allocation is not None
    )


def unknown_allocated_devices(collected: Any, nodes: Iterable[Node]) -> list[str]:
    """One note per allocated device no ResourceSlice of the snapshot offers: its
    claim's hold on it cannot be counted (it is not guessed elsewhere)."""
    offered = {(d.driver, d.pool, d.name) for n in nodes for d in n.devices}
    notes = []
    for claim in allocated_claims(collected):
        assert claim.allocation is not None
        for r in claim.allocation.devices:
            if not r.admin_access and (r.driver, r.pool, r.device) not in offered:
                notes.append(
                    f"ResourceClaim/{claim.key}: allocated device {r.driver}/{r.pool}/{r.device} "
                    "is in no ResourceSlice read: its use is not counted"
                )
    return notes
