"""What preemption reads: PodDisruptionBudgets, and each pod's priority fields.

kube-scheduler's DefaultPreemption (upstream ``pkg/scheduler/framework/plugins/
defaultpreemption/default_preemption.go``) spares, where it can, running pods
whose eviction would break a PodDisruptionBudget, using the budget's
``status.disruptionsAllowed`` (kept by the disruption controller). A snapshot
taken from a live cluster carries that status; a hand-written one may not, and
then the allowance is worked out from ``minAvailable`` / ``maxUnavailable`` over
the snapshot's running pods the budget selects, which stand for both the
healthy and the expected pods (upstream ``pkg/controller/disruption``: a
percentage is scaled and rounded up).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from topology.kube.core import podaffinity
from topology.kube.fields import ObjectContext
from topology.model.hardware import PREEMPT_LOWER_PRIORITY, DisruptionBudget, Pod

NEVER = "Never"
PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, NEVER)


class Collecting(Protocol):
    budgets: list[DisruptionBudget]


def collect(collected: Collecting, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """``topology.kube.parse``'s handler for PodDisruptionBudget (policy/v1)."""
    collected.budgets.append(parse_budget(ctx, obj))


def parse_budget(ctx: ObjectContext, obj: dict[str, Any]) -> DisruptionBudget:
    """A policy/v1 PodDisruptionBudget; errors name the field."""
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    allowed = status.get("disruptionsAllowed")
    return DisruptionBudget(
        namespace=ctx.text(meta.get("namespace"), "metadata.namespace") or "default",
        name=ctx.text(meta.get("name"), "metadata.name", required=True),
        selector=podaffinity.selector(ctx, spec.get("selector"), "spec.selector"),
        disruptions_allowed=(
            None
            if allowed is None
            else ctx.integer(allowed, "status.disruptionsAllowed", minimum=0)
        ),
        min_available=_int_or_percent(ctx, spec.get("minAvailable"), "spec.minAvailable"),
        max_unavailable=_int_or_percent(ctx, spec.get("maxUnavailable"), "spec.maxUnavailable"),
        disrupted_pods=frozenset(ctx.mapping(status.get("disruptedPods"), "status.disruptedPods")),
    )


def preemption_fields(
    ctx: ObjectContext, spec: dict[str, Any], status: dict[str, Any]
) -> dict[str, Any]:
    """A Pod's ``spec.preemptionPolicy`` and ``status.startTime`` (as ``Pod`` fields)."""
    policy = ctx.text(spec.get("preemptionPolicy"), "spec.preemptionPolicy")
    if policy and policy not in PREEMPTION_POLICIES:
        ctx.fail("spec.preemptionPolicy", f"must be one of {', '.join(PREEMPTION_POLICIES)}")
    started = ctx.timestamp(status.get("startTime"), "status.startTime")
    return {
        "preemption_policy": policy or PREEMPT_LOWER_PRIORITY,
        "started": started.timestamp() if started else None,
    }


def disruptions_allowed(budget: DisruptionBudget, pods: Iterable[Pod]) -> int:
    """The budget's allowance: its status, else worked out from its spec over ``pods``
    (the running pods). A budget with neither status nor spec bound allows none."""
    if budget.disruptions_allowed is not None:
        return budget.disruptions_allowed
    selected = sum(1 for p in pods if p.node_name is not None and budget.selects(p))
    if budget.min_available is not None:
        return max(0, selected - _scaled(budget.min_available, selected))
    if budget.max_unavailable is not None:
        return max(0, _scaled(budget.max_unavailable, selected))
    return 0


def _scaled(value: int | str, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.removesuffix("%")) * total / 100)


def _int_or_percent(ctx: ObjectContext, raw: Any, field: str) -> int | str | None:
    if raw is None:
        return None
    if isinstance(raw, str) and raw.endswith("%"):
        if not raw[:-1].isdigit():
            ctx.fail(field, f"must be an integer or a percentage like '50%', got {raw!r}")
        return raw
    return ctx.integer(raw, field, minimum=0)


def split_by_budgets(
    pods: Sequence[Pod], budgets: Sequence[DisruptionBudget], allowed: dict[str, int]
) -> tuple[list[Pod], list[Pod]]:
    """kube-scheduler's ``filterPodsWithPDBViolation`` (``pkg/scheduler/framework/
    plugins/defaultpreemption/default_preemption.go``), for preemption's victims: each
    pod a budget selects uses one of its allowed disruptions (unless the budget already
    counts it disrupted); a pod taking a budget below zero violates it. ``allowed``:
    budget key → disruptions allowed."""
    left = dict(allowed)
    violating: list[Pod] = []
    safe: list[Pod] = []
    for pod in pods:
        breaks = False
        for budget in budgets:
            if not budget.selects(pod) or pod.name in budget.disrupted_pods:
                continue
            left[budget.key] -= 1
            breaks = breaks or left[budget.key] < 0
        (violating if breaks else safe).append(pod)
    return violating, safe
