"""Gang kinds: coscheduling ``PodGroup`` (scheduling.x-k8s.io) and KEP-4671
``PodGroup`` / ``Workload`` (scheduling.k8s.io) → ``Gang``, and the gangs the pods
reference, assembled with their minimum member count and topology constraint.

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches the kinds here (handlers take
its first-pass collection). Pods join a gang by the coscheduling or Kueue label or
``spec.schedulingGroup`` (``topology.kube.core.pods``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from topology.kube.fields import ObjectContext, namespace_name
from topology.model.hardware import Gang, Pod

COSCHEDULING_GROUP = "scheduling.x-k8s.io"
GANG_GROUP = "scheduling.k8s.io"  # KEP-4671 Workload / PodGroup


def coscheduling_pod_group(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    namespace, name = namespace_name(ctx)
    min_member = ctx.integer(spec.get("minMember"), "spec.minMember", default=1, minimum=1)
    collected.pod_groups[(namespace, name)] = Gang(namespace, name, min_member)


def kep_pod_group(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """scheduling.k8s.io PodGroup (KEP-4671): gang minCount, or its Workload template's."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    namespace, name = namespace_name(ctx)
    policy = ctx.mapping(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    gang = ctx.mapping(policy.get("gang"), "spec.schedulingPolicy.gang")
    ref = ctx.mapping(
        ctx.mapping(spec.get("podGroupTemplateRef"), "spec.podGroupTemplateRef").get("workload"),
        "spec.podGroupTemplateRef.workload",
    )
    if ref:
        collected.group_templates[(namespace, name)] = (
            ctx.text(ref.get("workloadName"), "spec.podGroupTemplateRef.workload.workloadName"),
            ctx.text(
                ref.get("podGroupTemplateName"),
                "spec.podGroupTemplateRef.workload.podGroupTemplateName",
            ),
        )
    min_count = ctx.integer(gang.get("minCount"), "spec.schedulingPolicy.gang.minCount", default=0)
    if min_count < 0:
        ctx.fail("spec.schedulingPolicy.gang.minCount", "must be >= 0")
    collected.pod_groups[(namespace, name)] = Gang(namespace, name, min_count)


def kep_workload(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    namespace, name = namespace_name(ctx)
    templates = spec.get("podGroupTemplates", spec.get("podGroups"))
    for path, template in ctx.items(templates, "spec.podGroupTemplates"):
        template_name = ctx.text(template.get("name"), f"{path}.name", required=True)
        policy = ctx.mapping(
            template.get("schedulingPolicy", template.get("policy")), f"{path}.schedulingPolicy"
        )
        gang = ctx.mapping(policy.get("gang"), f"{path}.schedulingPolicy.gang")
        if gang:
            collected.workload_min[(namespace, name, template_name)] = ctx.integer(
                gang.get("minCount"), f"{path}.schedulingPolicy.gang.minCount", default=1, minimum=1
            )


def gangs(collected: Any, pods: tuple[Pod, ...]) -> tuple[Gang, ...]:
    """Gangs referenced by pods or declared; pod annotations give the topology constraint."""
    members: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.gang:
            members.setdefault(pod.gang, []).append(pod)
    totals = {r.pod.gang: r.group_total for r in collected.pods if r.group_total}
    found = {}
    for (namespace, name), gang in collected.pod_groups.items():
        found[gang.key] = _resolved_min(collected, gang, namespace, name)
    for key, group_pods in members.items():
        namespace, _, name = key.partition("/")
        gang = found.get(key) or Gang(namespace, name, totals.get(key) or len(group_pods))
        first = group_pods[0]
        found[key] = replace(
            gang,
            required_topology=gang.required_topology or first.required_topology,
            preferred_topology=gang.preferred_topology or first.preferred_topology,
            priority=max(p.priority for p in group_pods),
        )
    return tuple(found[key] for key in sorted(found))


def _resolved_min(collected: Any, gang: Gang, namespace: str, name: str) -> Gang:
    if gang.min_member:
        return gang
    workload, template = collected.group_templates.get((namespace, name), ("", ""))
    return replace(gang, min_member=collected.workload_min.get((namespace, workload, template), 1))
