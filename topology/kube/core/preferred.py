"""Pod spec → preferred terms: what kube-scheduler's default profile only scores.

Pure: no Django, no I/O. Read as kube-scheduler reads them
(kubernetes/kubernetes ``pkg/scheduler/framework/plugins``):

- ``affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution``:
  weight and ``preference`` (a node selector term, ``matchExpressions`` ANDed;
  ``nodeaffinity/node_affinity.go`` ``PreScore`` via component-helpers
  ``NewPreferredSchedulingTerms``). A term with ``matchFields`` is left out here;
  ``topology.kube.core.podspec`` lists it as score only;
- ``affinity.pod(Anti)Affinity.preferredDuringSchedulingIgnoredDuringExecution``:
  weight and ``podAffinityTerm``, parsed as the required terms are
  (``topology.kube.core.podaffinity.affinity_term``: namespaces defaulted, match label keys
  merged; ``interpodaffinity/plugin.go`` via ``framework.NewPodInfo``);
- ``topologySpreadConstraints`` with ``whenUnsatisfiable: ScheduleAnyway``
  (``podtopologyspread/common.go`` ``filterTopologySpreadConstraints``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topology.kube.core.podaffinity import PREFERRED, affinity_term, spread_constraints
from topology.kube.fields import ObjectContext, node_requirement
from topology.model.hardware import NodeSelectorTerm, PreferredTerms
from topology.model.terms import WeightedNodeTerm, WeightedPodTerm


def preferred_terms(
    ctx: ObjectContext, spec: Mapping[str, Any], namespace: str, labels: Mapping[str, str]
) -> PreferredTerms:
    """The pod's preferred node and pod (anti-)affinity terms and ScheduleAnyway spread."""
    affinity = ctx.mapping(spec.get("affinity"), "spec.affinity")
    pod_terms: dict[str, tuple[WeightedPodTerm, ...]] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        base = f"spec.affinity.{kind}"
        section = ctx.mapping(affinity.get(kind), base)
        pod_terms[kind] = tuple(
            WeightedPodTerm(
                _weight(ctx, raw, path),
                affinity_term(
                    ctx,
                    f"{path}.podAffinityTerm",
                    ctx.mapping(raw.get("podAffinityTerm"), f"{path}.podAffinityTerm"),
                    namespace,
                    labels,
                ),
            )
            for path, raw in ctx.items(section.get(PREFERRED), f"{base}.{PREFERRED}")
        )
    _, soft = spread_constraints(ctx, spec.get("topologySpreadConstraints"), labels)
    return PreferredTerms(
        node=_node_terms(ctx, affinity),
        affinity=pod_terms["podAffinity"],
        anti_affinity=pod_terms["podAntiAffinity"],
        spread=soft,
    )


def _node_terms(ctx: ObjectContext, affinity: Mapping[str, Any]) -> tuple[WeightedNodeTerm, ...]:
    base = "spec.affinity.nodeAffinity"
    section = ctx.mapping(affinity.get("nodeAffinity"), base)
    found = []
    for path, raw in ctx.items(section.get(PREFERRED), f"{base}.{PREFERRED}"):
        preference = ctx.mapping(raw.get("preference"), f"{path}.preference")
        if preference.get("matchFields"):
            continue
        requirements = tuple(
            node_requirement(ctx, req_path, req)
            for req_path, req in ctx.items(
                preference.get("matchExpressions"), f"{path}.preference.matchExpressions"
            )
        )
        found.append(WeightedNodeTerm(_weight(ctx, raw, path), NodeSelectorTerm(requirements)))
    return tuple(found)


def _weight(ctx: ObjectContext, raw: Mapping[str, Any], path: str) -> int:
    """``weight``: 1–100 in the API; required."""
    if raw.get("weight") is None:
        ctx.fail(f"{path}.weight", "required")
    return ctx.integer(raw.get("weight"), f"{path}.weight", minimum=0)
