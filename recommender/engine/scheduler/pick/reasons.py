"""Why not: each node's first failing filter reason for a pod, which a diagnosis
counts. For a memoisable pod the rules are taken apart: the static ones are kept
per (pod's static needs, node), the GPU rule per (node's GPU state, GPU request),
and the rest (resources, claims, the pods around) are cheap comparisons run per
node; nodes of a blocked-heavy cluster differ in what is free, so a memo per whole
node key would almost never be hit again."""

from __future__ import annotations

from topology.model.hardware import GpuRequest, Pod

from ..filters import RULES, Status, gpu_devices, run_filters
from ..records import NodeAlloc, NodeInfo
from .base import PickerBase

# every rule after the static ones, in ``run_filters``'s order
_NON_STATIC = tuple(r.check for r in RULES if r.kind != "static")


class NodeReasons(PickerBase):
    """The picker's failure reasons, node by node."""

    def node_reasons(self, pod: Pod) -> list[str]:
        """Each node's first failing filter reason ("" where the pod would fit)."""
        names = self.state.node_names()
        shape = self.shape(pod)
        if shape is None:
            return [self._filter_reason(n, pod) for n in names]
        if self.index is not None and self.index.covers(names):
            return self.index.reasons(shape, lambda name: self._memo_reason(name, pod))
        return [self._memo_reason(n, pod) for n in names]

    def _memo_reason(self, name: str, pod: Pod) -> str:
        """``run_filters``'s reason for a memoisable pod (its shape is not None: the
        filter context is the base one): the static rules first (kept per node), then
        the others in order, the GPU rule's reason kept per (GPU state, request)."""
        info, alloc = self.state.info(name), self.state.alloc(name)
        static = self._static_reason(info, alloc, pod)
        if static:
            return static
        context = self.filters
        for check in _NON_STATIC:
            if check is gpu_devices:
                if pod.gpu is not None and pod.gpu.count != 0:
                    reason = self._gpu_reason(info, alloc, pod, pod.gpu)
                    if reason:
                        return reason
                continue
            status = check(info, alloc, pod, context)
            if not status.ok:
                return status.reason
        return ""

    def _gpu_reason(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod, request: GpuRequest) -> str:
        """``filters.gpu_devices``'s reason ("" when it passes): it reads only the
        node's ``allocate.gpu_fit_key`` and the request."""
        key = (self._keys.gpu_key(info, alloc), request)
        reason = self._gpu_reasons.get(key)
        if reason is None:
            reason = self._gpu_reasons[key] = gpu_devices(info, alloc, pod, self.filters).reason
        return reason

    def _filter_reason(self, name: str, pod: Pod) -> str:
        status: Status = run_filters(
            self.state.info(name), self.state.alloc(name), pod, self._context(pod)
        )
        return status.reason
