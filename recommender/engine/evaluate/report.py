"""The text report a platform engineer pastes into a ticket, and the YAML to apply.

::

    header           the cluster, the scheduler profile simulated, model gaps, FGD's what-if
    Pending          what waits, why (the scheduler's words), what the joint plan says
                     (and the real scheduler's word where it disagrees: model gap)
    Naive autoscaler what a count-based, pod-by-pod autoscaler would buy, and waste ($/h)
    What to do       node-group size changes / ProvisioningRequests, with YAML
    Reservations     idle reserved GPUs to reuse, and what they cost while idle
    Not modelled     object kinds ignored, fields read but not modelled

The YAML of a recommendation comes from ONE function, ``recommendation_yaml``,
used by this report and stored with the recommendation for the page and the
API. It holds what an operator can apply:

- a merge patch (RFC 7386) of the NodeGroup raising ``spec.minSize`` by this
  recommendation's own nodes (``spec.maxSize`` too, only when that goes past
  it): each card is self-contained, so applying one team's card buys exactly
  its nodes; a merge patch sets an absolute size, so two cards of one group
  do not add up: for that, ``group_yaml`` gives one "apply all" patch per
  group, correct when applied once. A merge patch of ``placement`` would
  replace the group's whole list of domains, so where the nodes must land is
  said in a comment instead;
- for each gang it serves, the alternative for clusters whose
  cluster-autoscaler runs ProvisioningRequest: an ``autoscaling.x-k8s.io/v1``
  ProvisioningRequest of class best-effort-atomic-scale-up, so the autoscaler
  buys all of the gang's capacity or none.

Money is written in the evaluation's currency, in topology.model.money's one format
(``$84.00/h``), as the pages and the reasons write it.

Pure: no Django, no I/O, no clock; the same Evaluation renders the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from recommender.engine.autoscaler.outcome_range import worst_case_per_hour
from recommender.engine.autoscaler.plan import ScaleUpPlan
from recommender.engine.evaluate.evaluation import Evaluation, Recommendation, WorkloadEvaluation
from recommender.engine.evaluate.patches import size_patch
from recommender.engine.evaluate.pricing import (
    PRICE_UNKNOWN,
    total_text,
    unpriced_groups,
    unpriced_nodes,
)
from topology.model.hardware import NodeGroup
from topology.model.money import format_per_hour

PROVISIONING_API_VERSION = "autoscaling.x-k8s.io/v1"
ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
NOT_MODELLED_LINES = 200  # fields listed in the text report; the JSON lists every one
VERDICT_TEXT = {
    "runs_now": "runs now",
    "preempts": "runs after preempting lower-priority pods",
    "uses_reservation": "reuse a reservation",
    "runs_after_scale_up": "runs after scale-up",
    "blocked": "blocked",
    "waiting": "waiting (scheduling gate)",
}


def render_text(evaluation: Evaluation, node_groups: Iterable[NodeGroup]) -> str:
    """The whole report, sections in the order a reader acts on them.

    ``node_groups``: the evaluated cluster's groups (their min and max sizes
    shape the YAML to apply).
    """
    node_groups = tuple(node_groups)
    unpriced = unpriced_groups(node_groups)
    parts = [
        _header(evaluation),
        _pending(evaluation.workloads),
        _naive(evaluation, unpriced),
        _what_to_do(evaluation, node_groups, unpriced),
        _reservations(evaluation),
        _not_modelled(evaluation),
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _release_text(evaluation: Evaluation) -> str:
    release = evaluation.scheduler_release
    return f", as {release.describe()}" if release else ""


def _header(evaluation: Evaluation) -> str:
    return (
        f"capacityweb evaluation of {evaluation.cluster_name} at "
        f"{evaluation.at.isoformat()}\n"
        f"cluster: {evaluation.nodes} nodes, {evaluation.gpus} GPUs, "
        f"{evaluation.gpus_allocated} allocated, {evaluation.gpus_idle_reserved} idle reserved\n"
        f"scheduler profile: {evaluation.scheduler_profile}{_release_text(evaluation)}"
        f"{_what_if_text(evaluation)}\n"
        f"model gaps: {evaluation.model_gaps} (runs now here, Unschedulable for kube-scheduler "
        "since the snapshot's last change)\n"
    )


def _what_if_text(evaluation: Evaluation) -> str:
    what_if = evaluation.what_if
    if what_if is None:
        return ""
    extra = what_if.to_json()["extraGpusPlaced"]
    return f"; what-if {what_if.profile}: {extra:+} pending GPUs placed now" + (
        f" ({', '.join(what_if.workloads)})" if what_if.workloads else ""
    )


def _pending(workloads: Iterable[WorkloadEvaluation]) -> str:
    lines = ["== Pending =="]
    for w in workloads:
        gpus = w.to_json()["gpus"]
        verdict = VERDICT_TEXT.get(w.joint.verdict, w.joint.verdict)
        lines.append(f"* {w.key} ({w.kind}, {w.pods} pods, {gpus} GPUs): {verdict}")
        lines.append(f"    scheduler: {w.diagnosis}")
        if w.model_gap is not None:
            lines.append(
                f"    model gap: kube-scheduler said {w.model_gap.scheduler!r} for "
                f"{w.model_gap.pod}; ours: {w.model_gap.ours}"
            )
        lines += [f"    plan: {reason}" for reason in w.joint.reasons]
        if w.score_tie is not None:
            lines.append(f"    score tie: {w.score_tie.reason()}")
        lines += [f"    naive autoscaler: {note}" for note in w.naive.notes]
        if w.disagreements:
            lines.append(f"    naive autoscaler disagrees: {', '.join(w.disagreements)}")
        if "never-scales" in w.disagreements:
            lines.append(f"    never scales: {_waiting_text(w)}")
    if len(lines) == 1:
        lines.append("nothing is pending")
    return "\n".join(lines) + "\n"


def _waiting_text(workload: WorkloadEvaluation) -> str:
    """What the phantom capacity costs: the autoscaler adds nothing, the workload waits."""
    waited = workload.waiting_gpu_hours
    text = "the autoscaler adds nothing while it cannot run; "
    text += "waited an unknown time" if waited is None else f"{waited} GPU-hours waited so far"
    if workload.idle_member_gpus:
        idle = workload.to_json()["idleMemberGpus"]
        text += f"; its running members hold {idle} GPUs idle"
    return text


def _naive(evaluation: Evaluation, unpriced: frozenset[str] = frozenset()) -> str:
    plan, currency = evaluation.naive_plan, evaluation.currency
    lines = [f"== What the naive autoscaler would do ({evaluation.autoscaler}) =="]
    lines += _flags(evaluation)
    if not plan.additions:
        lines.append("add nothing")
    for addition in plan.additions:
        lines.append(
            f"* add {addition.count} x {addition.node_group}{_where(addition.placement)} "
            f"for {', '.join(addition.workloads)} "
            f"({_price(addition.node_group, addition.cost_per_hour, currency, unpriced)})"
        )
    for w in evaluation.workloads:
        if w.naive.add_nodes and not w.naive.schedulable_after:
            lines.append(f"  {w.key} still cannot start after it")
    spend = total_text(plan.cost_per_hour, _unpriced_of(plan.additions, unpriced), currency)
    lines.append(
        f"naive spend {spend}, of which stranded "
        f"{format_per_hour(plan.stranded_per_hour, currency)} "
        f"({plan.stranded_gpus} GPUs nobody uses)"
    )
    lines += _range(plan, currency)
    return "\n".join(lines) + "\n"


def _range(plan: ScaleUpPlan, currency: str) -> list[str]:
    """cluster-autoscaler's other outcomes (``outcome_range``) and the worst case."""
    if plan.range_skipped:
        return [plan.range_skipped]
    if not plan.other_outcomes:
        return []
    lines = [f"cluster-autoscaler may also add {o.text(currency)}" for o in plan.other_outcomes]
    worst = worst_case_per_hour(plan.cost_per_hour, plan.other_outcomes)
    lines.append(f"worst case of these outcomes {format_per_hour(worst, currency)}")
    return lines


def _flags(evaluation: Evaluation) -> list[str]:
    """The cluster-autoscaler flags that are not upstream's defaults (caflags)."""
    flags = evaluation.autoscaler_flags
    if flags is None:
        return []
    shown = [
        f"{name}={item}"
        for name, value in flags.in_effect.items()
        for item in (value if isinstance(value, list) else [value])
    ]
    if flags.settings.priorities:
        shown.append(f"priority ConfigMap ({len(flags.settings.priorities)} priorities)")
    if not shown:
        return []
    return [f"with {' '.join(shown)}"]


def _what_to_do(
    evaluation: Evaluation,
    node_groups: tuple[NodeGroup, ...],
    unpriced: frozenset[str] = frozenset(),
) -> str:
    currency = evaluation.currency
    left_out = _unpriced_of(evaluation.recommendations, unpriced)
    spend = total_text(evaluation.joint_per_hour, left_out, currency)
    lines = [f"== What to do instead ({spend}) =="]
    search = evaluation.joint_plan.search
    if search is not None and (search.explored or not search.optimal):
        lines.append(f"(joint plan for the whole pending set: {search.text(currency)})")
    if not evaluation.recommendations:
        lines.append("buy nothing")
    for rec in evaluation.recommendations:
        paid = f", paid by reservation {rec.reservation}" if rec.reservation else ""
        lines.append(
            f"* add {rec.count} x {rec.node_group}{_where(rec.placement)} "
            f"for {', '.join(rec.workloads)} "
            f"({_price(rec.node_group, rec.cost_per_hour, currency, unpriced, rec.reservation)}"
            f"{paid})"
        )
        if _discovered(
            rec.node_group, node_groups
        ):  # its autoscaler's actions: recommender.actions.report
            lines.append("    what to apply: see Actions for your autoscaler")
            continue
        text = recommendation_yaml(rec, evaluation, node_groups)
        lines += [f"    {line}" if line else "" for line in text.rstrip().splitlines()]
    for total in evaluation.group_totals:
        if total.cards > 1 and not _discovered(total.node_group, node_groups):
            lines.append(f"* apply all for node group {total.node_group}:")
            text = group_yaml(total.to_json())
            lines += [f"    {line}" if line else "" for line in text.rstrip().splitlines()]
    for w in evaluation.workloads:
        if w.joint.changes:
            lines.append(f"* {w.key}: " + "; ".join(w.joint.changes))
    return "\n".join(lines) + "\n"


def _price(
    group: str,
    amount: float,
    currency: str,
    unpriced: frozenset[str],
    reservation: str | None = None,
) -> str:
    """The figure, or "price unknown" for nodes of a group without a price."""
    if group in unpriced and reservation is None:
        return PRICE_UNKNOWN
    return format_per_hour(amount, currency)


def _unpriced_of(additions: Iterable[Any], unpriced: frozenset[str]) -> dict[str, int]:
    """Nodes of unpriced groups among additions or recommendations (``node_group``,
    ``count``, ``reservation``)."""
    return unpriced_nodes(((a.node_group, a.count, a.reservation) for a in additions), unpriced)


def _discovered(name: str, node_groups: tuple[NodeGroup, ...]) -> bool:
    """A group some autoscaler grows (found by topology.kube.discovery): no capacityweb.io
    NodeGroup exists in the cluster to patch."""
    return any(g.name == name and g.autoscaler is not None for g in node_groups)


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
            f"({format_per_hour(idle.cost_per_hour, evaluation.currency)} paid for nothing)"
            f"{reuse}"
        )
    if len(lines) == 1:
        lines.append("no active reservation")
    return "\n".join(lines) + "\n"


def _not_modelled(evaluation: Evaluation) -> str:
    """What was read but not modelled: said, never silently dropped (DESIGN.md)."""
    lines = ["== Not modelled =="]
    for key, count in evaluation.ignored.items():
        lines.append(f"* ignored {count} x {key}")
    flags = evaluation.autoscaler_flags
    if flags is not None and flags.ignored:
        lines.append(
            "* cluster-autoscaler flags ignored (no effect on a scale-up from one snapshot): "
            + ", ".join(flags.ignored)
        )
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
    group = groups.get(rec.node_group)
    spans = spanned_domains(rec, group)
    documents = [_node_group_document(rec, evaluation, group, spans)]
    by_key = {w.key: w for w in evaluation.workloads}
    for key in rec.workloads:
        workload = by_key.get(key)
        # a gang: all or none; a group whose nodes may land elsewhere: what places them
        if workload is not None and (workload.kind == "gang" or spans):
            documents.append(_provisioning_document(workload, rec.placement))
    return "---\n".join(documents)


def planned_size(rec: Recommendation, evaluation: Evaluation) -> tuple[int, int]:
    """(current size, size after this recommendation alone) of its node group."""
    current = evaluation.node_group_sizes.get(rec.node_group, 0)
    return current, current + rec.count


def group_added(evaluation: Evaluation, node_group: str) -> tuple[int, int]:
    """(cards, nodes) that all recommendations of one group add together."""
    counts = [r.count for r in evaluation.recommendations if r.node_group == node_group]
    return len(counts), sum(counts)


def node_group_patch(
    rec: Recommendation, evaluation: Evaluation, group: NodeGroup | None
) -> dict[str, Any]:
    """This card's merge patch: ``minSize`` raised by its own nodes (never lowered),
    and ``maxSize`` only when that is beyond it."""
    _current, size = planned_size(rec, evaluation)
    if group is None:
        return size_patch(rec.node_group, size, None, None)
    return size_patch(rec.node_group, size, group.min_size, group.max_size)


def group_yaml(total: Mapping[str, Any]) -> str:
    """One "apply all" patch for every recommendation of a group, correct applied once.

    ``total``: an entry of the evaluation JSON's ``nodeGroupTotals`` (the page
    renders the stored JSON with this same function).
    """
    current, added = total["currentSize"], total["addNodes"]
    comments = [
        f"NodeGroup {total['nodeGroup']}, all {total['cards']} recommendations together: "
        f"from {current} to {current + added} nodes (+{added})",
        "apply this once INSTEAD of the cards' own patches (merge patches set a size,",
        "they do not add up)",
    ]
    return _document(comments, total["patch"])


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


def spanned_domains(rec: Recommendation, group: NodeGroup | None) -> dict[str, list[str]]:
    """Labels of the card's domain the group lands new nodes in more than one value of."""
    if group is None:
        return {}
    spans: dict[str, list[str]] = {}
    for key in sorted(rec.placement):
        values = {
            p.labels.get(key) or group.template.labels.get(key) or "(none)"
            for p in group.placements
        }
        if len(values) > 1:
            spans[key] = sorted(values)
    return spans


def _node_group_document(
    rec: Recommendation,
    evaluation: Evaluation,
    group: NodeGroup | None,
    spans: Mapping[str, list[str]],
) -> str:
    current, size = planned_size(rec, evaluation)
    paid = f", paid by reservation {rec.reservation}" if rec.reservation else ""
    comments = [
        f"NodeGroup {rec.node_group}: +{rec.count} nodes{paid} for {', '.join(rec.workloads)} "
        f"(this card alone: from {current} to {size})",
        "merge patch (RFC 7386): the raised minSize makes the group grow now;",
        "lower it again once the work is done",
    ]
    cards, added = group_added(evaluation, rec.node_group)
    if cards > 1:
        comments.append(
            f"with the other {cards - 1} card(s) of {rec.node_group} (+{added} in all), "
            "apply the group's apply-all patch instead"
        )
    if spans:
        where = "; ".join(f"{k} = {', '.join(v)}" for k, v in spans.items())
        comments += [
            f"the new nodes must land in {_labels_text(rec.placement)}, but {rec.node_group} "
            f"adds nodes in {where}:",
            "a minSize raise does not choose which: apply the ProvisioningRequest below",
            f"(its pods' nodeSelector names the domain) or a NodeGroup per {next(iter(spans))}",
        ]
    elif rec.placement:
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
