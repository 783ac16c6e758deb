"""Memoised node scores: interchangeable nodes are filtered and scored once.

Most nodes of a real cluster come from a few templates, and many sit in the
same allocation state (empty, or full). For a pod that names no node labels
(no selector, no affinity, no claims) and is not a gang member being pulled
together, the filter verdict and the score depend only on the node's template
and free resources, so they are computed once per (template, free, pod shape).
That is what makes the openb protocol (≈10,000 pods × 1,213 nodes) run in
seconds rather than minutes, without changing a single decision.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from typing import Any

from topology.model.hardware import Pod

from .allocate import gpu_device_state, gpu_fit_key
from .profiles import zero_request_counts
from .records import NodeAlloc, NodeInfo
from .scores import NO_SCORE as NO_SCORE  # re-exported: placement's callers read it here
from .vector import NodeTable


def memoisable(pod: Pod) -> bool:
    """Claims read device attributes the node key does not hold, host ports the ports
    of the pods on the node (NodePorts); everything else can."""
    return not pod.claims and not pod.host_ports


def pod_shape(pod: Pod, namespace_class: str) -> tuple[object, ...]:
    """What a pod's filter verdicts and scores depend on. Selector and affinity are
    part of it: they pick nodes by label, which the node key leaves out, so the
    placement checks them per node (cached) before looking the score up. The
    namespace enters only as its class (see ``filters.FilterContext.namespace_class``):
    namespaces no rule tells apart share their shape."""
    requests = pod.requests
    return (
        namespace_class,
        requests.cpu_milli,
        requests.memory_bytes,
        requests.pods,
        tuple(sorted(requests.extended.items())),
        pod.gpu,
        pod.tolerations,
        tuple(sorted(pod.node_selector.items())),
        pod.affinity,
    )


def static_key(info: NodeInfo, personal: bool) -> tuple[object, ...]:
    """What a node's template decides; ``personal`` nodes (reserved, granted) never share."""
    node = info.node
    allocatable = node.allocatable
    return (
        node.name if personal else None,
        node.taints,
        node.unschedulable,
        node.ready,
        allocatable.cpu_milli,
        allocatable.memory_bytes,
        allocatable.pods,
        tuple(sorted(allocatable.extended.items())),
        tuple((g.model, g.memory_bytes) for g in node.gpus),
        tuple(
            (
                d.name,
                d.gpu,
                d.model,
                d.memory_bytes,
                d.shareable,
                tuple(sorted(d.capacity.items())),
                d.unit_gpu_milli,
            )
            for d in info.gpu_devices
        ),
        tuple(d.name for d in node.devices if d.consumes),
    )


def dynamic_key(info: NodeInfo, alloc: NodeAlloc) -> tuple[object, ...]:
    """What is free on the node, as far as filters and scores can see it."""
    return (
        alloc.cpu_free_milli,
        alloc.memory_free_bytes,
        alloc.pods_free,
        tuple(sorted(alloc.extended_free.items())),
        tuple(alloc.device_milli_free(d) for d in info.gpu_devices),
        tuple(sorted(alloc.gpu_milli.items())),
        tuple(sorted(alloc.gpu_nonpartition_milli.items())),
        tuple(sorted(alloc.exclusive)),
        zero_request_counts(alloc.placed),  # kube-default's NonZeroRequested
    )


class NodeKeys:
    """Node memo keys interned to small ints (hashing the nested tuples on every
    (pod, node) lookup would cost more than it saves).

    A node's key is kept on its ``NodeAlloc`` (which drops it on every write),
    so placement calls on copies of one state share the work.
    """

    def __init__(self) -> None:
        self._interned: dict[tuple[object, ...], int] = {}

    def intern(self, value: tuple[object, ...]) -> int:
        return self._interned.setdefault(value, len(self._interned))

    def key(self, info: NodeInfo, alloc: NodeAlloc, personal: bool) -> int:
        slot = (self, personal)
        key = alloc.memo_keys.get(slot)
        if key is None:
            static = info.memo_static.get(personal)
            if static is None:
                static = info.memo_static[personal] = static_key(info, personal)
            key = alloc.memo_keys[slot] = self.intern((static, dynamic_key(info, alloc)))
        return key

    def gpu_key(self, info: NodeInfo, alloc: NodeAlloc) -> int:
        """The node's ``allocate.gpu_fit_key`` interned (kept on its ``NodeAlloc`` as the
        memo key is): nodes alike there give a GPU request the same verdict and reason."""
        slot = (self, "gpu")
        key = alloc.memo_keys.get(slot)
        if key is None:
            devices = gpu_fit_key(gpu_device_state(info, alloc))
            key = alloc.memo_keys[slot] = self.intern(("gpu", devices))
        return key


Scored = tuple[float, int] | None


class _Column:
    """One pod shape's value (and device option) for every node, as of change ``seen``;
    for scores also the best value and the positions holding it (None: not known).
    Options are an unsigned 16-bit array (an option is one of a node's devices or
    device sets, never 65,536 of them): a quarter of a list's memory, which
    thousands of shapes × every node of every copied index add up to."""

    __slots__ = ("values", "options", "seen", "best", "tied")

    def __init__(self, values: list[Any], options: array[int], seen: int) -> None:
        self.values = values
        self.options = options
        self.seen = seen
        self.best: float | None = None
        self.tied: list[int] = []  # ascending

    def copy(self) -> _Column:
        other = _Column(list(self.values), self.options[:], self.seen)
        other.best, other.tied = self.best, list(self.tied)
        return other

    def set_score(self, position: int, value: float) -> None:
        """Store a score, keeping the best and its positions when they are known."""
        old = self.values[position]
        self.values[position] = value
        best = self.best
        if best is None or value == old:
            return
        tied = self.tied
        if value > best:
            self.best, self.tied = value, [position]
        elif value == best:
            insort(tied, position)
        elif old == best:
            del tied[bisect_left(tied, position)]
            if not tied:
                self.best = None  # found again from all values when next asked

    def top(self) -> tuple[float, list[int]]:
        """The best score and its positions (ascending; do not mutate)."""
        if self.best is None:
            values = self.values
            self.best = max(values, default=NO_SCORE)
            self.tied = list(compress(range(len(values)), map(self.best.__eq__, values)))
        return self.best, self.tied


class ScoreIndex:
    """Every node's memoised score per pod shape, refreshed only where nodes changed.

    Visiting all nodes for every pod costs nodes × pods dictionary lookups even
    when every answer is memoised. The index keeps, per pod shape, a column of
    node scores and a log of changed nodes; a query re-scores only the nodes
    changed since that shape's last query, then takes the maximum and the tied
    nodes in node order — exactly what the full visit would have found, so the
    tie-break (first, or the seeded uniform pick) sees the same list. Failure
    reasons (the diagnosis of a pod that fits nowhere) are kept the same way.

    The index lives on its state (``ClusterState.watchers``), which reports
    every change and added node to it, so it outlives one placement call; a
    copy of the state gets a clone that shares the columns until it writes one.
    """

    def __init__(self, node_names: tuple[str, ...]) -> None:
        self.names = node_names
        self._position = {name: i for i, name in enumerate(node_names)}
        self._changes: list[int] = []
        self._scores: dict[int, _Column] = {}
        self._keys: dict[int, _Column] = {}  # per static needs: each node's key (None: fails)
        self._owned: set[tuple[str, int]] = set()  # columns this clone may write
        self._own_positions = True
        self._table: NodeTable | None = None  # array scores (``vector``), made on first use

    def clone(self) -> ScoreIndex:
        other = ScoreIndex.__new__(ScoreIndex)
        other.names = self.names
        other._position = self._position
        other._changes = list(self._changes)
        other._scores = dict(self._scores)
        other._keys = dict(self._keys)
        other._owned = set()
        other._own_positions = self._own_positions = False
        self._owned = set()  # both share every column now: the first writer copies
        other._table = self._table.clone() if self._table is not None else None
        return other

    def table(
        self,
        read: Callable[[str], tuple[NodeInfo, NodeAlloc]],
        gpu_fits: Callable[[str, Any, Any], bool],
        key_of: Callable[[str, Any], int],
    ) -> NodeTable:
        """Every node's resources as arrays (``vector.NodeTable``), brought up to date
        from the change log."""
        if self._table is None:
            self._table = NodeTable()
        self._table.refresh(self.names, self._changes, read, gpu_fits, key_of)
        return self._table

    def covers(self, node_names: Sequence[str]) -> bool:
        """True when asked about exactly the indexed nodes, in their order."""
        return node_names is self.names or (
            len(node_names) == len(self.names) and tuple(node_names) == self.names
        )

    def changed(self, name: str, released: bool) -> None:
        """Log a change; ``released`` (resources given back) may make a node fit again."""
        position = self._position.get(name)
        if position is not None:
            self._changes.append(-1 - position if released else position)

    def added(self, name: str) -> None:
        """A node appended to the state: every column scores it at its next query."""
        if not self._own_positions:
            self._position = dict(self._position)
            self._own_positions = True
        self._position[name] = len(self.names)
        self.names = (*self.names, name)
        self._changes.append(-len(self.names))  # "released": never skipped as a non-fit

    def _stale(
        self, columns: dict[int, _Column], shape: int, empty: object, kind: str
    ) -> tuple[_Column, Iterable[int], set[int]]:
        """The shape's column (this index's own), the nodes changed since its last
        query, and those of them that got resources back."""
        column = columns.get(shape)
        size = len(self.names)
        if column is None:
            options = array("H", bytes(2 * size))
            column = columns[shape] = _Column([empty] * size, options, len(self._changes))
            self._owned.add((kind, shape))
            return column, range(size), set()
        if (kind, shape) not in self._owned:
            column = columns[shape] = column.copy()
            self._owned.add((kind, shape))
        if len(column.values) < size:
            grow = size - len(column.values)
            column.values.extend([empty] * grow)
            column.options.extend([0] * grow)
        changes = self._changes[column.seen :]
        column.seen = len(self._changes)
        stale = {c if c >= 0 else -1 - c for c in changes}
        return column, stale, {-1 - c for c in changes if c < 0}

    def positions(self, node_names: Sequence[str]) -> list[int] | None:
        """Index positions of ``node_names`` when all are indexed and in index order."""
        position = self._position
        try:
            found = [position[name] for name in node_names]
        except KeyError:
            return None
        if any(a >= b for a, b in zip(found, found[1:], strict=False)):
            return None
        return found

    def column(
        self, shape: int, score: Callable[[str], Scored], only: Iterable[int] | None = None
    ) -> tuple[list[float], array[int]]:
        """Every node's score and option index for the shape, brought up to date.
        ``only``: the positions that can score at all (a new column scores just those)."""
        fresh = shape not in self._scores
        column, stale, released = self._stale(self._scores, shape, NO_SCORE, "scores")
        if fresh and only is not None:
            stale = only
        scores, options, names = column.values, column.options, self.names
        for position in stale:
            if scores[position] == NO_SCORE and not fresh and position not in released:
                continue  # it did not fit, and it only lost resources since: still does not
            scored = score(names[position])
            if scored is None:
                column.set_score(position, NO_SCORE)
            else:
                column.set_score(position, scored[0])
                options[position] = scored[1]
        return scores, options

    def has(self, shape: int) -> bool:
        """True once the shape has a score column (later queries refresh changed nodes)."""
        return shape in self._scores

    def node_keys(
        self, needs: int, key_of: Callable[[str], int | None], only: Iterable[int]
    ) -> list[int | None]:
        """Every node's memo key for pods with the static needs ``needs`` (None where a
        static rule refuses them), brought up to date; ``only``: the nodes that can pass
        the static rules at all (a new column asks just those; the rules never change
        their verdict on a node, so a refused node stays refused)."""
        fresh = needs not in self._keys
        column, stale, _ = self._stale(self._keys, needs, None, "keys")
        keys, names = column.values, self.names
        for position in only if fresh else stale:
            keys[position] = key_of(names[position])
        return keys

    def fill(
        self, shape: int, keys: Sequence[int | None], score: Callable[[str], Scored]
    ) -> tuple[list[float], array[int]]:
        """A new column for the shape, scoring one node per memo key (``node_keys``):
        nodes with equal keys score alike (that is the memo), so each key's score
        and option go to all of its nodes; the same values ``column`` finds visiting
        every node, at the cost of the distinct keys, not of the nodes."""
        assert shape not in self._scores
        column, _, _ = self._stale(self._scores, shape, NO_SCORE, "scores")
        groups: dict[int, list[int]] = {}
        for position, key in enumerate(keys):
            if key is not None:
                groups.setdefault(key, []).append(position)
        values, options, names = column.values, column.options, self.names
        for positions in groups.values():
            scored = score(names[positions[0]])
            if scored is not None:
                value, option = scored
                for position in positions:
                    values[position] = value
                    options[position] = option
        return values, options

    def top(self, shape: int) -> tuple[float, list[int]]:
        """The shape's best score over every node and the positions holding it, as of
        its last ``column`` call (NO_SCORE and every position when nothing fits)."""
        return self._scores[shape].top()
