"""The text report a platform engineer pastes into a ticket, and the YAML to apply.

::

    Pending          what waits, why (the scheduler's words), what the joint plan says
    Naive autoscaler what a count-based, pod-by-pod autoscaler would buy, and waste ($/h)
    What to do       node-group size changes / ProvisioningRequests, with YAML
    Reservations     idle reserved GPUs to reuse, and what they cost while idle
    Not modelled     object kinds ignored, fields read but not modelled

The YAML of a recommendation comes from ONE function, ``recommendation_yaml``,
used by this report and stored with the recommendation for the page and the
API. It holds what an operator can apply:

- a merge patch (RFC 7386) of the NodeGroup raising ``spec.minSize`` to the
  size the plan needs (``spec.maxSize`` too, only when the plan goes past it);
  a merge patch of ``placement`` would replace the group's whole list of
  domains, so where the nodes must land is said in a comment instead;
- for each gang it serves, the alternative for clusters whose
  cluster-autoscaler runs ProvisioningRequest: an ``autoscaling.x-k8s.io/v1``
  ProvisioningRequest of class best-effort-atomic-scale-up, so the autoscaler
  buys all of the gang's capacity or none.

Pure: no Django, no I/O, no clock; the same Evaluation renders the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from recommender.engine.evaluate import Evaluation, Recommendation, WorkloadEvaluation
from topology.hardware import NodeGroup

NODE_GROUP_API_VERSION = "capacityweb.io/v1alpha1"
PROVISIONING_API_VERSION = "autoscaling.x-k8s.io/v1"
ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
NOT_MODELLED_LINES = 200  # fields listed in the text report; the JSON lists every one
VERDICT_TEXT = {
    "runs_now": "runs now",
    "uses_reservation": "reuse a reservation",
    "runs_after_scale_up": "runs after scale-up",
    "blocked": "blocked",
    "waiting": "waiting (scheduling gate)",
}


def money(amount: float) -> str:
    return f"{amount:,.2f}/h"


def render_text(evaluation: Evaluation, node_groups: Iterable[NodeGroup]) -> str:
    """The whole report, sections in the order a reader acts on them.

    ``node_groups``: the evaluated cluster's groups (their min and max sizes
    shape the YAML to apply).
    """
    parts = [
        _header(evaluation),
        _pending(evaluation.workloads),
        _naive(evaluation),
        _what_to_do(evaluation, tuple(node_groups)),
        _reservations(evaluation),
        _not_modelled(evaluation),
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _header(evaluation: Evaluation) -> str:
    return (
        f"capacityweb evaluation of {evaluation.cluster_name} at "
        f"{evaluation.at.isoformat()}\n"
        f"cluster: {evaluation.nodes} nodes, {evaluation.gpus} GPUs, "
        f"{evaluation.gpus_allocated} allocated, {evaluation.gpus_idle_reserved} idle reserved\n"
    )


def _pending(workloads: Iterable[WorkloadEvaluation]) -> str:
    lines = ["== Pending =="]
    for w in workloads:
        gpus = w.to_json()["gpus"]
        verdict = VERDICT_TEXT.get(w.joint.verdict, w.joint.verdict)
        lines.append(f"* {w.key} ({w.kind}, {w.pods} pods, {gpus} GPUs): {verdict}")
        lines.append(f"    scheduler: {w.diagnosis}")
        lines += [f"    plan: {reason}" for reason in w.joint.reasons]
        if w.disagreements:
            lines.append(f"    naive autoscaler disagrees: {', '.join(w.disagreements)}")
    if len(lines) == 1:
        lines.append("nothing is pending")
    return "\n".join(lines) + "\n"


def _naive(evaluation: Evaluation) -> str:
    plan = evaluation.naive_plan
    lines = ["== What the naive autoscaler would do =="]
    if not plan.additions:
        lines.append("add nothing")
    for addition in plan.additions:
        lines.append(
            f"* add {addition.count} x {addition.node_group}{_where(addition.placement)} "
            f"for {', '.join(addition.workloads)} ({money(addition.cost_per_hour)})"
        )
    for w in evaluation.workloads:
        if w.naive.add_nodes and not w.naive.schedulable_after:
            lines.append(f"  {w.key} still cannot start after it")
    lines.append(
        f"naive spend {money(plan.cost_per_hour)}, of which stranded "
        f"{money(plan.stranded_per_hour)} ({plan.stranded_gpus} GPUs nobody uses)"
    )
    return "\n".join(lines) + "\n"


def _what_to_do(evaluation: Evaluation, node_groups: tuple[NodeGroup, ...]) -> str:
    lines = [f"== What to do instead ({money(evaluation.joint_per_hour)}) =="]
    if not evaluation.recommendations:
        lines.append("buy nothing")
    for rec in evaluation.recommendations:
        paid = f", paid by reservation {rec.reservation}" if rec.reservation else ""
        lines.append(
            f"* add {rec.count} x {rec.node_group}{_where(rec.placement)} "
            f"for {', '.join(rec.workloads)} ({money(rec.cost_per_hour)}{paid})"
        )
        text = recommendation_yaml(rec, evaluation, node_groups)
        lines += [f"    {line}" if line else "" for line in text.rstrip().splitlines()]
    for w in evaluation.workloads:
        if w.joint.changes:
            lines.append(f"* {w.key}: " + "; ".join(w.joint.changes))
    return "\n".join(lines) + "\n"


def _reservations(evaluation: Evaluation) -> str:
    lines = ["== Reservations =="]
    users: dict[str, list[str]] = {}
    for w in evaluation.workloads:
        for name in w.joint.reservations:
            users.setdefault(name, []).append(w.key)
    for idle in evaluation.idle_reservations:
        reuse = f"; reuse for {', '.join(users[idle.name])}" if idle.name in users else ""
        lines.append(
            f"* {idle.name}: {idle.idle_gpus} of {idle.reserved_gpus} reserved GPUs idle "
            f"({money(idle.cost_per_hour)} paid for nothing){reuse}"
        )
    if len(lines) == 1:
        lines.append("no active reservation")
    return "\n".join(lines) + "\n"


def _not_modelled(evaluation: Evaluation) -> str:
    """What was read but not modelled: said, never silently dropped (DESIGN.md)."""
    lines = ["== Not modelled =="]
    for key, count in evaluation.ignored.items():
        lines.append(f"* ignored {count} x {key}")
    for item in evaluation.unsupported[:NOT_MODELLED_LINES]:
        effect = "blocks its workload" if item.blocking else "listed only"
        lines.append(f"* {item.object}: {item.field}: {item.reason} ({effect})")
    if len(evaluation.unsupported) > NOT_MODELLED_LINES:
        more = len(evaluation.unsupported) - NOT_MODELLED_LINES
        lines.append(f"* … and {more} more (all in --format json, key 'unsupported')")
    if len(lines) == 1:
        lines.append("everything read was modelled")
    return "\n".join(lines) + "\n"


def _where(placement: Mapping[str, str]) -> str:
    return f" in {_labels_text(placement)}" if placement else ""


# --- the YAML to apply ----------------------------------------------------------


def recommendation_yaml(
    rec: Recommendation, evaluation: Evaluation, node_groups: Iterable[NodeGroup]
) -> str:
    """YAML documents (with comments saying how to apply them) for one recommendation."""
    groups = {g.name: g for g in node_groups}
    documents = [_node_group_document(rec, evaluation, groups.get(rec.node_group))]
    by_key = {w.key: w for w in evaluation.workloads}
    for key in rec.workloads:
        workload = by_key.get(key)
        if workload is not None and workload.kind == "gang":
            documents.append(_provisioning_document(workload, rec.placement))
    return "---\n".join(documents)


def planned_size(rec: Recommendation, evaluation: Evaluation) -> tuple[int, int]:
    """(current size, size after this recommendation) of its node group.

    Recommendations of one group count in order: the second one's size includes
    the first one's nodes, so the patches applied in order (or only the last)
    give the group every node the plan adds to it.
    """
    current = evaluation.node_group_sizes.get(rec.node_group, 0)
    added = 0
    for other in evaluation.recommendations:
        if other.node_group == rec.node_group:
            added += other.count
        if other == rec:
            break
    return current, current + added


def node_group_patch(
    rec: Recommendation, evaluation: Evaluation, group: NodeGroup | None
) -> dict[str, Any]:
    """The merge patch: ``minSize`` raised to the planned size (never lowered), and
    ``maxSize`` only when the planned size is beyond it."""
    _current, size = planned_size(rec, evaluation)
    spec: dict[str, int] = {"minSize": max(size, group.min_size) if group else size}
    if group is not None and size > group.max_size:
        spec["maxSize"] = size
    return {
        "apiVersion": NODE_GROUP_API_VERSION,
        "kind": "NodeGroup",
        "metadata": {"name": rec.node_group},
        "spec": spec,
    }


def provisioning_request(workload: WorkloadEvaluation) -> dict[str, Any]:
    """All of a gang's pending pods, provisioned atomically (autoscaling.x-k8s.io/v1)."""
    namespace, _, name = workload.key.partition("/")
    return {
        "apiVersion": PROVISIONING_API_VERSION,
        "kind": "ProvisioningRequest",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "provisioningClassName": ATOMIC_CLASS,
            "podSets": [{"count": workload.pods, "podTemplateRef": {"name": name}}],
        },
    }


def _node_group_document(
    rec: Recommendation, evaluation: Evaluation, group: NodeGroup | None
) -> str:
    current, size = planned_size(rec, evaluation)
    paid = f", paid by reservation {rec.reservation}" if rec.reservation else ""
    comments = [
        f"NodeGroup {rec.node_group}: from {current} to {size} nodes (+{rec.count}{paid}) "
        f"for {', '.join(rec.workloads)}",
        "merge patch (RFC 7386): the raised minSize makes the group grow now;",
        "lower it again once the work is done",
    ]
    if rec.placement:
        comments.append(f"the new nodes must land in {_labels_text(rec.placement)}")
    return _document(comments, node_group_patch(rec, evaluation, group))


def _provisioning_document(workload: WorkloadEvaluation, placement: Mapping[str, str]) -> str:
    namespace, _, name = workload.key.partition("/")
    selector = ", ".join(f"{k}: {v}" for k, v in sorted(placement.items()))
    comments = [
        f"or, where cluster-autoscaler runs ProvisioningRequest: all {workload.pods} pods "
        f"of {workload.key} or none.",
        f"podTemplateRef names a PodTemplate in {namespace} holding the pod spec of a member"
        + (f" (nodeSelector {selector});" if selector else ";"),
        f"the pods carry the annotations {CONSUME_ANNOTATION}: {name}",
        f"and {CLASS_ANNOTATION}: {ATOMIC_CLASS}",
    ]
    return _document(comments, provisioning_request(workload))


def _document(comments: Iterable[str], body: Mapping[str, Any]) -> str:
    text = yaml.safe_dump(dict(body), sort_keys=False, default_flow_style=False)
    return "".join(f"# {line}\n" for line in comments) + text


def _labels_text(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
