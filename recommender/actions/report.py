"""Recommendations as the action the user's own autoscaler takes, and the report's
discovery sections (node groups with their source and price, what was not modelled).

A recommendation says "add N nodes of group G (in domain D)". What a platform
team applies depends on what grows G (``NodeGroup.autoscaler``); every card is one
either/or at most, and a size change always comes with the step that undoes it::

    paid by a reservation    ─► the pod-template fields that target the reservation
                                (recommender.actions.reservation); no size change, which
                                could start on-demand nodes
    cluster-autoscaler group ─► EITHER a ProvisioningRequest + its PodTemplate per
                                workload (recommender.actions.provisioning)
                                OR the managed pool's size set with its cloud CLI,
                                THEN the previous bounds restored (actions.cloud_commands)
    Karpenter NodePool       ─► a limit raised only where the card's nodes do not fit
                                under it; never a limit the pool lacks
                                (recommender.actions.karpenter)
    GKE / EKS / AKS pool     ─► the cloud CLI command that sets its size, THEN the one
                                that restores it
    capacityweb.io NodeGroup ─► EITHER the ProvisioningRequests + PodTemplates OR the
                                NodeGroup merge patch (recommender.engine.evaluate.report),
                                THEN its bounds back

A discovered group never gets a ``capacityweb.io`` object: the cluster has none to
patch. Where the plan depends on a domain (the group spans several, or a workload needs
one domain of a level), a ``Placement`` note names it and what lands the nodes there
(recommender.actions.placement).

Every card is self-contained: its size or limit is the group's current one plus this
card's own nodes; the total of all cards of a group is given separately
(``nodeGroupTotals``, and the Karpenter comment).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import yaml

from recommender.actions.cloud_commands import PoolResize, grow, restore
from recommender.actions.karpenter import karpenter_text
from recommender.actions.placement import (
    placement_text,
    required_domain_text,
    required_domains,
)
from recommender.actions.provisioning import (
    cards_provisioning_text,
    kueue_provisioned,
    kueue_text,
    pending_pods,
    provisioning_text,
)
from recommender.actions.reservation import reservation_named, reservation_text
from recommender.engine.autoscaler.options import RESERVATION_TAINT_KEY
from recommender.engine.evaluate.evaluation import Evaluation, Recommendation
from recommender.engine.evaluate.patches import NODE_GROUP_API_VERSION
from recommender.engine.evaluate.pricing import (
    PRICE_UNKNOWN,
    total_text,
    unpriced_groups,
    unpriced_nodes,
)
from recommender.engine.evaluate.report import (
    node_group_patch,
    planned_size,
    spanned_domains,
)
from topology.model.hardware import Cluster, ModelError, NodeGroup, Reservation, Taint
from topology.model.money import format_per_hour

# what an action is to the card: the one thing to apply, one of two alternatives, the
# step that undoes an alternative once the work is done, or a note on placement
APPLY, EITHER, OR, AFTERWARDS, NOTE = "apply", "either", "or", "afterwards", "note"
ROLE_HEADERS = {
    APPLY: "",
    EITHER: "EITHER ",
    OR: "OR ",
    AFTERWARDS: "THEN, once the work is done (undoes the OR step): ",
    NOTE: "",
}


@dataclass(frozen=True, slots=True)
class Action:
    """One thing to apply: ``kind`` names the tool, ``text`` is what to paste, ``role``
    says how it relates to the card's other actions (``ROLE_HEADERS``)."""

    kind: str  # ProvisioningRequest | KarpenterNodePool | gcloud | aws | az | NodeGroup | ...
    text: str
    role: str = APPLY

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text, "role": self.role}


def actions_for(rec: Recommendation, evaluation: Evaluation, cluster: Cluster) -> list[Action]:
    """What to apply for one recommendation, for the autoscaler that grows its group:
    at most one either/or per card, and the step that undoes the size change."""
    group = next((g for g in cluster.node_groups if g.name == rec.node_group), None)
    if group is None:
        return [Action("NodeGroup", _yaml(node_group_patch(rec, evaluation, group)))]
    placing = [
        Action("Placement", text, NOTE)
        for text in (placement_text(rec, group), required_domain_text(rec, cluster, group))
        if text
    ]
    if rec.reservation:
        pods = [p for key in rec.workloads for p in pending_pods(cluster, key)]
        reservation = reservation_named(cluster, rec.reservation)
        reserved = _reserved_nodes(group, rec.reservation, reservation)
        text = reservation_text(reservation, rec.reservation, reserved, rec.count, pods)
        return [Action("Reservation", text), *placing]
    ref = group.autoscaler
    if ref is None:
        return _project_actions(rec, evaluation, cluster, group)
    if ref.kind == "karpenter":
        return [
            Action("KarpenterNodePool", karpenter_text(rec, evaluation, cluster, group)),
            *placing,
        ]
    return [*_pool_actions(rec, evaluation, cluster, group), *placing]


def _pool_actions(
    rec: Recommendation, evaluation: Evaluation, cluster: Cluster, group: NodeGroup
) -> list[Action]:
    """A cluster-autoscaler group or a managed pool: either the ProvisioningRequest or
    the pool's size (then its bounds restored); nothing twice where Kueue asks already."""
    ref = group.autoscaler
    assert ref is not None
    kueue = kueue_text(rec, cluster)
    notes = [Action("Kueue", kueue, NOTE)] if kueue is not None else []
    if kueue is not None and all(kueue_provisioned(cluster, key) for key in rec.workloads):
        return notes  # Kueue asks for all of it: nothing to apply twice
    # a resize for the card would also buy what Kueue's request asks for: none then
    resize = None if kueue is not None else _pool_resize(rec, evaluation, group)
    request = (
        provisioning_text(rec, evaluation, cluster, group)
        if ref.kind == "cluster-autoscaler"
        else None
    )
    if resize is None:
        return [*notes, *([Action("ProvisioningRequest", request)] if request else [])]
    kind = CLI_OF_POOL[resize.pool_kind]
    sizes = [Action(kind, grow(resize), OR if request else APPLY)]
    sizes.append(Action(kind, restore(resize), AFTERWARDS))
    if request is None:
        return sizes
    return [Action("ProvisioningRequest", request, EITHER), *sizes]


def _reserved_nodes(group: NodeGroup, name: str, reservation: Reservation | None) -> NodeGroup:
    """The group as the reservation's paid nodes are: a capacityweb.io Reservation's
    nodes carry its taint (``RESERVATION_TAINT_KEY``, what the joint plan models and
    tells the pods to tolerate), so the owner's patch tolerates it."""
    if reservation is None or reservation.source is not None or reservation.node_group is None:
        return group
    taint = Taint(RESERVATION_TAINT_KEY, name, "NoSchedule")
    return replace(group, template=replace(group.template, taints=(*group.template.taints, taint)))


def _project_actions(
    rec: Recommendation, evaluation: Evaluation, cluster: Cluster, group: NodeGroup
) -> list[Action]:
    """A capacityweb.io NodeGroup (no autoscaler found that grows it): EITHER a
    ProvisioningRequest with its PodTemplate per workload (what cluster-autoscaler acts
    on, its nodeSelector naming the card's domain), OR the group's size in its NodeGroup,
    THEN that size back; a note where a size change cannot choose the domain."""
    # a request where a size change falls short: a gang (all or none) or a domain the
    # group's size does not choose (as ``recommendation_yaml``)
    gangs = {w.key for w in evaluation.workloads if w.kind == "gang"}
    spans = spanned_domains(rec, group)
    asked = tuple(key for key in rec.workloads if spans or key in gangs)
    request = (
        provisioning_text(replace(rec, workloads=asked), evaluation, cluster, group)
        if asked
        else None
    )
    current, size = planned_size(rec, evaluation)
    header = (
        f"# capacityweb.io NodeGroup {group.name}: +{rec.count} nodes "
        f"(from {current} to {size}). No CRD: apply it to capacityweb (node-groups API),\n"
        "# and grow the cloud's group behind it to the same minimum.\n"
    )
    grow_size = Action("NodeGroup", header + _yaml(node_group_patch(rec, evaluation, group)), APPLY)
    undo = Action("NodeGroup", _yaml(_restore_patch(group)), AFTERWARDS)
    notes = [Action("Placement", text, NOTE) for text in [_size_placement_text((rec,), group)]]
    notes = [n for n in notes if n.text]
    if request is None:
        return [grow_size, undo, *notes]
    either = Action("ProvisioningRequest", request, EITHER)
    return [either, Action(grow_size.kind, grow_size.text, OR), undo, *notes]


def _restore_patch(group: NodeGroup) -> dict[str, Any]:
    """The NodeGroup's own bounds back, once the work is done."""
    return {
        "apiVersion": NODE_GROUP_API_VERSION,
        "kind": "NodeGroup",
        "metadata": {"name": group.name},
        "spec": {"minSize": group.min_size, "maxSize": group.max_size},
    }


def _size_placement_text(recs: Iterable[Recommendation], group: NodeGroup) -> str:
    """Where cards' nodes must land in a domain the group does not choose by its size."""
    needs = [(rec, spanned_domains(rec, group)) for rec in recs]
    needs = [(rec, spans) for rec, spans in needs if spans]
    if not needs:
        return ""
    spans = {key: values for _rec, found in needs for key, values in found.items()}
    lines = [
        f"# {group.name} adds nodes in "
        + "; ".join(f"{k} = {', '.join(v)}" for k, v in sorted(spans.items()))
        + ": a minSize raise does not choose which.",
        *(f"# - {rec.count} node(s) must land in {_labels(rec.placement)}" for rec, _ in needs),
        "# Only the ProvisioningRequest (its pods' nodeSelector names the domain) or a node "
        f"group per {next(iter(sorted(spans)))} lands them there.",
    ]
    return "\n".join(lines) + "\n"


CLI_OF_POOL = {"gke": "gcloud", "eks": "aws", "eksctl": "eksctl", "aks": "az"}


def _pool_resize(
    rec: Recommendation, evaluation: Evaluation, group: NodeGroup
) -> PoolResize | None:
    """The managed pool behind the group and the size this card wants; None when no
    managed pool is known (a cluster-autoscaler group whose cloud pool was not found)."""
    ref = group.autoscaler
    assert ref is not None
    autoscaled = ref.kind == "cluster-autoscaler"
    pool_kind = ref.pool_kind if autoscaled else ref.kind
    pool = ref.pool if autoscaled else ref.name
    if pool_kind not in CLI_OF_POOL or not pool:
        return None
    current, wanted = planned_size(rec, evaluation)
    return PoolResize(
        pool_kind=pool_kind,
        pool=pool,
        min_size=group.min_size,
        max_size=group.max_size,
        size=current,
        wanted=wanted,
        autoscaled=autoscaled,
    )


def named_placement(rec: Recommendation, cluster: Cluster) -> dict[str, str]:
    """Where the card's nodes must land as the page says it: the plan's placement, and
    the domain of each level a workload needs that the plan counted the nodes in
    (``placement_actions.required_domains``): never "any domain" when it depends on one."""
    group = next((g for g in cluster.node_groups if g.name == rec.node_group), None)
    needed = required_domains(rec, cluster, group) if group is not None else {}
    return dict(sorted({**rec.placement, **needed}.items()))


def apply_text(actions: Iterable[Action]) -> str:
    """The API's ``yaml``: the first action to apply, alone (an ``either``, not its
    ``or``; never a note), as the card's first copy button holds it; the API's
    ``actions`` hold all of them apart. "" for a card with nothing to apply."""
    return next((a.text for a in actions if a.role != NOTE), "")


# --- the report's additions ---------------------------------------------------------------


def report_json(
    evaluation: Evaluation,
    cluster: Cluster,
    notices: Iterable[ModelError],
    currency: str,
) -> dict[str, Any]:
    """``evaluation.to_json()`` plus the additive keys: ``currency``, ``nodeGroups``,
    ``actions`` per recommendation and the notices in ``unsupported`` (the kinds not
    modelled are in ``ignored`` already, from ``Evaluation.to_json``)."""
    payload = evaluation.to_json()
    payload["currency"] = currency
    payload["nodeGroups"] = [node_group_json(g) for g in cluster.node_groups]
    unpriced = unpriced_groups(cluster.node_groups)
    for rec, item in zip(evaluation.recommendations, payload["recommendations"], strict=True):
        item["actions"] = [a.to_json() for a in actions_for(rec, evaluation, cluster)]
        item["priceKnown"] = rec.node_group not in unpriced or rec.reservation is not None
        item["reservation"] = rec.reservation
    payload["cost"]["unpricedNodes"] = {
        "joint": _unpriced(evaluation.recommendations, unpriced),
        "naive": _unpriced(evaluation.naive_plan.additions, unpriced),
    }
    for total in payload["nodeGroupTotals"]:
        total["actions"] = [a.to_json() for a in group_actions(total, evaluation, cluster)]
    payload.setdefault("unsupported", []).extend(
        {"object": n.object, "field": n.field, "reason": n.reason} for n in notices
    )
    return payload


def group_actions(
    total: Mapping[str, Any], evaluation: Evaluation, cluster: Cluster
) -> list[Action]:
    """A group's "apply all": the actions of ``actions_for`` for every card's nodes at
    once (cards paid by a reservation are left to their own cards: they target the
    reservation, not the group's size). Each workload's ProvisioningRequest keeps its
    own card's domain, and the note that a size change does not choose the domain
    stays."""
    cards = [
        r
        for r in evaluation.recommendations
        if r.node_group == total["nodeGroup"] and r.reservation is None
    ]
    group = next((g for g in cluster.node_groups if g.name == total["nodeGroup"]), None)
    if len(cards) < 2 or group is None:
        return []
    together = Recommendation(
        node_group=total["nodeGroup"],
        count=sum(r.count for r in cards),
        placement={},
        cost_per_hour=sum(r.cost_per_hour for r in cards),
        workloads=tuple(w for r in cards for w in r.workloads),
        reservation=None,
    )
    requests = cards_provisioning_text(cards, evaluation, cluster, group)
    actions = [
        Action(a.kind, requests or a.text, a.role) if a.kind == "ProvisioningRequest" else a
        for a in actions_for(together, evaluation, cluster)
        if a.kind != "Placement"
    ]
    note = _size_placement_text(cards, group)
    return [*actions, *([Action("Placement", note, NOTE)] if note else [])]


def _unpriced(additions: Iterable[Any], unpriced: frozenset[str]) -> dict[str, int]:
    return unpriced_nodes(((a.node_group, a.count, a.reservation) for a in additions), unpriced)


def node_group_json(group: NodeGroup) -> dict[str, Any]:
    ref = group.autoscaler
    return {
        "name": group.name,
        "source": group.source,
        "autoscaler": None if ref is None else {"kind": ref.kind, "name": ref.name},
        "minSize": group.min_size,
        "maxSize": group.max_size,
        "currentSize": group.current_size,
        "pricePerNodeHour": group.price_per_node_hour,
        "priceSource": group.price_source,
        "priceKnown": group.price_known,
        "notes": list(group.notes),
    }


def report_text(
    evaluation: Evaluation,
    cluster: Cluster,
    notices: Iterable[ModelError],
    currency: str,
    ignored: Mapping[str, int] | None = None,
) -> str:
    """The sections the text report gains: node groups, actions, not modelled."""
    lines = [f"== Node groups (money in {currency} per hour) =="]
    for group in cluster.node_groups:
        price = (
            f"{format_per_hour(group.price_per_node_hour, currency)} per node "
            f"({group.price_source})"
            if group.price_known
            else PRICE_UNKNOWN
        )
        lines.append(
            f"* {group.name}: {group.current_size} nodes (min {group.min_size}, max "
            f"{group.max_size}), {price}; from {group.source or 'unknown source'}"
        )
        lines += [f"    note: {note}" for note in group.notes]
    if len(lines) == 1:
        lines.append("no node group known")
    lines.append("")
    lines.append("== Actions for your autoscaler ==")
    if not evaluation.recommendations:
        lines.append("nothing to apply")
    unpriced = unpriced_groups(cluster.node_groups)
    if evaluation.recommendations:
        left_out = _unpriced(evaluation.recommendations, unpriced)
        lines.append(f"in all: {total_text(evaluation.joint_per_hour, left_out, currency)}")
    for rec in evaluation.recommendations:
        known = rec.node_group not in unpriced or rec.reservation is not None
        cost = format_per_hour(rec.cost_per_hour, currency) if known else PRICE_UNKNOWN
        lines.append(
            f"* add {rec.count} x {rec.node_group} ({cost}) for {', '.join(rec.workloads)}:"
        )
        for action in actions_for(rec, evaluation, cluster):
            lines.append(f"  [{ROLE_HEADERS[action.role]}{action.kind}]")
            lines += [f"    {line}" if line else "" for line in action.text.rstrip().splitlines()]
    notices = list(notices)
    if notices or ignored:
        lines.append("")
        lines.append("== Read but not modelled ==")
        lines += [f"* {n}" for n in notices]
        lines += [f"* {kind}: {count} ignored" for kind, count in sorted((ignored or {}).items())]
    return "\n".join(lines) + "\n"


def _yaml(body: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(body), sort_keys=False, default_flow_style=False)


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
