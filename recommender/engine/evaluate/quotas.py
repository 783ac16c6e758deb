"""Quota-waiting work in the evaluation: who the autoscalers plan for, and the verdict.

Pure. ``topology.kube.kueue.quotas.quota_waiting`` says which pending workloads wait for
queue quota. Here:

- the joint plan never buys for them: they are not given to it, and their
  verdict is ``waiting`` with the queue's reason;
- the naive autoscaler buys for those whose pods it sees (Volcano, KAI: pods
  Pending and Unschedulable) exactly as cluster-autoscaler does
  (kubernetes/autoscaler#9828): the nodes it adds are stranded, the pods stay
  in the queue; it does not see Kueue's (job suspended, pods gated);
- a workload naive buys for while it waits for quota gets the ``quota``
  disagreement class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from recommender.engine import costs
from recommender.engine.autoscaler.plan import ScaleUpPlan, WorkloadPlan
from recommender.engine.scheduler.admission import WAITING
from recommender.engine.scheduler.workloads import Workload
from topology.kube.kueue.quotas import QuotaWait, quota_waiting
from topology.model.hardware import Cluster, Pod

QUOTA_CLASS = "quota"

__all__ = [
    "WAITING",
    "admitted",
    "partially_admitted",
    "quota_waiting",
    "seen_by_autoscaler",
    "with_quota_class",
    "with_partial",
    "with_waiting",
]


def partially_admitted(
    pending: Sequence[Workload], waiting: Mapping[str, QuotaWait]
) -> tuple[tuple[Workload, ...], dict[str, QuotaWait], dict[str, str]]:
    """Kueue partial admission: a workload admitted with fewer pods (``QuotaWait.admitted``)
    is planned and scheduled with those pods only (Kueue lowers the Job's parallelism,
    the rest are never created), and no longer waits; one admitted on a later flavor
    (``QuotaWait.flavor``, flavorFungibility) has that flavor's nodeSelector and
    tolerations. Returns the pending workloads, the
    waits left, and per partly admitted workload what Kueue did."""
    partial = {
        key: wait
        for key, wait in waiting.items()
        if wait.admitted is not None or wait.flavor is not None
    }
    if not partial:
        return tuple(pending), dict(waiting), {}
    reduced = []
    for workload in pending:
        wait = partial.get(workload.key)
        if wait is not None and wait.admitted is not None:
            count = wait.admitted
            workload = replace(
                workload,
                pods=workload.pods[:count],
                min_member=min(workload.min_member, count),
                least_gpu_milli=None,  # worked out for all the pods: the reduced ones stand
            )
        if wait is not None and wait.flavor is not None:
            workload = replace(
                workload, pods=tuple(on_flavor(p, wait.flavor.name) for p in workload.pods)
            )
        reduced.append(workload)
    left = {key: wait for key, wait in waiting.items() if key not in partial}
    return tuple(reduced), left, {key: wait.reason for key, wait in partial.items()}


def on_flavor(pod: Pod, name: str) -> Pod:
    """The pod admitted on flavor ``name`` (its nodeSelector and tolerations then)."""
    option = next((o for o in pod.flavor_options if o.name == name), None)
    if option is None:
        return pod
    return replace(
        pod,
        node_selector=dict(option.node_selector),
        tolerations=option.tolerations,
        quota_flavor=name,
    )


def with_partial(plan: ScaleUpPlan, reasons: Mapping[str, str]) -> ScaleUpPlan:
    """Each partly admitted workload's outcome says what Kueue admitted."""
    if not reasons:
        return plan
    outcomes = dict(plan.outcomes)
    for key, reason in reasons.items():
        outcome = outcomes.get(key)
        if outcome is not None:
            outcomes[key] = replace(outcome, reasons=(reason, *outcome.reasons))
    return replace(plan, outcomes=outcomes)


def admitted(pending: Sequence[Workload], waiting: Mapping[str, QuotaWait]) -> Sequence[Workload]:
    """What the joint plan may plan for: everything not held by a queue."""
    if not waiting:
        return pending
    return [w for w in pending if w.key not in waiting]


def seen_by_autoscaler(
    pending: Sequence[Workload], waiting: Mapping[str, QuotaWait]
) -> Sequence[Workload]:
    """What cluster-autoscaler sees: all but the pods a queue manager keeps gated."""
    if not waiting:
        return pending
    return [w for w in pending if w.key not in waiting or waiting[w.key].autoscaler_sees_pods]


def with_waiting(
    cluster: Cluster, plan: ScaleUpPlan, waiting: Mapping[str, QuotaWait]
) -> ScaleUpPlan:
    """The plan with a ``waiting`` outcome for each held workload it did not plan, and
    every GPU it bought for a held workload counted stranded (the queue keeps it off)."""
    if not waiting:
        return plan
    outcomes = dict(plan.outcomes)
    gpus_per_node = {g.name: g.template.gpu_count for g in cluster.node_groups}
    stranded_gpus, stranded_cost = plan.stranded_gpus, plan.stranded_per_hour
    for key, wait in waiting.items():
        outcome = outcomes.get(key)
        if outcome is None:
            outcomes[key] = WorkloadPlan(key, WAITING, reasons=(wait.reason,))
            continue
        if outcome.add_nodes and outcome.stranded_gpus == 0:
            gpus = sum(n * gpus_per_node.get(g, 0) for g, n in outcome.add_nodes.items())
            outcomes[key] = replace(outcome, stranded_gpus=gpus)
            stranded_gpus += gpus
            stranded_cost += sum(a.cost_per_hour for a in plan.additions if a.workloads == (key,))
    return replace(
        plan,
        outcomes=outcomes,
        stranded_gpus=stranded_gpus,
        stranded_per_hour=costs.round_money(stranded_cost),
    )


def with_quota_class(
    classes: tuple[str, ...], naive: WorkloadPlan, key: str, waiting: Mapping[str, QuotaWait]
) -> tuple[str, ...]:
    """``quota`` when naive buys nodes for a workload that waits for its queue."""
    if key in waiting and naive.add_nodes:
        return (*classes, QUOTA_CLASS)
    return classes
