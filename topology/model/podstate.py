"""What kube-scheduler's other plugins read of a pod besides its requests and
terms: the disruption budgets preemption honours (DefaultPreemption), the pod's
preemption policy, and what the real scheduler said of it (its PodScheduled
condition, for the reality check). ``topology.model.hardware`` re-exports every name here.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from topology.model.terms import PodSelector


class LabelledPod(Protocol):
    """What a budget reads of the model's Pod (``hardware`` imports this module, so the
    Pod class itself is not named here)."""

    @property
    def namespace(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    """A policy/v1 PodDisruptionBudget as preemption reads it (``topology.kube.core.disruption``).

    ``disruptions_allowed`` is ``status.disruptionsAllowed`` (None: the object has
    no status; then ``min_available`` / ``max_unavailable``, an int or a "N%",
    are worked out over the snapshot's pods)."""

    namespace: str
    name: str
    selector: PodSelector
    disruptions_allowed: int | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disrupted_pods: frozenset[str] = frozenset()  # status.disruptedPods: names already counted

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selects(self, pod: LabelledPod) -> bool:
        """filterPodsWithPDBViolation (default_preemption.go): same namespace, and a
        non-empty selector matching the pod's (non-empty) labels."""
        selector = self.selector
        if pod.namespace != self.namespace or not pod.labels:
            return False
        return not selector.empty and selector.matches(pod.labels)


PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


@dataclass(frozen=True, slots=True)
class PodScheduled:
    """The pod's ``PodScheduled`` condition: what the real kube-scheduler said
    (``topology.kube.core.podstatus``). ``since``: its lastTransitionTime, epoch seconds
    (0: not given); ``nominated_node``: ``status.nominatedNodeName`` (preemption)."""

    status: bool
    reason: str = ""
    message: str = ""
    since: float = 0.0
    nominated_node: str | None = None

    @property
    def unschedulable(self) -> bool:
        return not self.status and self.reason == "Unschedulable"
