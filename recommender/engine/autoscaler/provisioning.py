"""cluster-autoscaler's ProvisioningRequest classes, for pods that consume one.

Pods annotated ``autoscaling.x-k8s.io/consume-provisioning-request`` are
taken out of the regular scale-up (``processors/provreq`` pods filter) and
provisioned through their request, one request per loop
(``provisioningrequest/orchestrator/wrapper_orchestrator.go``). The model
takes the consuming pods as the request's podSets (the ProvisioningRequest
object is read for its state, ``recommender.engine.evaluate.requests``, not for its
PodTemplates: partly).

- ``check-capacity.autoscaling.x-k8s.io``
  (``provisioningrequest/checkcapacity/provisioningclass.go`` ``Provision``):
  books room on existing and upcoming nodes if ALL the pods fit there, never
  scales up; otherwise nothing is booked.
- ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``
  (``provisioningrequest/besteffortatomic/provisioning_class.go``
  ``Provision``): pods that fit existing nodes are filtered out, then one
  ``ScaleUp`` with ``allOrNothing``: only options taking every remaining pod
  count, and a capped option fails (``orchestrator.go`` ``ScaleUp``); if no
  group can, nothing is bought and nothing is booked.
- any other class: cluster-autoscaler provisions none
  (``provisioningrequest/supported_classes.go``): the pods trigger nothing.

All of this only with ``--enable-provisioning-requests=true``; upstream's default is
false (``config/flags/flags.go``), and then ``main.go`` adds neither the
ProvisioningRequest pods filter nor the wrapper orchestrator: the consuming pods
are ordinary pending pods, scaled up for one by one (``requests_off`` says so on the
workload).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from recommender.engine.autoscaler.estimator import Estimate
from recommender.engine.autoscaler.expander import Option, best_option
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.ledger import NaiveLedger
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.kube.kueue.queues import pod_queue
from topology.model.autoscalerstate import PENDING
from topology.model.hardware import Cluster, Node, NodeGroup, Pod


class NaivePlanner(Protocol):
    """What a request's loop uses of ``cluster_autoscaler.NaivePlanner``."""

    state: ClusterState
    ledger: NaiveLedger
    groups: tuple[NodeGroup, ...]
    settings: CaSettings
    rng: random.Random

    def filter_out_schedulable(
        self, pods: list[tuple[Workload, Pod]]
    ) -> list[tuple[Workload, Pod]]: ...
    def room(self, group: NodeGroup) -> int: ...
    def template(self, group: NodeGroup) -> Node: ...
    def refusal(self, group: NodeGroup, template: Node, pod: Pod) -> str | None: ...
    def estimate_for(self, template: Node, pods: Sequence[Pod], limit: int) -> Estimate: ...
    def buy(self, option: Option, found: Estimate, owners: Mapping[str, Workload]) -> None: ...
    def refresh(self) -> None: ...
    def restore(self, saved: ClusterState) -> None: ...


CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
BEST_EFFORT_ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"


def provision(
    planner: NaivePlanner,
    name: str,
    klass: str,
    pods: Sequence[tuple[Workload, Pod]],
    injected: Sequence[Pod] = (),
) -> None:
    """One request's loop: book or buy for all its pods, or say why not (nothing booked).
    ``pods``: the consuming pods; ``injected``: the request's own pods, its podSets'
    count of each PodTemplate (``processors/provreq/injector.go``
    ``GetPodsFromNextRequest``), which cluster-autoscaler schedules and scales up for
    in their place; none (a PodTemplate not read): the consuming pods stand for them."""
    saved = planner.state.copy()
    owner = pods[0][0]
    simulated = [(owner, pod) for pod in injected] if injected else list(pods)
    left = planner.filter_out_schedulable(simulated)
    if klass == CHECK_CAPACITY:
        if left:
            _undo(planner, saved)
            _refuse(
                planner,
                pods,
                f"check-capacity ProvisioningRequest {name}: {len(left)} of {len(simulated)} "
                "pods find no room on existing or upcoming nodes, and this class never scales "
                "up",
            )
        return
    if klass != BEST_EFFORT_ATOMIC:
        _undo(planner, saved)
        _refuse(
            planner,
            pods,
            f"ProvisioningRequest {name} has class {klass or '(none)'}: not a class "
            "cluster-autoscaler provisions, so its pods trigger nothing",
        )
        return
    if not left:
        return
    chosen = _atomic_option(planner, left)
    if chosen is None:
        _undo(planner, saved)
        _refuse(
            planner,
            pods,
            f"best-effort-atomic-scale-up ProvisioningRequest {name}: no node group takes "
            f"all {len(left)} pods that do not fit now in one scale-up, so none is bought",
        )
        return
    for workload, _ in pods:
        planner.ledger.needs_new[workload.key] = True
    planner.buy(*chosen)
    planner.refresh()
    planner.filter_out_schedulable(left)


def _atomic_option(
    planner: NaivePlanner, left: list[tuple[Workload, Pod]]
) -> tuple[Option, Estimate, dict[str, Workload]] | None:
    """``ScaleUp(..., allOrNothing=true)``: options that take every pod, uncapped."""
    pods = [pod for _, pod in left]
    options: list[Option] = []
    estimates: dict[str, Estimate] = {}
    for group in planner.groups:
        room = planner.room(group)
        template = planner.template(group)
        if room <= 0 or any(planner.refusal(group, template, p) is not None for p in pods):
            continue
        found = planner.estimate_for(template, pods, room)
        if len(found.pods) == len(pods):
            options.append(Option(group, found.node_count, found.pods, template))
            estimates[group.name] = found
    settings = planner.settings
    chosen = best_option(
        options,
        settings.expanders,
        planner.rng,
        settings.priorities,
        cluster_nodes=len(planner.state.node_names()),
        gpu_label=settings.gpu_label,
    )
    if chosen is None:
        return None
    return chosen, estimates[chosen.group.name], {p.key: w for w, p in left}


def _undo(planner: NaivePlanner, saved: ClusterState) -> None:
    planner.restore(saved)


def _refuse(planner: NaivePlanner, pods: Sequence[tuple[Workload, Pod]], reason: str) -> None:
    for workload in dict.fromkeys(w.key for w, _ in pods):
        planner.ledger.needs_new[workload] = True
        planner.ledger.reasons[workload].append(reason)


def injected_pods(cluster: Cluster, namespace: str, name: str) -> list[Pod]:
    """The pods cluster-autoscaler injects for a pending request: each pod set's
    PodTemplate ``count`` times, consuming the request (``provisioningrequest/pods/
    pods.go`` ``PodsForProvisioningRequest``); none where the request or a PodTemplate is
    not read, or the request is not pending (``injector.go`` skips ``Provisioned`` and
    ``Failed`` requests)."""
    read = next(
        (r for r in cluster.provisioning_requests if (r.namespace, r.name) == (namespace, name)),
        None,
    )
    if read is None or read.state != PENDING:
        return []
    templates = [cluster.pod_templates.get(f"{namespace}/{s.template}") for s in read.pod_sets]
    if any(t is None for t in templates):
        return []
    return [
        replace(template, name=f"{name}-{index}-{i}", provisioning_request=(name, read.class_name))
        for index, (template, pod_set) in enumerate(zip(templates, read.pod_sets, strict=True))
        if template is not None
        for i in range(pod_set.count)
    ]


def request_of(cluster: Cluster, pod: Pod, consumed: tuple[str, str]) -> tuple[str, str, str]:
    """(namespace, name, class) of the request a pod consumes: the class is the
    ProvisioningRequest object's ``spec.provisioningClassName`` where it is read (the
    orchestrator provisions the request, ``provisioningrequest/orchestrator/
    orchestrator.go`` ``ScaleUp``, each class checking ``pr.Spec.ProvisioningClassName``),
    else the pod's class annotation."""
    name, annotated = consumed
    read = next(
        (
            r
            for r in cluster.provisioning_requests
            if (r.namespace, r.name) == (pod.namespace, name)
        ),
        None,
    )
    return (pod.namespace, name, read.class_name if read is not None else annotated)


def kueue_check_capacity(cluster: Cluster) -> dict[str, str]:
    """Pending pod key → the Kueue admission check (controller
    ``kueue.x-k8s.io/provisioning-request``) of its ClusterQueue whose
    ProvisioningRequestConfig has class check-capacity. Kueue keeps the job suspended
    and asks through a ProvisioningRequest of that class for the workload's pod sets
    (kubernetes-sigs/kueue ``pkg/controller/admissionchecks/provisioning``):
    cluster-autoscaler then books room if all of them fit and never scales up; without
    ``--enable-provisioning-requests`` nothing answers it at all. Either way nothing
    is bought for these pods."""
    checks = {
        q.name: q.provisioning_check
        for q in cluster.queues
        if q.provisioning_check and q.provisioning_class == CHECK_CAPACITY
    }
    if not checks:
        return {}
    gangs = {g.key: g for g in cluster.gangs}
    local = {name: q.name for q in cluster.queues for name in q.local_queues}
    found = {}
    for pod in cluster.pending_pods():
        check = checks.get(pod_queue(pod, gangs, local) or "")
        if check is not None:
            found[pod.key] = check
    return found


def kueue_request(pod: Pod, check: str) -> tuple[str, str, str]:
    """The request key (namespace, what it is called in reasons, class) of the
    ProvisioningRequest Kueue creates for a workload's check-capacity check."""
    return (pod.namespace, f"of Kueue's admission check {check}", CHECK_CAPACITY)


def unanswered(ledger: NaiveLedger, workload: Workload, check: str) -> None:
    """A Kueue check-capacity workload where cluster-autoscaler reads no
    ProvisioningRequests: nothing answers Kueue's, the job stays suspended."""
    reason = (
        f"Kueue's admission check {check} asks with a check-capacity ProvisioningRequest, "
        "but cluster-autoscaler runs without --enable-provisioning-requests (upstream "
        "default false): nothing answers it, Kueue keeps the job suspended and nothing is "
        "bought (that class never scales up anyway)"
    )
    ledger.needs_new[workload.key] = True
    if reason not in ledger.reasons[workload.key]:
        ledger.reasons[workload.key].append(reason)


REQUESTS_OFF_NOTE = (
    "its pods consume a ProvisioningRequest, but cluster-autoscaler runs without "
    "--enable-provisioning-requests (upstream default false): it scales up for them as "
    "ordinary pods, not all or nothing"
)


def requests_off(ledger: NaiveLedger, workload: Workload, pod: Pod) -> None:
    """A consuming pod with ProvisioningRequests off: said once on its workload."""
    if pod.provisioning_request is None:
        return
    notes = ledger.notes.setdefault(workload.key, [])
    if REQUESTS_OFF_NOTE not in notes:
        notes.append(REQUESTS_OFF_NOTE)
