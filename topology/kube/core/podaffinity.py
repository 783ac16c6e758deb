"""Pod spec → inter-pod constraints: podAffinity, podAntiAffinity, topologySpreadConstraints.

Pure: no Django, no I/O. Parsed as kube-scheduler reads them:

- required (anti-)affinity terms (``interpodaffinity``'s ``AffinityTerm``): the
  namespaces default to the pod's own when neither ``namespaces`` nor
  ``namespaceSelector`` is given; a nil ``labelSelector`` matches no pod;
  ``matchLabelKeys`` / ``mismatchLabelKeys`` merge into the selector as the API
  server does (``key in (value)`` / ``key notin (value)`` for keys the pod has);
- DoNotSchedule spread constraints (``podtopologyspread/common.go``
  ``filterTopologySpreadConstraints``): minDomains 1, nodeAffinityPolicy Honor,
  nodeTaintsPolicy Ignore unless given; ``matchLabelKeys`` merged likewise;
- preferred terms and ScheduleAnyway constraints only score: ``topology.kube.core.preferred``
  reads them for the profiles that score them, and the evaluation says what its
  profile does with them (``recommender.engine.evaluate.score_notes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from topology.kube.fields import ObjectContext, node_requirement
from topology.model.hardware import (
    LabelRequirement,
    Pod,
    PodAffinityTerm,
    PodPlacementTerms,
    PodSelector,
    SpreadConstraint,
)

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
POLICIES = ("Honor", "Ignore")
ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


def pod_terms(
    ctx: ObjectContext, spec: Mapping[str, Any], namespace: str, labels: Mapping[str, str]
) -> PodPlacementTerms:
    """The pod's required inter-pod terms (its preferred ones: ``topology.kube.core.preferred``)."""
    affinity = ctx.mapping(spec.get("affinity"), "spec.affinity")
    required: dict[str, tuple[PodAffinityTerm, ...]] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        base = f"spec.affinity.{kind}"
        section = ctx.mapping(affinity.get(kind), base)
        required[kind] = tuple(
            affinity_term(ctx, path, raw, namespace, labels)
            for path, raw in ctx.items(section.get(REQUIRED), f"{base}.{REQUIRED}")
        )
    spread, _soft = spread_constraints(ctx, spec.get("topologySpreadConstraints"), labels)
    return PodPlacementTerms(required["podAffinity"], required["podAntiAffinity"], spread)


def selector(
    ctx: ObjectContext, raw: Any, field_name: str, *, nil_matches_nothing: bool = True
) -> PodSelector:
    """A metav1.LabelSelector (matchLabels + matchExpressions), ANDed."""
    if raw is None:
        return PodSelector(nothing=nil_matches_nothing)
    body = ctx.mapping(raw, field_name)
    requirements = [
        LabelRequirement(key, "In", (value,))
        for key, value in sorted(
            ctx.labels(body.get("matchLabels"), f"{field_name}.matchLabels").items()
        )
    ]
    for path, item in ctx.items(body.get("matchExpressions"), f"{field_name}.matchExpressions"):
        requirements.append(node_requirement(ctx, path, item, SELECTOR_OPERATORS))
    return PodSelector(tuple(requirements))


def affinity_term(
    ctx: ObjectContext,
    path: str,
    raw: Mapping[str, Any],
    namespace: str,
    labels: Mapping[str, str],
) -> PodAffinityTerm:
    topology_key = ctx.text(raw.get("topologyKey"), f"{path}.topologyKey", required=True)
    chosen = selector(ctx, raw.get("labelSelector"), f"{path}.labelSelector")
    merged = [
        *_label_keys(ctx, raw, f"{path}.matchLabelKeys", labels, "In"),
        *_label_keys(ctx, raw, f"{path}.mismatchLabelKeys", labels, "NotIn"),
    ]
    if merged and not chosen.nothing:
        chosen = PodSelector((*chosen.requirements, *merged))
    names = tuple(
        sorted(
            {
                ctx.text(n, f"{path}.namespaces[{i}]")
                for i, n in enumerate(ctx.sequence(raw.get("namespaces"), f"{path}.namespaces"))
            }
        )
    )
    raw_ns_selector = raw.get("namespaceSelector")
    ns_selector = (
        None
        if raw_ns_selector is None
        else selector(ctx, raw_ns_selector, f"{path}.namespaceSelector")
    )
    if not names and ns_selector is None:
        names = (namespace,)
    return PodAffinityTerm(chosen, topology_key, names, ns_selector)


def _label_keys(
    ctx: ObjectContext, raw: Mapping[str, Any], field_name: str, labels: Mapping[str, str], op: str
) -> list[LabelRequirement]:
    keys = raw.get(field_name.rpartition(".")[2])
    out = []
    for i, key in enumerate(ctx.sequence(keys, field_name)):
        name = ctx.text(key, f"{field_name}[{i}]", required=True)
        if name in labels:
            out.append(LabelRequirement(name, op, (labels[name],)))
    return out


def spread_constraints(
    ctx: ObjectContext, raw: Any, labels: Mapping[str, str]
) -> tuple[tuple[SpreadConstraint, ...], tuple[SpreadConstraint, ...]]:
    """The DoNotSchedule constraints (they filter) and the ScheduleAnyway ones (they
    only score), each as ``filterTopologySpreadConstraints`` reads it."""
    hard: list[SpreadConstraint] = []
    soft: list[SpreadConstraint] = []
    for path, item in ctx.items(raw, "spec.topologySpreadConstraints"):
        action = ctx.text(item.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable", required=True)
        if action not in ACTIONS:
            ctx.fail(f"{path}.whenUnsatisfiable", f"must be one of {', '.join(ACTIONS)}")
        if item.get("maxSkew") is None:
            ctx.fail(f"{path}.maxSkew", "required")
        max_skew = ctx.integer(item.get("maxSkew"), f"{path}.maxSkew", minimum=1)
        topology_key = ctx.text(item.get("topologyKey"), f"{path}.topologyKey", required=True)
        chosen = selector(ctx, item.get("labelSelector"), f"{path}.labelSelector")
        merged = _label_keys(ctx, item, f"{path}.matchLabelKeys", labels, "In")
        if merged and not chosen.nothing:
            chosen = PodSelector((*merged, *chosen.requirements))
        (soft if action == "ScheduleAnyway" else hard).append(
            SpreadConstraint(
                max_skew=max_skew,
                topology_key=topology_key,
                selector=chosen,
                min_domains=ctx.integer(
                    item.get("minDomains"), f"{path}.minDomains", default=1, minimum=1
                ),
                honor_node_affinity=_policy(ctx, item, path, "nodeAffinityPolicy", "Honor"),
                honor_node_taints=_policy(ctx, item, path, "nodeTaintsPolicy", "Ignore"),
            )
        )
    return tuple(hard), tuple(soft)


def _policy(
    ctx: ObjectContext, item: Mapping[str, Any], path: str, name: str, default: str
) -> bool:
    value = ctx.text(item.get(name), f"{path}.{name}") or default
    if value not in POLICIES:
        ctx.fail(f"{path}.{name}", f"must be one of {', '.join(POLICIES)}, got {value!r}")
    return value == "Honor"


def namespace_labels(name: str, labels: Mapping[str, str]) -> dict[str, str]:
    """A Namespace's labels, with the ``kubernetes.io/metadata.name`` label the API
    server sets on every namespace."""
    return {**labels, "kubernetes.io/metadata.name": name}


def needing_namespaces(pods: Iterable[Pod], namespaces_read: bool) -> tuple[Pod, ...]:
    """Without Namespace objects a namespaceSelector cannot be evaluated: the pods
    using one, and the pending pods an existing pod's such anti-affinity term could
    match, get an "unsupported" reason instead of a guess. The empty selector
    (``namespaceSelector: {}``, every namespace, as JobSet's exclusive placement
    writes it) reads no namespace's labels: it needs none."""
    pods = tuple(pods)
    if namespaces_read:
        return pods
    reason = "podAffinity namespaceSelector needs the Namespace objects (none were read)"

    def labelled(term: PodAffinityTerm) -> bool:
        return term.namespace_selector is not None and not term.namespace_selector.empty

    open_terms = [t for p in pods for t in p.pod_terms.anti_affinity if labelled(t) and p.node_name]
    out = []
    for pod in pods:
        terms = pod.pod_terms
        own = any(labelled(t) for t in (*terms.affinity, *terms.anti_affinity))
        theirs = pod.node_name is None and any(t.selector.matches(pod.labels) for t in open_terms)
        if own or theirs:
            pod = replace(pod, unsupported=tuple(dict.fromkeys((*pod.unsupported, reason))))
        out.append(pod)
    return tuple(out)
