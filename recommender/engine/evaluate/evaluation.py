"""The joint evaluation: scheduler, naive autoscaler and joint autoscaler side by side.

::

    cluster ──► state ──┬─► idle reserved GPUs (before anything is planned)
                        ├─► place(pending)          → the scheduler's diagnoses
                        ├─► scale_up(naive)         → what CA would buy, stranded
                        ├─► scale_up(joint)         → verdicts, recommendations
                        ├─► heatmap cells, fragmentation
                        ├─► place(pending) with fgd → the what-if (other profiles only)
                        └─► per workload: naive vs joint → disagreement classes;
                            "runs now" vs the real scheduler's word → model gaps

``policy`` is the scheduler scoring profile (``scheduler/profiles.py``:
kube-default, most-allocated, fgd; "default" is kube-default), recorded in the
JSON as ``schedulerProfile``.

One immutable ``Evaluation``; ``to_json()`` is the published contract
(schemaVersion 1) and is byte-identical for the same input.

Two stages (issue #41): what a verdict needs first, the optional answers after::

    critical_pass(cluster, at=…)  → CriticalPass: .evaluation (verdicts, per node group /
        │                            domain / node reasons, naive and joint plans,
        │                            recommendations, totals, heatmap; ``missing``
        │                            names the deferred parts) and .basis
        ├─► fragmentation_part(critical) → (per node, per domain)     "fragmentation"
        ├─► score_tie_part(critical)  → {workload: ScoreTie}          "score-ties"
        ├─► what_if_part(critical)    → WhatIf | None (fgd chosen)    "what-if"
        ├─► naive_range_part(critical) → (OtherOutcome, …)           "naive-range"
        └─► relaxation_part(critical) → {workload: (Relaxation, …)}   "relaxations"
    combined(critical, fragmentation=…, score_ties=…, what_if=…, naive_range=…,
             relaxations=…) → Evaluation

``evaluate`` is all of it: ``combined`` with every part is today's answer, the same
JSON byte for byte. Each part is a pure function of the ``CriticalPass`` (the
``Basis`` holds the cluster as planned, the scheduler state, the pending workloads
and the scheduler pass), independent of the others, so the parts may run in any
order or in parallel processes that each ran ``critical_pass`` on the same snapshot
(it is deterministic). For the Celery side: the evaluation task calls
``critical_pass`` and stores ``critical.evaluation`` (its ``to_json()`` has empty
relaxations and fragmentation, no score tie in the reasons, a null whatIf, no other
outcome in ``naiveRange``: pages say "being worked out" for each name in ``missing``,
never show those fields as answers); each deferred task calls ``critical_pass`` (or
reuses the one in memory), then its part, and stores ``combined(critical, <the parts
done so far>)``. The naive range of outcomes (``naiveRange.otherOutcomes`` and
``worstCasePerHour``) is the naive plan run again with cluster-autoscaler's random
choices made the other way: the critical pass plans with ``outcome_range=False`` and
``naive_range_part`` works the range out (``autoscaler.profiles.naive_range``).

Pure: no Django, no I/O, no clock (``at`` is passed in).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from recommender.engine import costs
from recommender.engine.autoscaler.caflags import CA_OBJECT, CaFlags, dra_note
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.nominated import of_outcomes
from recommender.engine.autoscaler.outcome_range import OtherOutcome
from recommender.engine.autoscaler.plan import (
    BLOCKED,
    JOINT,
    NAIVE,
    RUNS_NOW,
    NodeAddition,
    ScaleUpPlan,
    options_for,
    workload_gpu_milli,
    workload_mix,
)
from recommender.engine.autoscaler.profiles import (
    DEFAULT_PROFILE,
    naive_range,
    profile_named,
    uses_ca_flags,
)
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.autoscaler.template import with_member_capacity
from recommender.engine.evaluate import quotas, requests, score_notes
from recommender.engine.evaluate.classes import disagreements
from recommender.engine.evaluate.fragmentation import fragmentation
from recommender.engine.evaluate.groups import partial_groups
from recommender.engine.evaluate.heatmap import heatmap_cells
from recommender.engine.evaluate.patches import size_patch
from recommender.engine.evaluate.reality import model_gaps
from recommender.engine.evaluate.relaxations import Relaxation, relaxations
from recommender.engine.evaluate.results import (
    DEFERRED as DEFERRED,
    FRAGMENTATION as FRAGMENTATION,
    NAIVE_RANGE as NAIVE_RANGE,
    RELAXATIONS as RELAXATIONS,
    SCORE_TIES as SCORE_TIES,
    WHAT_IF as WHAT_IF,
    Evaluation as Evaluation,
    GroupTotal,
    IdleReservation,
    Recommendation as Recommendation,
    WorkloadEvaluation as WorkloadEvaluation,
)
from recommender.engine.evaluate.ties import ScoreTie, score_ties
from recommender.engine.evaluate.whatif import WhatIf, fragmentation_what_if
from recommender.engine.scheduler.placement import (
    PlacementOptions,
    PlacementResult,
    place,
    prepare,
)
from recommender.engine.scheduler.profiles import scheduler_release
from recommender.engine.scheduler.scores import policy_named
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload, pending_workloads, pod_gpu_milli
from reservations.idle import idle_reserved_gpus, unprovisioned_reserved_gpus
from topology.model.hardware import WHOLE_GPU_MILLI, Cluster, NodeGroup, UnsupportedField
from topology.model.money import DEFAULT_CURRENCY


def evaluate(
    cluster: Cluster,
    *,
    at: datetime,
    policy: str = "default",
    autoscaler: str = DEFAULT_PROFILE,
    ca_flags: CaFlags | None = None,
    currency: str = DEFAULT_CURRENCY,
) -> Evaluation:
    """Everything the dashboard, the API and the CLI show about one snapshot
    (``policy``: the scheduler's scoring profile; ``autoscaler``: which profile the
    naive side models; ValueError naming the valid ones if either is unknown;
    ``ca_flags``: the cluster-autoscaler command line it runs with, ``caflags``;
    ``currency``: the ISO 4217 code of the prices, what reasons write money in):
    the critical pass and every deferred part, combined."""
    critical = critical_pass(
        cluster,
        at=at,
        policy=policy,
        autoscaler=autoscaler,
        ca_flags=ca_flags,
        currency=currency,
    )
    return combined(
        critical,
        fragmentation=fragmentation_part(critical),
        score_ties=score_tie_part(critical),
        what_if=what_if_part(critical),
        naive_range=naive_range_part(critical),
        relaxations=relaxation_part(critical),
    )


@dataclass(frozen=True, slots=True)
class Basis:
    """What the critical pass worked out that the deferred parts start from (in memory
    only: the cluster as planned, the scheduler state after ``prepare``, the pending
    workloads, the scheduler pass and its options; what the naive plan was given: the
    workloads its autoscaler sees, its profile and flags)."""

    cluster: Cluster
    state: ClusterState
    pending: tuple[Workload, ...]
    options: PlacementOptions
    scheduler: PlacementResult
    at: datetime
    policy: str
    naive_pending: tuple[Workload, ...] = ()
    autoscaler: str = DEFAULT_PROFILE
    ca_settings: CaSettings | None = None
    currency: str = DEFAULT_CURRENCY


@dataclass(frozen=True, slots=True)
class CriticalPass:
    """The critical pass's ``Evaluation`` (every verdict, reason, plan, recommendation
    and total; the deferred parts not there yet, named in ``evaluation.missing``) and
    the ``Basis`` the deferred parts start from."""

    evaluation: Evaluation
    basis: Basis


def critical_pass(
    cluster: Cluster,
    *,
    at: datetime,
    policy: str = "default",
    autoscaler: str = DEFAULT_PROFILE,
    ca_flags: CaFlags | None = None,
    currency: str = DEFAULT_CURRENCY,
) -> CriticalPass:
    """What a verdict needs: the scheduler pass, the naive and joint plans, per
    workload its verdict, reasons, disagreements and model gap, the recommendations,
    totals and heatmap (``evaluate``'s arguments). The deferred parts
    (``DEFERRED``) are left out and named in ``missing``."""
    profile_named(autoscaler)  # an unknown name fails before any work
    # one template capacity for the naive and joint plans and the disagreement probes
    cluster = with_member_capacity(cluster)
    ca_flags, flag_notes = _flags_for(autoscaler, ca_flags or CaFlags())
    # the release NodeResourcesBalancedAllocation scores as: set, or the newest kubelet's
    policy, release = scheduler_release(policy, (n.kubelet_version for n in cluster.nodes))
    scoring = policy_named(policy)
    policy = scoring.name
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    waiting = quotas.quota_waiting(cluster, pending)
    pending, waiting, partial = quotas.partially_admitted(pending, waiting)
    options = options_for(policy, at, mix=workload_mix(pending))
    prepare(cluster, pending, state, options)  # every pass below starts from these scores
    scheduler = place(cluster, pending, state=state, options=options)
    diagnoses = {o.workload: o.diagnosis for o in scheduler.outcomes}
    seen, admitted = quotas.seen_by_autoscaler(pending, waiting), quotas.admitted(pending, waiting)
    served = requests.serving(cluster, pending)
    admitted = requests.not_held(admitted, served)
    naive = scale_up(
        cluster,
        seen,
        state=state,
        mode=NAIVE,
        at=at,
        policy=policy,
        autoscaler=autoscaler,
        scheduled=scheduler.outcomes,
        ca_settings=ca_flags.settings if ca_flags else None,
        outcome_range=False,  # naive_range_part
    )
    joint = scale_up(
        cluster,
        admitted,
        state=state,
        mode=JOINT,
        at=at,
        policy=policy,
        scheduled=scheduler.outcomes,
        currency=currency,
    )
    naive, joint = (quotas.with_waiting(cluster, plan, waiting) for plan in (naive, joint))
    naive, joint = (quotas.with_partial(plan, partial) for plan in (naive, joint))
    naive, joint = (
        requests.with_requests(plan, served, scheduler.outcomes) for plan in (naive, joint)
    )
    joint = requests.with_check_capacity(cluster, joint, pending)
    running = running_gang_milli(cluster)
    workloads = tuple(
        _workload_evaluation(cluster, w, naive, joint, diagnoses.get(w.key), at, policy, running)
        for w in sorted(pending, key=_name_order)
    )
    workloads = tuple(
        replace(w, disagreements=quotas.with_quota_class(w.disagreements, w.naive, w.key, waiting))
        for w in workloads
    )
    gaps = model_gaps(cluster, (w for w in pending if joint.outcomes[w.key].verdict == RUNS_NOW))
    partial = partial_groups(cluster, scheduler.outcomes)
    workloads = tuple(
        replace(w, model_gap=gaps.get(w.key), group_note=partial.get(w.key)) for w in workloads
    )
    recommended = recommendations(joint.additions)
    evaluation = Evaluation(
        cluster_name=cluster.name,
        at=at,
        nodes=len(cluster.nodes),
        gpus=cluster.gpu_count,
        gpus_allocated=_allocated_gpus(cluster, state),
        workloads=workloads,
        recommendations=recommended,
        idle_reservations=_idle_reservations(cluster, state, at),
        naive_plan=naive,
        joint_plan=joint,
        heatmap=heatmap_cells(cluster, state),
        fragmentation_nodes={},
        fragmentation_domains={},
        node_group_sizes={g.name: group_size(g) for g in cluster.node_groups},
        group_totals=group_totals(cluster, recommended),
        ignored=dict(sorted(cluster.ignored.items())),
        unsupported=(*score_notes.for_profile(cluster.unsupported, scoring), *flag_notes),
        autoscaler=autoscaler,
        autoscaler_flags=ca_flags,
        scheduler_profile=policy,
        scheduler_release=release,
        missing=frozenset(DEFERRED),
        currency=currency,
    )
    basis = Basis(
        cluster,
        state,
        tuple(pending),
        options,
        scheduler,
        at,
        policy,
        naive_pending=tuple(seen),
        autoscaler=autoscaler,
        ca_settings=ca_flags.settings if ca_flags else None,
        currency=currency,
    )
    return CriticalPass(evaluation, basis)


def fragmentation_part(critical: CriticalPass) -> tuple[dict[str, int], dict[str, int]]:
    """Deferred part ``fragmentation``: free-but-unusable GPU milli for the pending mix,
    per node and per domain (``fragmentation.fragmentation``)."""
    b = critical.basis
    return fragmentation(b.cluster, b.state, b.pending)


def score_tie_part(critical: CriticalPass) -> dict[str, ScoreTie]:
    """Deferred part ``score-ties``: per workload whose fate rests on an exact score
    tie, the tie (``ties.score_ties``: the scheduler pass again with other seeds)."""
    b = critical.basis
    return score_ties(b.cluster, b.pending, b.state, b.options, b.scheduler)


def what_if_part(critical: CriticalPass) -> WhatIf | None:
    """Deferred part ``what-if``: the same scheduler pass under fgd
    (``whatif.fragmentation_what_if``; None when fgd is the chosen profile)."""
    b = critical.basis
    return fragmentation_what_if(b.cluster, b.pending, b.state, b.scheduler, b.options, b.policy)


def naive_range_part(critical: CriticalPass) -> tuple[OtherOutcome, ...]:
    """Deferred part ``naive-range``: what cluster-autoscaler may add instead of the
    naive plan (``naiveRange``: ``profiles.naive_range``, the naive plan's arguments)."""
    b = critical.basis
    return naive_range(
        b.autoscaler,
        b.cluster,
        b.naive_pending,
        state=b.state,
        at=b.at,
        policy=b.policy,
        nominated=of_outcomes(b.scheduler.outcomes),
        ca_settings=b.ca_settings,
    )


def relaxation_part(critical: CriticalPass) -> dict[str, tuple[Relaxation, ...]]:
    """Deferred part ``relaxations``: per blocked workload, what would unblock it
    (``relaxations.relaxations``, each verified by planning it again)."""
    b = critical.basis
    blocked = [w.key for w in critical.evaluation.workloads if w.joint.verdict == BLOCKED]
    return relaxations(
        b.cluster, b.state, b.pending, blocked, at=b.at, policy=b.policy, currency=b.currency
    )


NOT_GIVEN: Any = object()  # ``combined``'s "this part is not given" (None is a what-if)


def combined(
    critical: CriticalPass,
    *,
    fragmentation: tuple[Mapping[str, int], Mapping[str, int]] | None = None,
    score_ties: Mapping[str, ScoreTie] | None = None,
    what_if: WhatIf | None = NOT_GIVEN,
    naive_range: tuple[OtherOutcome, ...] | None = None,
    relaxations: Mapping[str, tuple[Relaxation, ...]] | None = None,
) -> Evaluation:
    """The critical pass's evaluation with the deferred parts given (a part left out
    stays in ``missing``); with all of them, the whole ``evaluate`` answer."""
    evaluation = critical.evaluation
    missing = set(evaluation.missing)
    workloads = evaluation.workloads
    if score_ties is not None:
        workloads = tuple(replace(w, score_tie=score_ties.get(w.key)) for w in workloads)
        missing.discard(SCORE_TIES)
    if relaxations is not None:
        workloads = tuple(replace(w, relaxations=relaxations.get(w.key, ())) for w in workloads)
        missing.discard(RELAXATIONS)
    found = evaluation.what_if
    if what_if is not NOT_GIVEN:
        found = what_if
        missing.discard(WHAT_IF)
    per_node, per_domain = evaluation.fragmentation_nodes, evaluation.fragmentation_domains
    if fragmentation is not None:
        per_node, per_domain = fragmentation
        missing.discard(FRAGMENTATION)
    naive_plan = evaluation.naive_plan
    if naive_range is not None:
        naive_plan = replace(naive_plan, other_outcomes=naive_range)
        missing.discard(NAIVE_RANGE)
    return replace(
        evaluation,
        naive_plan=naive_plan,
        workloads=workloads,
        what_if=found,
        fragmentation_nodes=per_node,
        fragmentation_domains=per_domain,
        missing=frozenset(missing),
    )


def _flags_for(
    autoscaler: str, flags: CaFlags
) -> tuple[CaFlags | None, tuple[UnsupportedField, ...]]:
    """The flags a cluster-autoscaler profile runs with and what of them is not
    modelled; a profile that reads no cluster-autoscaler flags gets none, said so
    when some were given."""
    if uses_ca_flags(autoscaler):
        version = autoscaler.partition(":")[2] or CaSettings().version
        dra = dra_note(flags, CaSettings(version=version))
        return flags, (*flags.unsupported, *([dra] if dra else []))
    if not flags.args and not flags.settings.priorities:
        return None, ()
    note = UnsupportedField(
        CA_OBJECT,
        "args",
        f"cluster-autoscaler flags given, but the {autoscaler} profile reads none",
        blocking=False,
    )
    return None, (note,)


def group_size(group: NodeGroup) -> int:
    """The size a recommendation's patch starts from: the registered members, or the
    autoscaler's target size when the group is already adding nodes (requested, not
    registered: the joint plan counted them as upcoming before buying, so a patch from
    the registered count would buy nothing beyond them)."""
    target = group.autoscaler.target_size if group.autoscaler else None
    return max(group.current_size, target or 0)


def group_totals(
    cluster: Cluster, recommended: tuple[Recommendation, ...]
) -> tuple[GroupTotal, ...]:
    """Per node group with recommendations: their nodes added up, and the size patch.

    Cards paid by a reservation are left out: their nodes are started in the
    reservation (``recommender.actions.reservation``), never by a size change, which
    would buy them on-demand on top of what the reservation pays for."""
    groups = {g.name: g for g in cluster.node_groups}
    bought = [r for r in recommended if r.reservation is None]
    totals = []
    for name in sorted({r.node_group for r in bought}):
        mine = [r for r in bought if r.node_group == name]
        group = groups.get(name)
        current = group_size(group) if group else 0
        added = sum(r.count for r in mine)
        bounds = (group.min_size, group.max_size) if group else (None, None)
        totals.append(
            GroupTotal(
                node_group=name,
                cards=len(mine),
                current_size=current,
                add_nodes=added,
                cost_per_hour=costs.round_money(sum(r.cost_per_hour for r in mine)),
                patch=(
                    size_patch(name, current + added, *bounds)
                    if group is None or group.autoscaler is None
                    else None
                ),
            )
        )
    return tuple(totals)


def _name_order(workload: Workload) -> tuple[str, str]:
    namespace, _, name = workload.key.partition("/")
    return (namespace, name)


def _workload_evaluation(
    cluster: Cluster,
    workload: Workload,
    naive: ScaleUpPlan,
    joint: ScaleUpPlan,
    diagnosis: Any,
    at: datetime,
    policy: str,
    running: Mapping[str, int],
) -> WorkloadEvaluation:
    naive_plan, joint_plan = naive.outcomes[workload.key], joint.outcomes[workload.key]
    return WorkloadEvaluation(
        key=workload.key,
        kind=workload.kind,
        pods=len(workload.pods),
        gpu_milli=workload_gpu_milli(workload),
        naive=naive_plan,
        joint=joint_plan,
        disagreements=disagreements(cluster, workload, naive_plan, joint_plan, at, policy),
        diagnosis=diagnosis.summary if diagnosis is not None else "schedulable now",
        gang_reason=diagnosis.gang_reason if diagnosis is not None else None,
        waiting_gpu_hours=waiting_gpu_hours(workload, at),
        idle_member_gpus=idle_member_gpus(cluster, workload, running),
    )


def waiting_gpu_hours(workload: Workload, at: datetime) -> float | None:
    """GPU-hours the workload's pending pods have waited since their creation.

    None when any pod's creation time is unknown (0): unknown is not zero.
    """
    if any(p.arrival <= 0 for p in workload.pods):
        return None
    now = at.timestamp()
    milli_seconds = sum(pod_gpu_milli(p) * max(0.0, now - p.arrival) for p in workload.pods)
    return round(milli_seconds / WHOLE_GPU_MILLI / 3600, 2)


def idle_member_gpus(
    cluster: Cluster, workload: Workload, running: Mapping[str, int] | None = None
) -> float:
    """GPUs held by a gang's members that already run while the rest cannot start
    (``running``: ``running_gang_milli(cluster)``, when the caller asks for many)."""
    if workload.kind != "gang":
        return 0
    held = running_gang_milli(cluster) if running is None else running
    return held.get(workload.key, 0) / WHOLE_GPU_MILLI


def running_gang_milli(cluster: Cluster) -> dict[str, int]:
    """GPU milli held by each gang's running members (one pass over the pods)."""
    held: dict[str, int] = {}
    for pod in cluster.bound_pods():
        if pod.gang is not None:
            held[pod.gang] = held.get(pod.gang, 0) + pod_gpu_milli(pod)
    return held


def _allocated_gpus(cluster: Cluster, state: ClusterState) -> int:
    """GPUs any bound pod holds a share or partition of."""
    return sum(
        1 for node in cluster.nodes for cell in state.gpu_cells(node.name) if cell.allocated_milli
    )


def _idle_reservations(
    cluster: Cluster, state: ClusterState, at: datetime
) -> tuple[IdleReservation, ...]:
    by_name = {r.name: r for r in cluster.reservations}
    return tuple(
        IdleReservation(
            name,
            reserved,
            idle,
            costs.reserved_gpus_cost_per_hour(idle, by_name[name].price_per_gpu_hour),
            unprovisioned_reserved_gpus(cluster, by_name[name]),
        )
        for name, (reserved, idle) in sorted(idle_reserved_gpus(cluster, state, at).items())
    )


def recommendations(additions: tuple[NodeAddition, ...]) -> tuple[Recommendation, ...]:
    """Joint additions merged per (group, placement, reservation), sorted for stable output."""
    merged: dict[tuple[str, tuple[tuple[str, str], ...], str], list[NodeAddition]] = {}
    for addition in additions:
        key = (
            addition.node_group,
            tuple(sorted(addition.placement.items())),
            addition.reservation or "",
        )
        merged.setdefault(key, []).append(addition)
    result = []
    for (group, placement, reservation), parts in sorted(merged.items()):
        result.append(
            Recommendation(
                node_group=group,
                count=sum(p.count for p in parts),
                placement=dict(placement),
                cost_per_hour=costs.round_money(sum(p.cost_per_hour for p in parts)),
                workloads=tuple(sorted({w for p in parts for w in p.workloads})),
                reservation=reservation or None,
            )
        )
    return tuple(result)
