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

from collections.abc import Callable
from datetime import UTC
from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.autoscalerstate import (
    AutoscalerEvent,
    ProvisioningRequest,
    RequestCondition,
    RequestPodSet,
)
from topology.model.hardware import Pod

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


def pod_template(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A core/v1 PodTemplate: kept for the ProvisioningRequests naming it
    (``with_templates``)."""
    _, namespace, name = ctx.object.split("/")
    collected.pod_templates[(namespace, name)] = (ctx.source, obj.get("template") or {})


def template_pods(
    collected: Any, parse_pod: Callable[[ObjectContext, dict[str, Any]], Any]
) -> dict[str, Pod]:
    """Each PodTemplate read as the pod cluster-autoscaler builds from it for a request
    (``provisioningrequest/pods/pods.go`` ``PodsForProvisioningRequest``: the template's
    metadata and spec in its namespace, phase Pending); one that is no valid pod is left
    out (the request's consuming pods stand for it then)."""
    pods = {}
    for (namespace, name), (source, template) in sorted(collected.pod_templates.items()):
        ctx = ObjectContext(source, f"PodTemplate/{namespace}/{name}")
        record = parse_pod(ctx, _template_pod(namespace, name, template))
        if record is not None:
            pods[f"{namespace}/{name}"] = record.pod
    return pods


def _template_pod(namespace: str, name: str, template: dict[str, Any]) -> dict[str, Any]:
    raw = template.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(meta.get("labels") or {}),
            "annotations": dict(meta.get("annotations") or {}),
        },
        "spec": template.get("spec") or {},
        "status": {"phase": "Pending"},
    }


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
