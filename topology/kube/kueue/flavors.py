"""Kueue ResourceFlavors: what admission into a flavor adds to a pod set's pods.

Pure: no Django, no I/O. ``topology.kube.parse`` reads ResourceFlavor objects here and
the flavor order of each ClusterQueue (``record_order``, from ``topology.kube.kueue.quotas``),
then passes every pending pod of a Kueue ClusterQueue through ``assign``.

Kueue (``pkg/scheduler/flavorassigner/flavorassigner.go``) gives each pod set one
flavor per resource group: the first flavor of the group, in the ClusterQueue's
order, whose ``nodeTaints`` the pods tolerate (NoSchedule / NoExecute, with the
flavor's own ``tolerations`` added) and whose ``nodeLabels`` the pods' nodeSelector
and required node affinity accept (only the keys the flavor labels are compared).
On admission the job's pods get the flavor's ``nodeLabels`` in their nodeSelector
and its ``tolerations`` (``pkg/podset/podset.go`` ``Merge``). Pods built from one
template make the same choice, so a pod set gets one flavor.

Quota: where the ClusterQueue's one resource group offers several flavors, a pod
set draws on its own flavor's nominalQuota (``Pod.quota_flavor``; running pods' flavor
is the first whose nodeLabels their node carries), borrowing that flavor's unused
quota in the cohort (``topology.kube.kueue.quotas``), and Kueue moves on to the next
flavor the pod set fits when that one's quota is used (``flavorFungibility``,
``Pod.flavor_options``); otherwise the quotas are summed over the flavors. Not
modelled, and said on the pod (not blocking): per-flavor quota and flavorFungibility
under several resource groups; a ClusterQueue's flavors missing from the snapshot
(nothing applied). No flavor fitting: the workload waits in Kueue ("couldn't assign
flavors"), never runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from topology.kube.core.nodes import node_taints, pod_tolerations
from topology.kube.fields import ObjectContext, object_label
from topology.model.hardware import FlavorOption, Pod, Taint, Toleration, UnsupportedField

FILTER_EFFECTS = ("NoSchedule", "NoExecute")
SUMMED_REASON = (
    "Kueue flavor {}: quota checked against the ClusterQueue's quotas summed over its "
    "flavors, and a later flavor when this one's quota is used (flavorFungibility) is "
    "not modelled"
)


@dataclass(frozen=True, slots=True)
class Flavor:
    name: str
    node_labels: dict[str, str]
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True, slots=True)
class FlavorGroup:
    """One resource group of a ClusterQueue: its resources and flavors in order."""

    resources: frozenset[str]
    flavors: tuple[str, ...]


def parse_flavor(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    name = ctx.object.rpartition("/")[2]
    collected.flavors[name] = Flavor(
        name=name,
        node_labels=ctx.labels(spec.get("nodeLabels"), "spec.nodeLabels"),
        node_taints=node_taints(ctx, spec.get("nodeTaints"), "spec.nodeTaints"),
        tolerations=_tolerations(ctx, spec.get("tolerations")),
    )


def _tolerations(ctx: ObjectContext, raw: Any) -> tuple[Toleration, ...]:
    return pod_tolerations(ctx, raw)


def record_order(collected: Any, ctx: ObjectContext, name: str, spec: dict[str, Any]) -> None:
    """The flavor order of each resource group of ClusterQueue ``name``."""
    groups = []
    for group_path, group in ctx.items(spec.get("resourceGroups"), "spec.resourceGroups"):
        covered = ctx.sequence(group.get("coveredResources"), f"{group_path}.coveredResources")
        flavors = [
            ctx.text(f.get("name"), f"{path}.name", required=True)
            for path, f in ctx.items(group.get("flavors"), f"{group_path}.flavors")
        ]
        groups.append(FlavorGroup(frozenset(str(r) for r in covered), tuple(flavors)))
    collected.queue_flavors[f"ClusterQueue/{name}"] = tuple(groups)


def assign(
    pod: Pod, groups: tuple[FlavorGroup, ...], flavors: dict[str, Flavor]
) -> tuple[Pod, list[UnsupportedField]]:
    """The pod as its flavors' admission leaves it, and what is said of it."""
    label = object_label("Pod", pod.namespace, pod.name)
    chosen: list[Flavor] = []
    unread: list[UnsupportedField] = []
    for group in groups:
        if not group.resources & _resources(pod):
            continue
        candidates = [flavors[name] for name in group.flavors if name in flavors]
        if not candidates:  # the export lacks them: nothing to apply, said
            names = ", ".join(group.flavors)
            reason = f"ResourceFlavor {names} not read: its nodeLabels and tolerations not applied"
            unread.append(UnsupportedField(label, "kueue flavor", reason, blocking=False))
            continue
        found = next((f for f in candidates if _fits(pod, f) is None), None)
        if found is None:
            why = "; ".join(filter(None, (_fits(pod, f) for f in candidates))) or "no flavor"
            reason = f"waiting in Kueue: couldn't assign flavors to the pod set: {why}"
            return replace(pod, not_ours=pod.not_ours or reason), []
        chosen.append(found)
    if not chosen:
        return pod, unread
    selector, tolerations = _merged(pod, chosen)
    own_quota = quota_flavor(groups, chosen[0].name) if len(chosen) == 1 else None
    said = unread + [
        UnsupportedField(label, "kueue flavor", SUMMED_REASON.format(f.name), blocking=False)
        for f in chosen
        if own_quota is None
    ]
    options: tuple[FlavorOption, ...] = ()
    if own_quota is not None:  # one resource group: Kueue may take a later flavor
        fitting = [f for f in _candidates(groups[0], flavors) if _fits(pod, f) is None]
        options = tuple(FlavorOption(f.name, *_merged(pod, [f])) for f in fitting)
    admitted = replace(
        pod,
        node_selector=selector,
        tolerations=tolerations,
        quota_flavor=own_quota,
        flavor_options=options if len(options) > 1 else (),
    )
    return admitted, said


def _candidates(group: FlavorGroup, flavors: dict[str, Flavor]) -> list[Flavor]:
    return [flavors[name] for name in group.flavors if name in flavors]


def _merged(pod: Pod, chosen: list[Flavor]) -> tuple[dict[str, str], tuple[Toleration, ...]]:
    """The pod's nodeSelector and tolerations once admitted on ``chosen`` (podset.Merge)."""
    selector = dict(pod.node_selector)
    tolerations = list(pod.tolerations)
    for flavor in chosen:
        selector.update(flavor.node_labels)
        tolerations += [t for t in flavor.tolerations if t not in tolerations]
    return selector, tuple(tolerations)


def quota_flavor(groups: tuple[FlavorGroup, ...], name: str) -> str | None:
    """The flavor whose own quota the pod set draws on: set where the ClusterQueue's
    one resource group offers several flavors (else its summed quota is that flavor's)."""
    if len(groups) == 1 and len(groups[0].flavors) > 1:
        return name
    return None


def bound_flavor(
    groups: tuple[FlavorGroup, ...], flavors: dict[str, Flavor], node_labels: dict[str, str]
) -> str | None:
    """A running pod's flavor: the first of its ClusterQueue's whose nodeLabels its
    node carries (Kueue recorded it at admission; the snapshot has the node)."""
    if len(groups) != 1 or len(groups[0].flavors) < 2:
        return None
    for name in groups[0].flavors:
        flavor = flavors.get(name)
        if flavor and all(node_labels.get(k) == v for k, v in flavor.node_labels.items()):
            return name
    return None


def _resources(pod: Pod) -> set[str]:
    found = {"cpu", "memory", *pod.requests.extended}
    if pod.gpu is not None:
        found.add("nvidia.com/gpu")
    return found


def _fits(pod: Pod, flavor: Flavor) -> str | None:
    """None if the pod set may take the flavor, else Kueue's reason."""
    tolerations = (*pod.tolerations, *flavor.tolerations)
    for taint in flavor.node_taints:
        if taint.effect in FILTER_EFFECTS and not any(t.tolerates(taint) for t in tolerations):
            return f"untolerated taint {{{taint.key}: {taint.value}}} in flavor {flavor.name}"
    labels = flavor.node_labels
    for key, value in pod.node_selector.items():
        if key in labels and labels[key] != value:
            return f"flavor {flavor.name} doesn't match node affinity"
    if pod.affinity and not any(_term_accepts(term, labels) for term in pod.affinity):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None


def _term_accepts(term: Any, labels: dict[str, str]) -> bool:
    return all(r.matches(labels) for r in term.requirements if r.key in labels)
