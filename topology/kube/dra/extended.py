"""Extended resources backed by DRA (KEP-5004, ``DRAExtendedResource``): a pod's
``resources`` entry that a DeviceClass maps is served by devices of that class.

Pure: no Django, no I/O. ``topology.kube.parse`` passes every pod through
``with_extended_claim`` at assembly.

A DeviceClass maps an extended resource by ``spec.extendedResourceName``, and every
class ``C`` maps the implicit name ``deviceclass.resource.kubernetes.io/C``. Where a
node advertises the resource in its allocatable (a device plugin), NodeResourcesFit
counts it; elsewhere the DynamicResources plugin allocates the class's devices to a
claim the scheduler makes for the pod (``<pod>-extended-resources-…``, named in
``status.extendedResourceClaimStatus``; ``pkg/scheduler/framework/plugins/
dynamicresources/extended.go``). Here: when no node of the snapshot advertises the
resource, the pod gets that claim (one request of its count per resource), or the
claim the scheduler made when the snapshot has it; when some node advertises it, it
stays a counted resource, and nodes without it serving it by DRA is said on the pod.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from topology.kube.fields import ObjectContext, object_label
from topology.model.hardware import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    Node,
    Pod,
    UnsupportedField,
)

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
MIXED_REASON = (
    "{} is advertised by some nodes and mapped to DeviceClass {} (KEP-5004): counted as "
    "a device-plugin resource only; nodes serving it through DRA are not modelled"
)


def mapped_names(classes: Iterable[DeviceClass]) -> dict[str, str]:
    """Extended resource name → the DeviceClass that serves it."""
    found = {}
    for device_class in classes:
        found[f"{IMPLICIT_PREFIX}{device_class.name}"] = device_class.name
        if device_class.extended_resource_name:
            found[device_class.extended_resource_name] = device_class.name
    return found


def advertised(nodes: Iterable[Node]) -> set[str]:
    return {name for node in nodes for name in node.allocatable.extended}


def claim_status(ctx: ObjectContext, status: dict[str, Any]) -> str:
    """``status.extendedResourceClaimStatus.resourceClaimName`` ("" if none yet)."""
    field = "status.extendedResourceClaimStatus"
    found = ctx.mapping(status.get(field.partition(".")[2]), field)
    return ctx.text(found.get("resourceClaimName"), f"{field}.resourceClaimName")


def with_extended_claim(
    pod: Pod,
    mapping: dict[str, str],
    offered: set[str],
    made: DeviceClaim | None,
) -> tuple[Pod, list[UnsupportedField]]:
    """The pod with its DRA-served extended resources turned into a claim."""
    asked = {k: v for k, v in pod.requests.extended.items() if k in mapping}
    if not asked:
        return pod, []
    label = object_label("Pod", pod.namespace, pod.name)
    said = [
        UnsupportedField(
            label, "spec.containers[].resources", MIXED_REASON.format(k, mapping[k]), blocking=False
        )
        for k in sorted(asked)
        if k in offered
    ]
    served = {k: v for k, v in asked.items() if k not in offered}
    if not served:
        return pod, said
    claim = made or DeviceClaim(
        f"{pod.name}-extended-resources",
        tuple(
            DeviceRequest(f"container-request-{i}", mapping[k], count=v)
            for i, (k, v) in enumerate(sorted(served.items()))
        ),
    )
    extended = {k: v for k, v in pod.requests.extended.items() if k not in served}
    requests = replace(pod.requests, extended=extended)
    return replace(pod, requests=requests, claims=(*pod.claims, claim)), said
