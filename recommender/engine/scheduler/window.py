"""The preemption window: a preemptor is nominated, not bound, while its victims terminate.

Upstream (kubernetes/kubernetes v1.35):

- ``pkg/scheduler/framework/preemption/preemption.go`` ``Preempt`` and
  ``prepareCandidate``/``prepareCandidateAsync``: the victims are deleted gracefully
  (they keep their room on the node until they are gone: 30 s by default) and the
  PostFilter result nominates the node; ``handleSchedulingFailure``
  (``pkg/scheduler/schedule_one.go``) records it (``AddNominatedPod``,
  ``status.nominatedNodeName``) and the preemptor waits in the queue;
- meanwhile the scheduler goes on with the queue: while filtering a node, the pods
  nominated to it with an equal or higher priority are added to it
  (``RunFilterPluginsWithNominatedPods``/``addGlobalNominatedPods``,
  ``pkg/scheduler/framework/runtime/framework.go``): their requests are taken there,
  a lower priority pod cannot take the room; a higher priority pod does not see them;
- terminating pods still take their resources but no longer count for topology
  spread (``podtopologyspread/common.go`` ``countPodsMatchSelector``);
- once the victims are gone the preemptor is tried again, its nominated node first
  (``findNodesThatFitPod`` → ``evaluateNominatedNode``): it binds there if every
  filter passes, otherwise it is scheduled afresh and may preempt again, or stay
  pending: the eviction was wasted.

Here, for a lone pod (gangs still bind at once, see docs/FIDELITY.md)::

    fits nowhere ──► victims found on N ──► victims terminating (room held on N)
                                        └─► pod nominated on N (its room reserved)
    the rest of the round ──► each pod sees the reservations of nominees of equal or
                              higher priority, and the terminating victims' room
    end of the round ──► the victims are gone (``close``)
    next round, in priority order ──► the nominee: N first, else afresh

A lone pod the pass bound is a victim like a running one (``SelectVictimsOnNode``
reads the node's pods, ``bindings.SimulatedBindings``); evicted, it is deleted: the
queue forgets it (``preempted_pending``).

A nominee's reservation is its room on the state; its labels and terms count only
where upstream counts them: while a pod of equal or lower priority is filtered on the
nominated node (``RunFilterPluginsWithNominatedPods``: once with the nominees added to
that node's InterPodAffinity and PodTopologySpread state, once without; here the room
is always taken and ``_passes_beside_nominees`` runs the pass with their labels), and in
a preemptor's victim search there (``preemption.find_victims``' ``beside``). Not carried:
its host ports; scores see the reserved room (upstream scores without it).
docs/FIDELITY.md says the same.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from topology.model.hardware import Cluster, Pod

from .bindings import SimulatedBindings, allocation_of
from .diagnosis import Diagnosis
from .outcomes import WorkloadOutcome, binding_of
from .pick import NodePicker
from .preemption import Victims, fits_on, preempting_reason
from .records import Allocation
from .state import ClusterState
from .workloads import Workload


class Placing(Protocol):
    """What the window needs of the placement call it serves (``placement._Run``)."""

    cluster: Cluster
    state: ClusterState
    pick: NodePicker
    excluded: set[str]  # nodes the workload being placed may not use (``place`` skips them)


@dataclass(slots=True)
class Nomination:
    """A preemptor waiting for its victims: where its room is reserved, what it evicted."""

    pod: Pod
    node: str
    allocation: Allocation
    # the pods placed since it was nominated ("ns/name"), in order
    placed_meanwhile: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Terminating:
    node: str
    pod: Pod  # the victim as the state now holds it (``terminating`` set)
    allocation: Allocation


class PreemptionWindow:
    """The nominated preemptors and the terminating victims of one placement pass."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.nominated: dict[str, Nomination] = {}  # workload key → its nomination
        self.terminating: dict[str, _Terminating] = {}  # victim key → where it holds room
        # workload key → every pod evicted for it, over all its nominations, in order
        self.evicted_for: dict[str, list[str]] = {}
        self.evictions = 0  # pods evicted so far (each once: ``count``)
        self._counted: set[str] = set()
        self.last: dict[str, Nomination] = {}  # workload key → its latest nomination
        # pods this pass bound, then evicted for a preemptor: key → what is said of it
        self.preempted_pending: dict[str, str] = {}
        self._hidden: list[Nomination] = []

    # --- a preemptor ---------------------------------------------------------------

    def nominate(
        self, run: Placing, workload: Workload, pod: Pod, victims: Victims
    ) -> WorkloadOutcome | None:
        """Nominate ``pod`` on the victims' node: the victims terminate (their room
        held), the pod's room is reserved as if they were gone. None when the pod does
        not fit there even then (the caller binds as before). ``victims`` were found with
        the pods nominated there counted (``find_victims``' ``beside``)."""
        node = victims.node
        held = [self._holding(node, v) for v in victims.pods]
        for victim, found in zip(victims.pods, held, strict=True):
            self.state.release(node, victim.key, found.allocation, victim)
        choice = run.pick.best_node(pod, run.pick.scope([node]))
        if choice is None:  # as they were
            for victim, found in zip(victims.pods, held, strict=True):
                self.state.apply(node, victim.key, found.allocation, victim)
            return None
        self.state.apply(node, pod.key, choice.allocation)  # no pod: room only
        for found in held:  # still there, terminating
            self.state.apply(node, found.pod.key, found.allocation, found.pod)
        fresh = [found.pod.key for found in held if found.pod.key not in self.terminating]
        bound = SimulatedBindings.of(self.state)
        for found in held:
            self.terminating.setdefault(found.pod.key, found)
            if found.pod.key in fresh and bound.has(found.pod.key):
                self.preempted_pending[found.pod.key] = (
                    f"bound to {node}, then preempted by {workload.key} (a victim is deleted: "
                    "its controller, if any, creates a new pod)"
                )
        self.count(fresh)
        evicted = self.evicted_for.setdefault(workload.key, [])
        evicted += [key for key in (v.key for v in victims.pods) if key not in evicted]
        self.nominated[workload.key] = self.last[workload.key] = Nomination(
            pod, node, choice.allocation
        )
        summary = f"nominated on {node}; {preempting_reason(tuple(v.key for v in victims.pods))}"
        return WorkloadOutcome(workload.key, False, (), Diagnosis(summary=summary), tuple(fresh))

    def _holding(self, node: str, victim: Pod) -> _Terminating:
        known = self.terminating.get(victim.key)
        if known is not None:
            return known
        allocation = allocation_of(self.state, victim.key)
        assert allocation is not None  # select_victims_on_node only names such pods
        return _Terminating(node, replace(victim, terminating=True), allocation)

    # --- every try while the window is open -----------------------------------------

    def place(
        self,
        run: Placing,
        workload: Workload,
        place: Callable[[Workload], WorkloadOutcome],
    ) -> WorkloadOutcome:
        """Try ``workload``: a nominee on its nominated node first, else ``place``; the
        reservations of lower-priority nominees are out of sight meanwhile."""
        nomination = self._take(workload.key)
        self._hide_below(workload.priority)
        try:
            outcome = None
            if nomination is not None:
                outcome = self._on_nominated_node(run, workload, nomination)
            if outcome is None:
                outcome = self._place_beside_nominees(run, workload, place)
        finally:
            self._show()
        if outcome.placed:
            for other in self.nominated.values():
                other.placed_meanwhile.append(workload.key)
            if workload.kind == "pod":  # a victim for a later preemptor, like any pod
                binding = outcome.bindings[0]
                assert binding.allocation is not None
                SimulatedBindings.of(self.state).bind(workload.pods[0], binding.allocation)
        return self._settled(run, workload, outcome)

    def _on_nominated_node(
        self, run: Placing, workload: Workload, nomination: Nomination
    ) -> WorkloadOutcome | None:
        pod = workload.pods[0]
        choice = run.pick.best_node(pod, run.pick.scope([nomination.node]))
        if choice is None or not self._passes_beside_nominees(run, pod, choice.node):
            return None
        self.state.apply(choice.node, pod.key, choice.allocation, pod)
        return WorkloadOutcome(workload.key, True, (binding_of(pod, choice),), None)

    def _place_beside_nominees(
        self, run: Placing, workload: Workload, place: Callable[[Workload], WorkloadOutcome]
    ) -> WorkloadOutcome:
        """``place``, again without each node where the pod breaks a rule once the pods
        nominated there are counted with their labels and terms."""
        try:
            while True:
                outcome = place(workload)
                if workload.kind != "pod" or not outcome.placed:
                    return outcome
                (binding,) = outcome.bindings
                pod = workload.pods[0]
                assert binding.allocation is not None
                self.state.release(binding.node, pod.key, binding.allocation, pod)
                if self._passes_beside_nominees(run, pod, binding.node):
                    self.state.apply(binding.node, pod.key, binding.allocation, pod)
                    return outcome
                run.excluded.add(binding.node)
        finally:
            run.excluded.clear()

    def beside(self, pod: Pod) -> Callable[[str], Sequence[Pod]] | None:
        """The pods nominated on a node that its filters add for ``pod`` (equal or
        higher priority, ``addGlobalNominatedPods``); None when there are none."""
        if not any(n.pod.key != pod.key for n in self.nominated.values()):
            return None

        def on(node: str) -> Sequence[Pod]:
            return [
                n.pod
                for n in self.nominated.values()
                if n.node == node and n.pod.key != pod.key and n.pod.priority >= pod.priority
            ]

        return on

    def _passes_beside_nominees(self, run: Placing, pod: Pod, node: str) -> bool:
        """``RunFilterPluginsWithNominatedPods``' first pass (``addGlobalNominatedPods``,
        ``pkg/scheduler/framework/runtime/framework.go``): the pods nominated to the node
        with an equal or higher priority are added to it, labels and terms included, for
        this node's filters only; the pod must pass both with them and without them. The
        reservations are the room the pass without them already counts; what the first
        pass adds is their labels and terms for InterPodAffinity and PodTopologySpread.
        ``pod`` is not placed (it passed the node without their labels already)."""
        beside = self.beside(pod)
        if beside is None or not beside(node):
            return True
        return fits_on(run.cluster, self.state, pod, run.pick.filters, node, beside)

    def _settled(
        self, run: Placing, workload: Workload, outcome: WorkloadOutcome
    ) -> WorkloadOutcome:
        """The outcome as said of a preemptor: every pod evicted for it, and whether its
        (latest) nomination held."""
        evicted = tuple(self.evicted_for.get(workload.key, ()))
        nomination = self.last.get(workload.key)
        if nomination is None or workload.key in self.nominated:
            return outcome
        if not outcome.placed:
            summary = outcome.diagnosis.summary if outcome.diagnosis else ""
            broken = wasted_reason(evicted, nomination.node, nomination.placed_meanwhile)
            diagnosis = _with_summary(outcome, f"{summary} ({broken})")
            return replace(outcome, diagnosis=diagnosis, preempted=evicted, note=broken)
        node = outcome.bindings[0].node
        if node != nomination.node:
            summary = (
                f"{preempting_reason(evicted)}, but pods placed while they terminated "
                f"({', '.join(nomination.placed_meanwhile) or 'none'}) left it no place on "
                f"{nomination.node}: runs on {node}"
            )
        else:
            summary = preempting_reason(evicted)
            meanwhile = interacting(run, nomination.pod, node, nomination.placed_meanwhile)
            if meanwhile:
                summary += (
                    f"; pods placed while they terminate ({', '.join(meanwhile)}) may break "
                    "its spread/affinity: kube-scheduler binds it only once they are gone"
                )
        return replace(outcome, diagnosis=Diagnosis(summary=summary), preempted=evicted)

    def count(self, evicted: Iterable[str]) -> None:
        """Count the pods evicted that were not counted yet (for the queue's retries)."""
        fresh = set(evicted) - self._counted
        self._counted |= fresh
        self.evictions += len(fresh)

    # --- reservations -----------------------------------------------------------------

    def _take(self, key: str) -> Nomination | None:
        """The workload's nomination, its reserved room given back (it is tried now)."""
        nomination = self.nominated.pop(key, None)
        if nomination is not None:
            self.state.release(nomination.node, nomination.pod.key, nomination.allocation)
        return nomination

    def _hide_below(self, priority: int) -> None:
        """``addGlobalNominatedPods`` adds only nominees of equal or higher priority."""
        self._hidden = [n for n in self.nominated.values() if n.pod.priority < priority]
        for nomination in self._hidden:
            self.state.release(nomination.node, nomination.pod.key, nomination.allocation)

    def _show(self) -> None:
        for nomination in self._hidden:
            self.state.apply(nomination.node, nomination.pod.key, nomination.allocation)
        self._hidden = []

    def close(self) -> None:
        """The victims are gone: their room is free (the nominees keep theirs). Their
        deletions are events that send the pods waiting for room back to the queue."""
        bound = SimulatedBindings.of(self.state)
        for key, held in self.terminating.items():
            self.state.release(held.node, key, held.allocation, held.pod)
            bound.forget(key)
        self.evictions += len(self.terminating)
        self.terminating = {}

    def take_preempted(self) -> list[tuple[str, str]]:
        """The pods bound by this pass and evicted since the last call, with what to say."""
        found = list(self.preempted_pending.items())
        self.preempted_pending = {}
        return found


def wasted_reason(evicted: Iterable[str], node: str, meanwhile: Iterable[str]) -> str:
    placed = ", ".join(meanwhile)
    during = f"pods placed while they terminated ({placed})" if placed else "the cluster"
    return (
        f"it preempted {', '.join(evicted)} for {node}, but {during} left it no place there "
        "and it stays pending: a wasted eviction"
    )


def interacting(run: Placing, pod: Pod, node: str, keys: Iterable[str]) -> list[str]:
    """The pods among ``keys`` (placed in the state) that can break the pod's required
    anti-affinity or spread constraints on ``node``: placed in the node's domain of a
    term, and selected by it (or selecting the pod, for their anti-affinity). Pods in
    other domains only ever help a spread constraint (they raise its minimum)."""
    order = list(keys)
    if not order:
        return []
    state = run.state
    here = state.node(node).labels
    labels_of = run.cluster.namespace_labels
    found: list[str] = []
    for name in state.node_names():
        there = state.node(name).labels
        for other in state.alloc(name).placed:
            if other.key in order and _breaks(pod, other, here, there, labels_of):
                found.append(other.key)
    return sorted(found, key=order.index)


def _breaks(
    pod: Pod,
    other: Pod,
    here: Mapping[str, str],
    there: Mapping[str, str],
    namespace_labels: Mapping[str, Mapping[str, str]],
) -> bool:
    def shared(key: str) -> bool:
        return key in here and here[key] == there.get(key)

    terms = pod.pod_terms
    own = namespace_labels.get(pod.namespace, {})
    theirs = namespace_labels.get(other.namespace, {})
    for term in terms.anti_affinity:
        if shared(term.topology_key) and term.matches(other.namespace, other.labels, theirs):
            return True
    for term in other.pod_terms.anti_affinity:
        if shared(term.topology_key) and term.matches(pod.namespace, pod.labels, own):
            return True
    return other.namespace == pod.namespace and any(
        shared(c.topology_key) and c.selector.matches(other.labels) for c in terms.spread
    )


def _with_summary(outcome: WorkloadOutcome, summary: str) -> Diagnosis:
    if outcome.diagnosis is None:
        return Diagnosis(summary=summary)
    return replace(outcome.diagnosis, summary=summary)
