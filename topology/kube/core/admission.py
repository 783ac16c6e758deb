"""What the API server's admission adds to a pod before any scheduler sees it.

Pure: no Django, no I/O. ``topology.kube.parse`` reads PriorityClass objects here and
passes every pod through ``admitted`` at assembly: pods built from controller
templates (``topology.kube.workloads``) and hand-written manifests lack what
admission adds; exported pods already carry it (adding it again changes nothing).

- Priority (``plugin/pkg/admission/priority/admission.go``): a pod without
  ``spec.priority`` gets its ``priorityClassName``'s value, or, without a name,
  the global default class's (the lowest value if several are marked
  ``globalDefault``), else 0; the class's ``preemptionPolicy`` too when the pod
  sets none. The built-in ``system-node-critical`` (2000001000) and
  ``system-cluster-critical`` (2000000000) always exist. A name no class has is
  refused by the API server: blocked, said on the pod. When the snapshot has no
  PriorityClass at all the value cannot be known: priority 0, said on the pod.
- ExtendedResourceToleration (``plugin/pkg/admission/extendedresourcetoleration/
  admission.go``): every extended resource the containers or init containers
  request gets an ``Exists`` / ``NoSchedule`` toleration of that key. Off by
  default upstream; GKE turns it on (its GPU nodes are tainted
  ``nvidia.com/gpu=present:NoSchedule``), so it applies where the nodes carry
  GKE's provider labels (``cloud.google.com/gke-nodepool``), or where the caller
  says so. A pod with a ``status`` was served by the API server and went through
  admission already: its tolerations are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from topology.kube.core.podrequests import is_native
from topology.kube.fields import ObjectContext, object_label
from topology.model.hardware import GPU_RESOURCE, Node, Pod, Toleration, UnsupportedField

SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
GKE_LABEL_PREFIX = "cloud.google.com/gke-"
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = ""


@dataclass(frozen=True, slots=True)
class PodAdmission:
    """What a pod's spec said that admission fills in (``topology.kube.core.pods``)."""

    priority_class: str = ""
    priority_given: bool = False
    preemption_given: bool = False
    served: bool = False  # it has a status: the API server served it, admission ran


def parse_priority_class(ctx: ObjectContext, obj: dict[str, Any]) -> PriorityClass:
    policy = ctx.text(obj.get("preemptionPolicy"), "preemptionPolicy")
    if policy and policy not in PREEMPTION_POLICIES:
        ctx.fail("preemptionPolicy", f"must be one of {', '.join(PREEMPTION_POLICIES)}")
    return PriorityClass(
        name=ctx.object.partition("/")[2],
        value=ctx.integer(obj.get("value"), "value"),
        global_default=ctx.boolean(obj.get("globalDefault"), "globalDefault"),
        preemption_policy=policy,
    )


def pod_admission(ctx: ObjectContext, spec: dict[str, Any], *, served: bool) -> PodAdmission:
    return PodAdmission(
        priority_class=ctx.text(spec.get("priorityClassName"), "spec.priorityClassName"),
        priority_given=spec.get("priority") is not None,
        preemption_given=spec.get("preemptionPolicy") is not None,
        served=served,
    )


def is_gke(nodes: list[Node]) -> bool:
    """GKE's provider labels on any node: its ExtendedResourceToleration is on."""
    return any(k.startswith(GKE_LABEL_PREFIX) for n in nodes for k in n.labels)


def admitted(
    pod: Pod,
    spec: PodAdmission,
    classes: dict[str, PriorityClass],
    *,
    extended_toleration: bool,
) -> tuple[Pod, list[UnsupportedField]]:
    """The pod as admission leaves it, and what is said about it."""
    said: list[UnsupportedField] = []
    if not spec.priority_given:
        pod, said = _with_priority(pod, spec, classes)
    if extended_toleration and (not spec.served or pod.synthesized_by):
        pod = _with_extended_tolerations(pod)
    return pod, said


def _with_priority(
    pod: Pod, spec: PodAdmission, classes: dict[str, PriorityClass]
) -> tuple[Pod, list[UnsupportedField]]:
    label = object_label("Pod", pod.namespace, pod.name)
    field = "spec.priorityClassName"
    if spec.priority_class in SYSTEM_CLASSES:
        return replace(pod, priority=SYSTEM_CLASSES[spec.priority_class]), []
    if not classes:
        if not spec.priority_class:
            return pod, []
        reason = f"PriorityClass {spec.priority_class} not read: priority taken as 0"
        return pod, [UnsupportedField(label, field, reason, blocking=False)]
    found = classes.get(spec.priority_class) if spec.priority_class else _default(classes)
    if found is None and spec.priority_class:
        name = spec.priority_class
        reason = f"no PriorityClass with name {name} was found: admission refuses the pod"
        blocked = replace(pod, unsupported=(*pod.unsupported, reason))
        return blocked, [UnsupportedField(label, field, reason)]
    if found is None:
        return pod, []
    policy = pod.preemption_policy
    if not spec.preemption_given and found.preemption_policy:
        policy = found.preemption_policy
    return replace(pod, priority=found.value, preemption_policy=policy), []


def _default(classes: dict[str, PriorityClass]) -> PriorityClass | None:
    """``getDefaultPriorityClass``: the global default of lowest value, if any."""
    defaults = [c for c in classes.values() if c.global_default]
    return min(defaults, key=lambda c: (c.value, c.name)) if defaults else None


def _with_extended_tolerations(pod: Pod) -> Pod:
    names = [k for k in pod.requests.extended if not is_native(k)]
    if pod.gpu is not None:
        names.append(GPU_RESOURCE)
    wanted = [Toleration(key=k, operator="Exists", effect="NoSchedule") for k in sorted(names)]
    missing = tuple(t for t in wanted if t not in pod.tolerations)
    return replace(pod, tolerations=(*pod.tolerations, *missing)) if missing else pod
