"""What a placement call says of each workload: where its pods bind, or why not.

Kept apart from ``placement`` so that the modules it drives (``window``) build the same
records without importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topology.model.hardware import Pod

from .diagnosis import Diagnosis
from .pick import Choice
from .records import Allocation


@dataclass(frozen=True, slots=True)
class Binding:
    pod: str
    node: str
    devices: tuple[str, ...]
    gpu_milli: int
    # what the pod takes there (to put it on another state: ``ClusterState.apply``)
    allocation: Allocation | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class WorkloadOutcome:
    workload: str
    placed: bool
    bindings: tuple[Binding, ...]
    diagnosis: Diagnosis | None
    # placed by preempting these running pods ("ns/pod"), evicted from the state; a lone
    # pod left unplaced may name pods evicted for it in vain (``window``)
    preempted: tuple[str, ...] = ()
    # what else the pass says of a workload left unplaced: a preemptor's nomination that
    # did not hold, a pod bound then preempted (``window``)
    note: str | None = None


def binding_of(pod: Pod, choice: Choice) -> Binding:
    return Binding(
        pod=pod.key,
        node=choice.node,
        devices=choice.allocation.device_names,
        gpu_milli=choice.gpu_milli,
        allocation=choice.allocation,
    )
