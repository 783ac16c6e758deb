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
from typing import Protocol

from recommender.engine.autoscaler.estimator import Estimate
from recommender.engine.autoscaler.expander import Option, best_option
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.ledger import NaiveLedger
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Node, NodeGroup, Pod


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
    planner: NaivePlanner, name: str, klass: str, pods: Sequence[tuple[Workload, Pod]]
) -> None:
    """One request's loop: book or buy for all its pods, or say why not (nothing booked)."""
    saved = planner.state.copy()
    left = planner.filter_out_schedulable(list(pods))
    if klass == CHECK_CAPACITY:
        if left:
            _undo(planner, saved)
            _refuse(
                planner,
                pods,
                f"check-capacity ProvisioningRequest {name}: {len(left)} of {len(pods)} pods "
                "find no room on existing or upcoming nodes, and this class never scales up",
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
