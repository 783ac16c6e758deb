"""Node scores for every node at once, as arrays (numpy): kube-default's, and FGD's.

A pod shape's best node is the maximum of its score over the nodes it fits.
Scored node by node, in Python, that costs shapes × nodes calls of the filter
and score chain: with hundreds of distinct pod requests on thousands of nodes
(issue 32) that product is the whole evaluation. kube-default's score reads,
of a node, only its cpu and memory (allocatable, requested, the pods without
a request) and, of the pod, only its cpu and memory request; whether it fits
reads those, the node's free pod slots and extended resources, the static rules
(a mask per static needs, never changing) and whether its GPUs hold the pod's
GPU request (a mask per request, its verdicts kept per ``allocate.gpu_fit_key``).
So the column is a handful of array operations over every node, worked out
again for each query from arrays kept up to date from the score index's change
log: no column is stored per shape, and a query costs the nodes changed since
the last one plus the array operations. FGD's score is kept per (node inputs,
GPU request, cpu bucket) (``keyed``): its column is one dictionary lookup per
fitting node, by an integer worked out as arrays.

Every value is the one the Python rules compute, to the bit: integer
arithmetic where they use integers (NodeResourcesFit's ``leastRequestedScore``
and its integer mean), IEEE float64 where they use floats (BalancedAllocation's
fractions: an int64 below 2**53 converts exactly, so ``a / b`` rounds as
Python's int division does), in the same order, and the policy's weighted sum
added up in the policy's order from 0. ``test_vector.py`` compares them with the
rules node by node on many shapes and states; ``place_unindexed`` stays the
reference of the decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from topology.model.hardware import GpuRequest, Pod

from .allocate import gpu_device_state, gpu_fit_key
from .fgd import FragmentationModel
from .filters import INSUFFICIENT_CPU, INSUFFICIENT_MEMORY, TOO_MANY_PODS
from .profiles import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MAX_NODE_SCORE,
    zero_request_counts,
)
from .records import NodeAlloc, NodeInfo
from .scores import NO_SCORE, Policy

# (node, its ``allocate.gpu_fit_key``, a GPU request) → whether its GPUs hold the request
GpuFits = Callable[[str, tuple[object, ...] | None, GpuRequest], bool]
# (node, its ``allocate.gpu_device_state``) → its interned node inputs (FGD), or 0
KeyOf = Callable[[str, list[tuple[object, ...]]], int]
Ints = NDArray[np.int64]
Floats = NDArray[np.float64]
Bools = NDArray[np.bool_]


_ROWS = (
    "cpu_free",
    "memory_free",
    "pods_free",
    "cpu_free_nonzero",
    "memory_free_nonzero",
    "keys",
    "gpu_codes",
)
_FLOAT_ROWS = ("cpu_used", "memory_used")


class NodeTable:
    """Every indexed node's cpu, memory, pod slots, extended resources and GPU fit, as
    arrays, as of the score index's change ``seen``. Kept on the index; a clone of the
    index shares the arrays until either side refreshes (the refresher copies).

    Kept as the rules read them: free cpu and memory less 100m / 200 MiB per placed pod
    without a request (NodeResourcesFit's non-zero requested, ``profiles._cpu_memory``)
    and the requested amounts as floats (exact: below 2**53) for BalancedAllocation."""

    def __init__(self) -> None:
        self.size = 0
        self.seen = 0
        self.owned = True
        self._key_of: KeyOf = _unset
        self.cpu_alloc = np.zeros(0, np.int64)
        self.memory_alloc = np.zeros(0, np.int64)
        self.cpu_alloc_f = np.zeros(0, np.float64)
        self.memory_alloc_f = np.zeros(0, np.float64)
        self.every_alloc = True  # every node has some cpu and some memory
        self.cpu_free = np.zeros(0, np.int64)
        self.memory_free = np.zeros(0, np.int64)
        self.pods_free = np.zeros(0, np.int64)
        self.cpu_free_nonzero = np.zeros(0, np.int64)
        self.memory_free_nonzero = np.zeros(0, np.int64)
        self.cpu_used = np.zeros(0, np.float64)
        self.memory_used = np.zeros(0, np.float64)
        # FGD's node inputs (``fgd.fgd_node_inputs``), interned; 0 for the other policies
        self.keys = np.zeros(0, np.int64)
        self.extended: dict[str, Ints] = {}  # per resource name, its free amount
        self.gpu_fit: dict[GpuRequest, Bools] = {}  # per GPU request: any device option
        # per node, what ``allocate.gpu_fits`` reads of it (``allocate.gpu_fit_key``) as of
        # its row: a change that leaves it alone leaves the GPU masks alone
        self.gpu_state: list[tuple[object, ...] | None] = []
        # the same, interned to one integer per node (nodes alike there: one GPU reason)
        self.gpu_codes = np.zeros(0, np.int64)
        self._gpu_interned: dict[tuple[object, ...], int] = {}  # shared by clones: only grows
        self.static: dict[int, Bools] = {}  # per static needs: the static rules pass
        self.selector: dict[object, Bools] = {}  # per nodeSelector: the labels hold it

    def clone(self) -> NodeTable:
        other = NodeTable.__new__(NodeTable)
        other.__dict__.update(self.__dict__)
        other.extended = dict(self.extended)
        other.gpu_fit = dict(self.gpu_fit)
        other.static = dict(self.static)
        other.selector = dict(self.selector)
        other.owned = self.owned = False
        return other

    def _own(self) -> None:
        if self.owned:
            return
        for name in (*_ROWS, *_FLOAT_ROWS):
            setattr(self, name, getattr(self, name).copy())
        self.extended = {k: v.copy() for k, v in self.extended.items()}
        self.gpu_fit = {k: v.copy() for k, v in self.gpu_fit.items()}
        self.gpu_state = list(self.gpu_state)
        self.owned = True

    def refresh(
        self,
        names: Sequence[str],
        changes: Sequence[int],
        read: Callable[[str], tuple[NodeInfo, NodeAlloc]],
        gpu_fits: GpuFits,
        key_of: KeyOf,
    ) -> None:
        """Bring every array up to date: rows of the nodes changed since ``seen``
        (``changes``: the index's log, a released change as ``-1 - position``) read
        again, rows of added nodes appended."""
        fresh = changes[self.seen :]
        old = self.size
        if not fresh and len(names) == old:
            return
        self._own()
        self._key_of = key_of
        if len(names) > old:
            self._grow(names, read, gpu_fits)
        for position in {c if c >= 0 else -1 - c for c in fresh}:
            if position < old:  # an added node's row is read whole by ``_grow``
                self._read_row(position, names[position], read, gpu_fits)
        self.seen = len(changes)

    def _grow(
        self,
        names: Sequence[str],
        read: Callable[[str], tuple[NodeInfo, NodeAlloc]],
        gpu_fits: GpuFits,
    ) -> None:
        start, end = self.size, len(names)
        allocatable = [read(n)[0].node.allocatable for n in names[start:end]]
        cpu = np.array([a.cpu_milli for a in allocatable], np.int64)
        memory = np.array([a.memory_bytes for a in allocatable], np.int64)
        self.cpu_alloc = np.concatenate((self.cpu_alloc, cpu))
        self.memory_alloc = np.concatenate((self.memory_alloc, memory))
        self.cpu_alloc_f = self.cpu_alloc.astype(np.float64)
        self.memory_alloc_f = self.memory_alloc.astype(np.float64)
        self.every_alloc = bool(np.all(self.cpu_alloc != 0) and np.all(self.memory_alloc != 0))
        extra = end - start
        for name in _ROWS:
            setattr(self, name, np.concatenate((getattr(self, name), np.zeros(extra, np.int64))))
        for name in _FLOAT_ROWS:
            grown = np.concatenate((getattr(self, name), np.zeros(extra, np.float64)))
            setattr(self, name, grown)
        self.extended = {
            k: np.concatenate((v, np.zeros(extra, np.int64))) for k, v in self.extended.items()
        }
        self.gpu_fit = {
            k: np.concatenate((v, np.zeros(extra, np.bool_))) for k, v in self.gpu_fit.items()
        }
        self.gpu_state = [*self.gpu_state, *([None] * extra)]
        self.size = end
        for position in range(start, end):
            self._read_row(position, names[position], read, gpu_fits)

    def _read_row(
        self,
        position: int,
        name: str,
        read: Callable[[str], tuple[NodeInfo, NodeAlloc]],
        gpu_fits: GpuFits,
    ) -> None:
        info, alloc = read(name)
        allocatable = info.node.allocatable
        cpu, memory = alloc.cpu_free_milli, alloc.memory_free_bytes
        self.cpu_free[position] = cpu
        self.memory_free[position] = memory
        self.pods_free[position] = alloc.pods_free
        zero_cpu, zero_memory = zero_request_counts(alloc.placed)
        self.cpu_free_nonzero[position] = cpu - zero_cpu * DEFAULT_MILLI_CPU_REQUEST
        self.memory_free_nonzero[position] = memory - zero_memory * DEFAULT_MEMORY_REQUEST
        self.cpu_used[position] = allocatable.cpu_milli - cpu
        self.memory_used[position] = allocatable.memory_bytes - memory
        for resource, column in self.extended.items():
            column[position] = alloc.extended_free.get(resource, 0)
        devices = gpu_device_state(info, alloc)  # read once for both uses below
        gpus = gpu_fit_key(devices)
        if gpus != self.gpu_state[position]:
            self.gpu_state[position] = gpus
            interned = self._gpu_interned
            self.gpu_codes[position] = interned.setdefault(gpus, len(interned))
            for request, mask in self.gpu_fit.items():
                mask[position] = gpu_fits(name, gpus, request)
        self.keys[position] = self._key_of(name, devices)

    def extended_free(
        self, resource: str, names: Sequence[str], read: Callable[[str], tuple[NodeInfo, NodeAlloc]]
    ) -> Ints:
        column = self.extended.get(resource)
        if column is None:
            self._own()
            column = self.extended[resource] = np.fromiter(
                (read(n)[1].extended_free.get(resource, 0) for n in names[: self.size]),
                np.int64,
                self.size,
            )
        return column

    def gpu_mask(self, request: GpuRequest, names: Sequence[str], gpu_fits: GpuFits) -> Bools:
        column = self.gpu_fit.get(request)
        if column is None:
            self._own()
            column = self.gpu_fit[request] = np.fromiter(
                (
                    gpu_fits(name, key, request)
                    for name, key in zip(names[: self.size], self.gpu_state, strict=True)
                ),
                np.bool_,
                self.size,
            )
        return column

    def selector_mask(self, selector: object, positions: Sequence[int]) -> Bools:
        """The nodes whose labels hold a nodeSelector (``positions``: ``Layout.matching``),
        kept per selector until nodes are added."""
        column = self.selector.get(selector)
        if column is None or len(column) < self.size:
            column = np.zeros(self.size, np.bool_)
            column[list(positions)] = True
            self.selector[selector] = column
        return column

    def static_mask(self, needs: int, names: Sequence[str], passes: Callable[[str], bool]) -> Bools:
        """Which nodes pass the static rules for pods with these needs (the rules read
        no free resources: a node's verdict never changes, so the mask is kept, and
        only nodes added since are asked)."""
        column = self.static.get(needs)
        if column is None or len(column) < self.size:
            known = 0 if column is None else len(column)
            more = np.fromiter((passes(n) for n in names[known : self.size]), np.bool_)
            column = more if column is None else np.concatenate((column, more))
            self.static[needs] = column
        return column


def _unset(name: str, devices: list[tuple[object, ...]]) -> int:
    raise AssertionError("NodeTable.refresh sets how a node's key is found")


def supports(policy: Policy) -> bool:
    """True when every score rule of the policy has an array form here and the device
    option is the device rule's (so the score never reads which option is taken)."""
    if policy.device_rule is None:
        return keyed(policy)
    return all(name in VECTOR_RULES for name, _ in policy.weights)


def keyed(policy: Policy) -> bool:
    """True for FGD as the ``fgd`` policy weighs it (its score and, zero without gang
    members, closeness; weight 1 each): its score is kept per (node inputs, GPU request,
    cpu bucket) (``fgd.fgd_node_inputs``, ``fgd_inputs``), and its column is a lookup
    per node of those kept scores, a score not kept yet worked out from the node's
    device choices (``fgd.score_in_bucket``)."""
    return (
        policy.weights == (("fgd", 1.0), ("topology", 1.0))
        and policy.device_rule is None
        and policy.pod_inputs == "fgd"
    )


def fgd_inputs(pod: Pod, table: NodeTable, model: FragmentationModel) -> tuple[Ints, int]:
    """``fgd.fgd_pod_inputs`` for every node (the bucket of typical cpu requests that
    still fit once the pod is placed: ``bisect_right`` is ``searchsorted`` "right"),
    and how many buckets there are."""
    thresholds = np.asarray(model.cpu_thresholds, np.int64)
    left = table.cpu_free - pod.requests.cpu_milli
    return np.searchsorted(thresholds, left, side="right").astype(np.int64), len(thresholds) + 1


def refused(pod: Pod, table: NodeTable, extended: dict[str, Ints]) -> list[tuple[Bools, str]]:
    """``filters.node_resources`` and ``filters.extended_resources`` on every node, a
    check at a time in their order: the nodes each check refuses, and its reason."""
    requests = pod.requests
    found = [
        (requests.cpu_milli > table.cpu_free, INSUFFICIENT_CPU),
        (requests.memory_bytes > table.memory_free, INSUFFICIENT_MEMORY),
        (max(1, requests.pods) > table.pods_free, TOO_MANY_PODS),
    ]
    found += [
        (amount > extended[resource], f"Insufficient {resource}")
        for resource, amount in requests.extended.items()
    ]
    return found


def fits(pod: Pod, table: NodeTable, extended: dict[str, Ints]) -> Bools:
    """The nodes no check of ``refused`` refuses."""
    ok = np.ones(table.size, np.bool_)
    for fails, _reason in refused(pod, table, extended):
        ok &= ~fails
    return ok


def least_allocated(pod: Pod, table: NodeTable) -> Floats:
    """``profiles.least_allocated`` (NodeResourcesFit, LeastAllocated over cpu and
    memory, requests made non-zero) for every node: ``leastRequestedScore`` is
    ``(capacity - requested) * 100 // capacity``, 0 when requested exceeds capacity
    (the floor of a negative numerator is then below 0: the maximum with 0 is it),
    and a resource the node has none of is left out of the integer mean."""
    requests = pod.requests
    cpu = requests.cpu_milli or DEFAULT_MILLI_CPU_REQUEST
    memory = requests.memory_bytes or DEFAULT_MEMORY_REQUEST
    if table.every_alloc:
        cpu_score = np.maximum(
            (table.cpu_free_nonzero - cpu) * MAX_NODE_SCORE // table.cpu_alloc, 0
        )
        memory_score = np.maximum(
            (table.memory_free_nonzero - memory) * MAX_NODE_SCORE // table.memory_alloc, 0
        )
        mean: Floats = ((cpu_score + memory_score) // 2).astype(np.float64)
        return mean
    total = np.zeros(table.size, np.int64)
    weights = np.zeros(table.size, np.int64)
    for capacity, left in (
        (table.cpu_alloc, table.cpu_free_nonzero - cpu),
        (table.memory_alloc, table.memory_free_nonzero - memory),
    ):
        has = capacity != 0
        score = np.maximum(left * MAX_NODE_SCORE // np.where(has, capacity, 1), 0)
        total += np.where(has, score, 0)
        weights += has
    return np.where(weights > 0, total // np.maximum(weights, 1), 0).astype(np.float64)


def _balance(table: NodeTable, cpu: int, memory: int) -> Floats:
    """``profiles._balance`` of ``profiles._fractions`` on every node: ``int((1 - std)
    * 100)`` with std half the difference of the two fractions (the node's requested
    plus ``cpu`` / ``memory``, each capped at 1) when the node has both resources, 0
    (so 100) when it has one."""
    fractions = []
    for used, capacity, request in (
        (table.cpu_used, table.cpu_alloc_f, cpu),
        (table.memory_used, table.memory_alloc_f, memory),
    ):
        safe = capacity if table.every_alloc else np.where(capacity != 0, capacity, 1.0)
        fractions.append(np.minimum(1.0, (used + request) / safe))
    std = np.abs((fractions[0] - fractions[1]) / 2)
    if not table.every_alloc:
        std = np.where((table.cpu_alloc != 0) & (table.memory_alloc != 0), std, 0.0)
    balanced: Floats = np.trunc((1 - std) * MAX_NODE_SCORE)
    return balanced


def balanced_allocation(pod: Pod, table: NodeTable) -> Floats:
    """``profiles.balanced_allocation`` (NodeResourcesBalancedAllocation up to 1.35, over
    cpu and memory, the pod's own requests) for every node; 0 for a best-effort pod."""
    requests = pod.requests
    if requests.cpu_milli == 0 and requests.memory_bytes == 0:
        return np.zeros(table.size, np.float64)
    return _balance(table, requests.cpu_milli, requests.memory_bytes)


def balanced_allocation_1_36(pod: Pod, table: NodeTable) -> Floats:
    """``profiles.balanced_allocation_1_36`` (from 1.36: how much the pod improves the
    node's balance) for every node: ``50 + (50 + withPod - withoutPod) // 2``, the terms
    whole numbers held exactly as floats, the numerator never negative."""
    requests = pod.requests
    if requests.cpu_milli == 0 and requests.memory_bytes == 0:
        return np.zeros(table.size, np.float64)
    with_pod = _balance(table, requests.cpu_milli, requests.memory_bytes)
    without_pod = _balance(table, 0, 0)
    half = MAX_NODE_SCORE // 2
    improvement: Floats = half + np.floor_divide(half + with_pod - without_pod, 2)
    return improvement


def _no_score(pod: Pod, table: NodeTable) -> Floats:
    """``scores.topology_closeness`` without gang members (the memoised base): 0."""
    return np.zeros(table.size, np.float64)


VECTOR_RULES: dict[str, Callable[[Pod, NodeTable], Floats]] = {
    "least_allocated": least_allocated,
    "balanced_allocation": balanced_allocation,
    "balanced_allocation_1_36": balanced_allocation_1_36,
    "topology": _no_score,
}


def scores(policy: Policy, pod: Pod, table: NodeTable, feasible: Bools) -> Floats:
    """The policy's score of every node (``Policy.score`` with the base context:
    ``sum`` from 0 in the policy's order), NO_SCORE where ``feasible`` is False."""
    total: Floats = np.zeros(table.size, np.float64)
    for name, weight in policy.weights:
        total = total + weight * VECTOR_RULES[name](pod, table)
    return np.where(feasible, total, NO_SCORE)
