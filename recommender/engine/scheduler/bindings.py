"""The pods a placement pass bound, as victims: kube-scheduler may preempt a pod it
bound moments ago like any running one (``SelectVictimsOnNode`` reads the node's pods,
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``); the
preemption search and the window read them here.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from topology.model.hardware import Pod

from .records import Allocation
from .state import ClusterState


def allocation_of(state: ClusterState, key: str) -> Allocation | None:
    """What a pod that may be a victim takes: bound in the snapshot, or by the pass."""
    return state.bound_allocation(key) or SimulatedBindings.of(state).allocation(key)


class SimulatedBindings:
    """The lone pending pods a placement pass bound on one state, and what each took (a
    state watcher: a copy of the state gets a copy): kube-scheduler may preempt a pod
    it bound moments ago like any other (``SelectVictimsOnNode`` reads the node's pods)."""

    def __init__(self) -> None:
        self._taken: dict[str, tuple[Allocation, int]] = {}

    @classmethod
    def of(cls, state: ClusterState) -> SimulatedBindings:
        return state.watcher(cls)

    def bind(self, pod: Pod, allocation: Allocation) -> None:
        self._taken[pod.key] = (allocation, pod.priority)

    def forget(self, key: str) -> None:
        self._taken.pop(key, None)

    def has(self, key: str) -> bool:
        return key in self._taken

    def allocation(self, key: str) -> Allocation | None:
        found = self._taken.get(key)
        return found[0] if found is not None else None

    def lowest_priority(self) -> int:
        return min((priority for _, priority in self._taken.values()), default=2**31 - 1)

    def changed(self, name: str, released: bool) -> None:
        pass

    def added(self, name: str) -> None:
        pass

    def clone(self) -> SimulatedBindings:
        other = SimulatedBindings()
        other._taken = dict(self._taken)
        return other
