"""Why not: each node's first failing filter reason for a pod, which a diagnosis
counts. For a memoisable pod the rules are taken apart: the static ones are kept
per (pod's static needs, node), the GPU rule per (node's GPU state, GPU request),
and the rest (resources, claims, the pods around) are cheap comparisons run per
node; nodes of a blocked-heavy cluster differ in what is free, so a memo per whole
node key would almost never be hit again."""

from __future__ import annotations

import numpy as np

from topology.model.hardware import GpuRequest, Pod

from .. import vector
from ..filters import RULES, Status, gpu_devices, run_filters
from ..records import NodeAlloc, NodeInfo
from .scoring import NodeScoring

# every rule after the static ones, in ``run_filters``'s order
_NON_STATIC = tuple(r.check for r in RULES if r.kind != "static")
_AFTER_GPU = _NON_STATIC[_NON_STATIC.index(gpu_devices) + 1 :]


class NodeReasons(NodeScoring):
    """The picker's failure reasons, node by node."""

    def node_reasons(self, pod: Pod) -> list[str]:
        """Each node's first failing filter reason ("" where the pod would fit)."""
        names = self.state.node_names()
        shape = self.shape(pod)
        if shape is None:
            return [self._filter_reason(n, pod) for n in names]
        if self.index is not None and self.index.covers(names):
            return self._array_reasons(pod)
        return [self._memo_reason(n, pod) for n in names]

    def _array_reasons(self, pod: Pod) -> list[str]:
        """``_memo_reason`` of every indexed node, rule by rule over the index's node
        arrays (``vector.NodeTable``, as ``feasible`` reads them): the static mask, then
        cpu, memory, pod slots and extended resources as comparisons of whole columns,
        then the GPU rule (its mask, a reason per failing node's GPU state), and the
        rules left only on the nodes that pass all of these. A blocked pod's reasons
        on thousands of nodes cost array operations, not a chain of calls per node."""
        index = self.index
        assert index is not None
        table = index.table(self._read, self._gpu_fits, self._node_inputs)
        names = index.names
        reasons = np.full(table.size, "", object)
        passing = self._static_mask(pod, table, names)
        for position in np.flatnonzero(~passing).tolist():
            info, alloc = self._read(names[position])
            reasons[position] = self._static_reason(info, alloc, pod)
        for fails, reason in vector.refused(pod, table, self._extended_free(pod, table)):
            reasons[passing & fails] = reason
            passing = passing & ~fails
        if pod.gpu is not None and pod.gpu.count != 0:
            fits = table.gpu_mask(pod.gpu, names, self._gpu_fits)
            refused = np.flatnonzero(passing & ~fits)
            # one reason per GPU state (``table.gpu_codes``), as ``_gpu_reason`` keeps them
            _codes, first, inverse = np.unique(
                table.gpu_codes[refused], return_index=True, return_inverse=True
            )
            said = np.empty(len(first), object)
            for i, position in enumerate(refused[first].tolist()):
                info, alloc = self._read(names[position])
                said[i] = self._gpu_reason(info, alloc, pod, pod.gpu)
            reasons[refused] = said[inverse.reshape(-1)]
            passing = passing & fits
        for position in np.flatnonzero(passing).tolist():
            reasons[position] = self._reason_after_gpu(names[position], pod)
        return list(reasons.tolist())

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

    def _reason_after_gpu(self, name: str, pod: Pod) -> str:
        """The first failing reason of the rules after the GPU rule ("" when none fails)."""
        info, alloc = self.state.info(name), self.state.alloc(name)
        for check in _AFTER_GPU:
            status = check(info, alloc, pod, self.filters)
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
