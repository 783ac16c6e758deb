"""autoscaling.x-k8s.io ProvisioningRequests (v1, and v1beta1 where still served: the
same fields) → ``topology.model.hardware.ProvisioningRequest``, each condition also an
autoscaler event.

kubernetes/autoscaler ``cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/
v1/types.go``: ``spec.provisioningClassName`` (required), ``spec.podSets`` (1 to 32,
``podTemplateRef.name`` and ``count`` >= 1), ``spec.parameters`` (string values),
``status.conditions`` (``metav1.Condition``). What a request means to the plans is
``topology.model.autoscalerstate`` (its state) and ``recommender.engine.evaluate.requests``
(the workload it serves).

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches the kind here.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.autoscalerstate import (
    AutoscalerEvent,
    ProvisioningRequest,
    RequestCondition,
    RequestPodSet,
)

GROUP = "autoscaling.x-k8s.io"
SOURCE = "ProvisioningRequest"


def provisioning_request(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    pod_sets = tuple(
        RequestPodSet(
            template=ctx.text(
                ctx.mapping(item.get("podTemplateRef"), f"{path}.podTemplateRef").get("name"),
                f"{path}.podTemplateRef.name",
                required=True,
            ),
            count=ctx.integer(item.get("count"), f"{path}.count", minimum=1),
        )
        for path, item in ctx.items(spec.get("podSets"), "spec.podSets")
    )
    if not pod_sets:
        ctx.fail("spec.podSets", "required: at least one pod set")
    conditions = tuple(
        _condition(ctx, path, item)
        for path, item in ctx.items(status.get("conditions"), "status.conditions")
    )
    request = ProvisioningRequest(
        namespace=ctx.object.split("/")[1],
        name=ctx.object.split("/")[2],
        class_name=ctx.text(
            spec.get("provisioningClassName"), "spec.provisioningClassName", required=True
        ),
        pod_sets=pod_sets,
        parameters=ctx.labels(spec.get("parameters"), "spec.parameters"),
        conditions=conditions,
        created=rfc3339(ctx, meta.get("creationTimestamp"), "metadata.creationTimestamp"),
    )
    collected.provisioning_requests.append(request)
    collected.autoscaler_events.extend(
        AutoscalerEvent(
            source=SOURCE,
            object=ctx.object,
            reason=f"{c.type}={c.status}" + (f" {c.reason}" if c.reason else ""),
            message=c.message,
            time=c.last_transition,
        )
        for c in conditions
    )


def _condition(ctx: ObjectContext, path: str, item: dict[str, Any]) -> RequestCondition:
    status = ctx.text(item.get("status"), f"{path}.status", required=True)
    if status not in ("True", "False", "Unknown"):
        ctx.fail(f"{path}.status", f"must be True, False or Unknown, got {status!r}")
    return RequestCondition(
        type=ctx.text(item.get("type"), f"{path}.type", required=True),
        status=status,
        reason=ctx.text(item.get("reason"), f"{path}.reason"),
        message=ctx.text(item.get("message"), f"{path}.message"),
        last_transition=rfc3339(ctx, item.get("lastTransitionTime"), f"{path}.lastTransitionTime"),
    )


def rfc3339(ctx: ObjectContext, value: Any, field: str) -> str:
    """A time as ``2026-12-01T00:00:00Z`` (UTC), "" when absent: one spelling whether the
    file's YAML parsed it as a datetime or the API served it as text."""
    moment = ctx.timestamp(value, field)
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def newest_first(events: list[AutoscalerEvent], limit: int) -> tuple[AutoscalerEvent, ...]:
    """The ``limit`` newest events (no time: after every timed one), ties by object."""
    ordered = sorted(events, key=lambda e: (e.time or "", e.object, e.reason), reverse=True)
    return tuple(ordered[:limit])
