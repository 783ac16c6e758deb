"""Why not: each node's first failing filter reason for a pod, which a diagnosis
counts; kept per (pod shape, node key) where the pod's verdict allows it."""

from __future__ import annotations

from topology.model.hardware import Pod

from ..filters import Status, run_filters
from .base import PickerBase


class NodeReasons(PickerBase):
    """The picker's failure reasons, node by node."""

    def node_reasons(self, pod: Pod) -> list[str]:
        """Each node's first failing filter reason ("" where the pod would fit)."""
        names = self.state.node_names()
        shape = self.shape(pod)
        if shape is None:
            return [self._filter_reason(n, pod) for n in names]
        if self.index is not None and self.index.covers(names):
            return self.index.reasons(shape, lambda name: self._memo_reason(name, pod, shape))
        return [self._memo_reason(n, pod, shape) for n in names]

    def _memo_reason(self, name: str, pod: Pod, shape: int) -> str:
        """The static rules come first (kept per node), the rest depends on the node key."""
        static = self._static_reason(self.state.info(name), self.state.alloc(name), pod)
        if static:
            return static
        key = (shape, self._node_key(name))
        reason = self._reasons.get(key)
        if reason is None:
            reason = self._reasons[key] = self._filter_reason(name, pod)
        return reason

    def _filter_reason(self, name: str, pod: Pod) -> str:
        status: Status = run_filters(
            self.state.info(name), self.state.alloc(name), pod, self._context(pod)
        )
        return status.reason
