"""kube-scheduler's retries within one placement pass: the workloads left unplaced are
tried again when something that can let them in happened (``requeue``), and the queue's
memory of each one's last try (``Requeue``). ``placement._Run.place_all`` drives it.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .diagnosis import Diagnosis
from .outcomes import WorkloadOutcome
from .window import PreemptionWindow
from .workloads import Workload


class Placing(Protocol):
    """What the retries need of the placement call they serve (``placement._Run``)."""

    def place_workload(self, workload: Workload) -> WorkloadOutcome: ...


class Requeue:
    """The scheduling queue's memory: each workload's outcome, and how many placements
    and evictions had happened at its last try."""

    def __init__(self, workloads: Sequence[Workload], window: PreemptionWindow) -> None:
        self.workloads = workloads
        self.window = window
        self.outcomes: list[WorkloadOutcome] = []
        self.placed_order: list[str] = []
        self.index_of = {w.key: index for index, w in enumerate(workloads)}
        self.deleted: set[str] = set()  # bound, then preempted: gone, never tried again
        self.seen: list[tuple[int, int]] = []  # (placements, evictions) at the last try
        # placements can help only a workload with pod affinity or spread terms (the
        # counts it needs may now be met); anything can be helped by an eviction
        self.needs_pods = [
            any(p.pod_terms.affinity or p.pod_terms.spread for p in w.pods) for w in workloads
        ]

    def tried(self, index: int, outcome: WorkloadOutcome) -> None:
        seen = (len(self.placed_order), self.window.evictions)
        if index == len(self.outcomes):
            self.outcomes.append(outcome)
            self.seen.append(seen)
        else:
            self.outcomes[index], self.seen[index] = outcome, seen
        if outcome.placed:
            self.placed_order.append(self.workloads[index].key)
            self.window.count(outcome.preempted)  # a gang's, evicted as it bound
        for key, said in self.window.take_preempted():
            self._preempted(key, said)

    def _preempted(self, key: str, said: str) -> None:
        """A pod this pass bound was evicted (and deleted) for a later preemptor. The pods
        it evicted as it bound stay evicted: its outcome still names them, else no outcome
        would say they are gone."""
        index = self.index_of[key]
        evicted = self.outcomes[index].preempted
        self.outcomes[index] = WorkloadOutcome(
            key, False, (), Diagnosis(summary=said), preempted=evicted, note=said
        )
        self.placed_order.remove(key)
        self.deleted.add(key)

    def may_help(self, index: int) -> bool:
        """Whether something happened since the workload's last try that can let it in
        (a nominee is always tried again once its victims are gone)."""
        if self.workloads[index].key in self.deleted:
            return False
        placements, evictions = self.seen[index]
        if evictions < self.window.evictions or self.workloads[index].key in self.window.nominated:
            return True
        return self.needs_pods[index] and placements < len(self.placed_order)


def requeue(run: Placing, queue: Requeue) -> None:
    """kube-scheduler retries a pod it could not place.

    A pod that fails goes to the unschedulable queue; a later event that may make it
    schedulable (a pod bound, a pod deleted: ``MoveAllToActiveOrBackoffQueue`` with the
    plugins' QueueingHints, ``pkg/scheduler/backend/queue/scheduling_queue.go``), and at
    the latest the 5-minute flush (``flushUnschedulablePodsLeftover``), puts it back in
    the active queue, which pops by priority (``PrioritySort``), and ``ScheduleOne``
    (``pkg/scheduler/schedule_one.go``) tries it again on the cluster as it is then. So
    a pod whose required podAffinity names a lower-priority pending pod fails first and
    binds once that pod is bound, and a pod whose preemption found no node may find one
    once another preemptor's victims are gone. Here: after the pass, every unplaced
    workload is tried again, in queue order, when something that can let it in happened
    since its last try (``Requeue.may_help``: an eviction; a placement, for a workload
    with pod affinity or spread terms: bound pods only take room, so for any other
    workload the retry would fail as before), until a round places nothing. A workload
    still unplaced keeps the diagnosis of its last try.

    The victims of the preemptors nominated in a round (``window``) are gone at its
    end: a nominee is tried again in the next round, at its place in the queue (so a
    round that changes nothing leaves no nominee behind). The rounds end: each one that
    changes something binds a workload (one bound stays bound, or is evicted and never
    tried again) or evicts a pod (its first nomination evicts pods not yet terminating:
    the victims of the round before are gone), and both are finite."""
    window = queue.window
    window.close()
    changed = True
    while changed:
        changed = False
        for index, workload in enumerate(queue.workloads):
            if queue.outcomes[index].placed or not queue.may_help(index):
                continue
            queue.tried(index, run.place_workload(workload))
            changed = changed or queue.outcomes[index].placed or workload.key in window.nominated
        window.close()
