"""The text report a platform engineer pastes into a ticket, and the YAML to apply.

::

    Pending          what waits, why (the scheduler's words), what the joint plan says
    Naive autoscaler what a count-based, pod-by-pod autoscaler would buy, and waste ($/h)
    What to do       node-group size changes / ProvisioningRequests, with YAML
    Reservations     idle reserved GPUs to reuse, and what they cost while idle

The YAML is of two shapes: a merge patch of the capacityweb NodeGroup (for
``kubectl patch --type merge``), and for gangs an
``autoscaling.x-k8s.io/v1`` ProvisioningRequest with the atomic scale-up
class, so the autoscaler buys all of the gang's capacity or none.

Pure: no Django, no I/O, no clock; the same Evaluation renders the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from recommender.engine.evaluate import Evaluation, Recommendation, WorkloadEvaluation

ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
VERDICT_TEXT = {
    "runs_now": "runs now",
    "uses_reservation": "reuse a reservation",
    "runs_after_scale_up": "runs after scale-up",
    "blocked": "blocked",
}


def money(amount: float) -> str:
    return f"{amount:,.2f}/h"


def render_text(evaluation: Evaluation) -> str:
    """The whole report, sections in the order a reader acts on them."""
    parts = [
        _header(evaluation),
        _pending(evaluation.workloads),
        _naive(evaluation),
        _what_to_do(evaluation),
        _reservations(evaluation),
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


def _what_to_do(evaluation: Evaluation) -> str:
    lines = [f"== What to do instead ({money(evaluation.joint_per_hour)}) =="]
    if not evaluation.recommendations:
        lines.append("buy nothing")
    gangs = {w.key for w in evaluation.workloads if w.kind == "gang"}
    for rec in evaluation.recommendations:
        paid = f", paid by reservation {rec.reservation}" if rec.reservation else ""
        lines.append(
            f"* add {rec.count} x {rec.node_group}{_where(rec.placement)} "
            f"for {', '.join(rec.workloads)} ({money(rec.cost_per_hour)}{paid})"
        )
        lines.append(_yaml_block(node_group_patch(rec, evaluation)))
        for key in rec.workloads:
            if key in gangs:
                workload = next(w for w in evaluation.workloads if w.key == key)
                lines.append(_yaml_block(provisioning_request(workload)))
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


def _where(placement: Mapping[str, str]) -> str:
    if not placement:
        return ""
    return " in " + ", ".join(f"{k}={v}" for k, v in sorted(placement.items()))


def _yaml_block(document: Mapping[str, Any]) -> str:
    text = yaml.safe_dump(dict(document), sort_keys=False, default_flow_style=False)
    return "\n".join(f"    {line}" for line in ["---", *text.rstrip().splitlines()])


def node_group_patch(rec: Recommendation, evaluation: Evaluation) -> dict[str, Any]:
    """``kubectl patch nodegroups.capacityweb.io NAME --type merge --patch-file …``."""
    current = evaluation.node_group_sizes.get(rec.node_group, 0)
    return {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": rec.node_group},
        "spec": {
            "targetSize": current + rec.count,
            "placement": [{"labels": dict(sorted(rec.placement.items())), "newNodes": rec.count}],
        },
    }


def provisioning_request(workload: WorkloadEvaluation) -> dict[str, Any]:
    """All-or-nothing capacity for a gang (pod template: the gang's first member's spec)."""
    namespace, _, name = workload.key.partition("/")
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "provisioningClassName": ATOMIC_CLASS,
            "podSets": [{"count": workload.pods, "podTemplateRef": {"name": name}}],
        },
    }
