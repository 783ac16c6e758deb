"""ProvisioningRequests in the evaluation: capacity already asked for is not bought again.

Pure. A pending pod serves the request its annotation
``autoscaling.x-k8s.io/consume-provisioning-request`` names in its namespace
(``Pod.provisioning_request``; kubernetes/autoscaler
``cluster-autoscaler/provisioningrequest/pods/pods.go``). For the workload such pods make:

- request *pending* (no ``Provisioned=True``, no ``Failed=True``): cluster-autoscaler
  scales up for its pods in a coming loop (``processors/provreq/injector.go``), so its
  capacity is upcoming, as a Karpenter NodeClaim's node is: the joint plan buys nothing
  for the workload (it is not given to it, as Kueue's own requests are not recommended
  twice, ``recommender.actions.provisioning.kueue_provisioned``); its verdict is
  ``runs_after_scale_up`` naming the request, or ``runs_now`` where the scheduler places
  it already;
- request *booked* (``Provisioned=True``, not ``Failed``/``BookingExpired``): its
  capacity is found or bought and held for these pods (``processors/provreq/
  processor.go`` ``bookCapacity``): nothing is bought either, same verdicts;
- request *failed* or *booking expired*: cluster-autoscaler does no more for it
  (``injector.go`` skips ``Failed``/``Provisioned`` requests): the workload is planned as
  any other, the request's conditions said in its reasons.

The naive side is cluster-autoscaler's own model (``autoscaler.provisioning``) and is
not changed here; every workload a request serves gets the request's conditions in
its reasons on both sides.

A workload whose Kueue ClusterQueue runs a ProvisioningRequest admission check of class
``check-capacity.autoscaling.x-k8s.io`` (``with_check_capacity``) waits where the joint
plan needs new nodes for it: Kueue admits it only once its request is
``Provisioned=True``, and cluster-autoscaler's check-capacity class only books room
that exists (``provisioningrequest/checkcapacity/provisioningclass.go``
``checkCapacity``: ``Provisioned=False CapacityIsNotFound``, "CA will try to find it
later"), never scaling up. Its joint verdict is ``waiting``, its reason naming the
nodes that would provision it and what would buy them; the recommendation stays (it is
that capacity).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from recommender.engine.autoscaler.plan import (
    RUNS_AFTER_SCALE_UP,
    RUNS_NOW,
    ScaleUpPlan,
    WorkloadPlan,
)
from recommender.engine.autoscaler.provisioning import (
    BEST_EFFORT_ATOMIC,
    CHECK_CAPACITY,
    kueue_check_capacity,
)
from recommender.engine.scheduler.admission import WAITING
from recommender.engine.scheduler.placement import WorkloadOutcome
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Cluster, ProvisioningRequest


def serving(cluster: Cluster, pending: Iterable[Workload]) -> dict[str, ProvisioningRequest]:
    """Workload key → the ProvisioningRequest its pods consume (the first pod naming one
    that exists; a name with no such request serves nothing here)."""
    requests = {(r.namespace, r.name): r for r in cluster.provisioning_requests}
    if not requests:
        return {}
    served = {}
    for workload in pending:
        for pod in workload.pods:
            if pod.provisioning_request is None:
                continue
            request = requests.get((pod.namespace, pod.provisioning_request[0]))
            if request is not None:
                served[workload.key] = request
                break
    return served


def not_held(
    pending: Sequence[Workload], served: Mapping[str, ProvisioningRequest]
) -> Sequence[Workload]:
    """What the joint plan may buy for: all but the workloads a live request serves."""
    held = {key for key, request in served.items() if request.live}
    if not held:
        return pending
    return [w for w in pending if w.key not in held]


def with_requests(
    plan: ScaleUpPlan,
    served: Mapping[str, ProvisioningRequest],
    scheduled: Iterable[WorkloadOutcome],
) -> ScaleUpPlan:
    """The plan with an outcome for each workload a live request holds, and every served
    workload's reasons naming its request."""
    if not served:
        return plan
    placed = {o.workload for o in scheduled if o.placed}
    outcomes = dict(plan.outcomes)
    for key, request in served.items():
        outcome = outcomes.get(key)
        if outcome is None:
            outcomes[key] = held_outcome(key, request, key in placed)
        else:
            outcomes[key] = replace(outcome, reasons=(*outcome.reasons, request_reason(request)))
    return replace(plan, outcomes=outcomes)


def held_outcome(key: str, request: ProvisioningRequest, placed_now: bool) -> WorkloadPlan:
    if placed_now:
        return WorkloadPlan(key, RUNS_NOW, reasons=(request_reason(request),))
    return WorkloadPlan(
        key, RUNS_AFTER_SCALE_UP, reasons=(request_reason(request),), schedulable_after=True
    )


def request_reason(request: ProvisioningRequest) -> str:
    """What the request means for the workload, then the request as read."""
    if request.state == "pending":
        meaning = (
            "its capacity is asked for already (cluster-autoscaler scales up for the "
            "request's pods): counted as upcoming, nothing bought again"
        )
    elif request.state == "booked":
        meaning = "its capacity is provisioned and booked for these pods: nothing bought again"
    else:
        meaning = (
            f"the request is {request.state}: cluster-autoscaler does no more for it, "
            "so the workload is planned as any other"
        )
    if not request.supported:
        meaning += (
            f"; class {request.class_name} is not one upstream cluster-autoscaler "
            "provisions (another provisioner may)"
        )
    return f"{request.describe()}: {meaning}"


def with_check_capacity(
    cluster: Cluster, plan: ScaleUpPlan, pending: Iterable[Workload]
) -> ScaleUpPlan:
    """The joint plan with ``waiting`` for each workload of a Kueue check-capacity
    admission check that needs new nodes: nothing provisions them while the check asks
    with that class. The plan's additions are kept: they are what would provision it."""
    checks = kueue_check_capacity(cluster)  # pod key -> admission check
    if not checks:
        return plan
    outcomes = dict(plan.outcomes)
    karpenter = {
        g.name
        for g in cluster.node_groups
        if g.autoscaler is not None and g.autoscaler.kind == "karpenter"
    }
    for workload in pending:
        check = next((checks[p.key] for p in workload.pods if p.key in checks), None)
        outcome = outcomes.get(workload.key)
        if check is None or outcome is None or not outcome.add_nodes:
            continue
        by_karpenter = set(outcome.add_nodes) <= karpenter
        outcomes[workload.key] = WorkloadPlan(
            workload.key,
            WAITING,
            reasons=(check_capacity_reason(check, outcome, by_karpenter=by_karpenter),),
        )
    return replace(plan, outcomes=outcomes)


def check_capacity_reason(check: str, outcome: WorkloadPlan, *, by_karpenter: bool) -> str:
    """Why the workload waits, then the joint plan's nodes for it (what would provision
    it) and what would buy them. Karpenter acts on no ProvisioningRequest (an API of
    cluster-autoscaler's: kueue ``site/content/en/docs/admission-check-controllers/
    provisioning.md`` asks for a cluster-autoscaler that supports it); it launches nodes
    for pods, which Kueue creates only once every admission check has passed."""
    if by_karpenter:
        bought = (
            "launched by Karpenter for the workload's pods once its ClusterQueue admits "
            "it without this check (Karpenter acts on no ProvisioningRequest)"
        )
    else:
        bought = (
            "bought by cluster-autoscaler once the check's ProvisioningRequestConfig asks "
            f"with class {BEST_EFFORT_ATOMIC}, or added to the group by hand"
        )
    return (
        f"Kueue's admission check {check} asks with a ProvisioningRequest of class "
        f"{CHECK_CAPACITY}: cluster-autoscaler only books room that exists and never "
        "scales up for it, so Kueue keeps the workload waiting while the capacity is "
        f"missing. What would provision it: {'; '.join(outcome.reasons)}, {bought}"
    )
