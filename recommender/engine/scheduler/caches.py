"""What keeps placement affordable without changing a decision: its caches.

Thousands of placement calls on a 10,000-node state (the autoscaler's "what
if" probes) would each filter and score every node. These caches live on the
``ClusterState`` (``derived``, ``by_nodes``, ``watchers``) so that copies of
one state share them::

    SharedMemo   per (policy, grants, time, FGD mix), in ClusterState.derived:
                 filter context, static verdicts, scores per (pod shape, node key);
                 device options and the device rule's pick per (node key, GPU
                 request), FGD's score per (node key, GPU request, cpu left)
    ScoreIndex   (memo) per state and memo, a watcher of the state: every node's
                 score per pod shape, re-scored only where nodes changed (policies
                 without an array form: bestfit, most-allocated, random)
    NodeTable    (vector) per score index: every node's resources, GPU verdicts and
                 static verdicts as arrays, re-read only where nodes changed; the
                 scores of kube-default and FGD are array operations over it
    Layout       per node list, in ClusterState.by_nodes: topology paths, domains,
                 selector matches; extended (not rebuilt) when a node is added
    DomainFree   per state, a watcher: free GPU milli per topology domain

The algorithm (``placement``, ``pick``) reads them through the few methods
below; ``placement.place_unindexed`` is the reference that shows they change
no decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import TypeVar, cast

from topology.model.hardware import Cluster

from . import fgd
from .allocate import Option
from .filters import FilterContext, reserved_nodes_at
from .memo import NodeKeys, ScoreIndex
from .scores import Policy
from .state import ClusterState


class SharedMemo:
    """What placement calls on one state and its copies share: the filter context
    and every memo that depends only on the model, the options and node keys.

    Kept in ``ClusterState.derived`` per (policy, grants, time, FGD's typical
    pods): calls that agree on all of them score every node alike. The filter
    context depends on grants and time alone, so every policy gets the same one:
    what preemption keeps per node and filter context (``preemption``) serves
    the scheduler pass, the autoscaler's passes and the what-if alike.
    """

    def __init__(
        self,
        cluster: Cluster,
        filters: FilterContext,
        typical: tuple[fgd.TypicalPod, ...] | None,
    ) -> None:
        self.cluster = cluster
        self.filters = filters
        self.fragmentation = None if typical is None else fgd.FragmentationModel(typical)
        self.keys = NodeKeys()
        self.scores: dict[tuple[int, int], tuple[float, int] | None] = {}
        self.static: dict[tuple[int, str], str] = {}  # first failing static rule, "" if none
        # device options per (node key, GPU request); scores per (node key, GPU request,
        # what else the policy reads of the pod: ``Policy.pod_inputs``)
        self.gpu_options: dict[tuple[int, object], list[Option] | str] = {}
        self.by_inputs: dict[tuple[int, object, object], tuple[float, int] | None] = {}
        self.device_choice: dict[tuple[int, object], int] = {}  # the device rule's option
        # ``by_inputs``'s scores per GPU request, by node key × buckets + inputs (``vector``)
        self.by_code: dict[object, dict[int, float]] = {}
        # GPU verdicts per (``allocate.gpu_fit_key``, GPU request) (``vector`` masks)
        self.gpu_fit: dict[tuple[object, object], bool] = {}
        # the GPU rule's reason ("" when it passes) per (``NodeKeys.gpu_key``, GPU request)
        self.gpu_reasons: dict[tuple[int, object], str] = {}
        # FGD's device choices per (node inputs, GPU request) (``pick.scoring``)
        self.fgd_choices: dict[tuple[int, object], fgd.Choices] = {}

    @classmethod
    def of(
        cls,
        cluster: Cluster,
        state: ClusterState,
        grants: Mapping[str, frozenset[str]],
        at: datetime | None,
        policy: Policy,
        typical: tuple[fgd.TypicalPod, ...] | None,
        partitionable_devices: bool = True,
    ) -> SharedMemo:
        grants_key = tuple(sorted((k, tuple(sorted(v))) for k, v in grants.items()))
        key = ("placement", policy.name, grants_key, at, typical, partitionable_devices)
        found = state.derived.get(key)
        if isinstance(found, SharedMemo) and only_pending_differ(found.cluster, cluster):
            return found
        filters = kept(
            state,
            ("filter context", grants_key, at, partitionable_devices),
            cluster,
            lambda: FilterContext.build(
                cluster, grants, at, _reserved_for(cluster, state, at), partitionable_devices
            ),
        )
        memo = cls(cluster, filters, typical)
        state.derived[key] = memo
        return memo


def only_pending_differ(kept_from: Cluster, cluster: Cluster) -> bool:
    """Whether ``cluster`` is ``kept_from`` but for its pending pods (and gangs): every
    other field the same object, the bound pods the same objects in the same order (an
    edit of a pending workload, ``evaluate.edits``). A ``SharedMemo`` reads nothing of
    the pending pods (its filter context reads the nodes, device classes and
    reservations; its verdicts and scores are kept per pod shape and node key), so both
    share one: the relaxations' plans keep the score index, the array tables and the
    preemption candidates of the state they start from."""
    if kept_from is cluster:
        return True
    for name in _BESIDES_PENDING:
        if getattr(kept_from, name) is not getattr(cluster, name):
            return False
    bound = [p for p in cluster.pods if p.node_name is not None]
    kept_bound = [p for p in kept_from.pods if p.node_name is not None]
    return len(bound) == len(kept_bound) and all(
        a is b for a, b in zip(bound, kept_bound, strict=True)
    )


_BESIDES_PENDING = tuple(f.name for f in fields(Cluster) if f.name not in ("pods", "gangs"))


def _reserved_for(
    cluster: Cluster, state: ClusterState, at: datetime | None
) -> Mapping[str, frozenset[str]]:
    """Which namespaces hold each reserved node: the same for every call at ``at``."""
    return kept(state, ("reserved nodes", at), cluster, lambda: reserved_nodes_at(cluster, at))


_T = TypeVar("_T")


def kept(state: ClusterState, key: object, source: object, compute: Callable[[], _T]) -> _T:
    """``compute()`` once for a state and its copies, while ``source`` (the object it
    is computed from) is the same object."""
    found = state.derived.get(key)
    if isinstance(found, tuple) and found[0] is source:
        return cast(_T, found[1])
    value = compute()
    state.derived[key] = (source, value)
    return value


class DomainFree:
    """Free GPU milli per topology domain, kept on the state across placement calls
    (a ``ClusterState`` watcher): a domain's sum is dropped when one of its nodes
    changes or joins, and summed again when next asked."""

    def __init__(self) -> None:
        self._free: dict[int, dict[tuple[str, ...], int]] = {}  # level → domain key → milli
        self._dirty: set[str] = set()

    @classmethod
    def of(cls, state: ClusterState) -> DomainFree:
        return state.watcher(cls)

    def changed(self, name: str, released: bool) -> None:
        self._dirty.add(name)

    def added(self, name: str) -> None:
        self._dirty.add(name)

    def clone(self) -> DomainFree:
        other = DomainFree()
        other._free = {level: dict(free) for level, free in self._free.items()}
        other._dirty = set(self._dirty)
        return other

    def of_level(self, layout: Layout, level_index: int) -> dict[tuple[str, ...], int]:
        """The level's kept sums (the caller fills in missing domains)."""
        if self._dirty:
            for level, free in self._free.items():
                of = layout.domain_of(level)
                for name in self._dirty:
                    key = of.get(name)
                    if key is not None:
                        free.pop(key, None)
            self._dirty.clear()
        return self._free.setdefault(level_index, {})


def index_of(state: ClusterState, shared: SharedMemo) -> ScoreIndex:
    """The state's score index for calls sharing ``shared`` (made on first use; the
    state keeps it up to date and hands copies a clone)."""
    index = state.watchers.get(shared)
    if not isinstance(index, ScoreIndex) or not index.covers(state.node_names()):
        index = ScoreIndex(state.node_names())
        state.watchers[shared] = index
    return index


Selector = tuple[tuple[str, str], ...]


class Layout:
    """What placement derives from the node list alone, for every call on states with
    that list (``ClusterState.by_nodes``): topology paths, each level's domains,
    node positions per shared path prefix (what gang closeness searches) and per
    nodeSelector. A state that adds a node gets an extended copy, not a rebuild.
    """

    def __init__(self, cluster: Cluster, state: ClusterState) -> None:
        self.cluster = cluster
        self.names = state.node_names()
        self.paths = PathCache(cluster, state)
        self._info = state.info  # the same NodeInfo for a name in every state sharing this
        self._domains: dict[int, dict[tuple[str, ...], list[str]]] = {}
        self._domain_of: dict[int, dict[str, tuple[str, ...]]] = {}
        self._prefixes: dict[int, dict[tuple[str | None, ...], list[int]]] = {}
        self._matching: dict[tuple[tuple[str, str], ...], list[int]] = {}
        self._scopes: dict[int, tuple[Sequence[str], Scope]] = {}
        self._by_label: dict[str, dict[str, list[str]]] = {}
        self._domains_matching: dict[tuple[int, Selector], set[tuple[str, ...]]] = {}

    @classmethod
    def of(cls, cluster: Cluster, state: ClusterState) -> Layout:
        key = ("placement layout", cluster.topology)
        found = state.by_nodes.get(key)
        if isinstance(found, Layout) and found.names is state.node_names():
            return found
        layout = cls(cluster, state)
        state.by_nodes[key] = layout
        return layout

    def extended(self, state: ClusterState, name: str) -> Layout:
        """This layout with ``name`` appended (the state has just added it). What is
        computed already is copied and grown; every changed list is a new list, so
        the states still sharing this layout see it unchanged."""
        other = Layout.__new__(Layout)
        other.cluster, other.names, other._info = self.cluster, state.node_names(), state.info
        other.paths = PathCache(self.cluster, state)  # filled again lazily from NodeInfo
        path, labels = other.paths[name], state.info(name).node.labels
        position = len(other.names) - 1
        other._domains, other._domain_of = {}, {}
        for level_index, domains in self._domains.items():
            grown, of = dict(domains), dict(self._domain_of[level_index])
            if path[level_index] is not None:
                key = _domain_key(path, level_index)
                grown[key] = [*grown.get(key, ()), name]
                of[name] = key
            other._domains[level_index], other._domain_of[level_index] = grown, of
        other._prefixes = {}
        for shared, by_prefix in self._prefixes.items():
            grown_prefixes = dict(by_prefix)
            if None not in path[:shared]:
                grown_prefixes[path[:shared]] = [*by_prefix.get(path[:shared], ()), position]
            other._prefixes[shared] = grown_prefixes
        other._matching = {
            selector: [*positions, position] if _matches(labels, selector) else positions
            for selector, positions in self._matching.items()
        }
        other._scopes = {}
        other._domains_matching = {}
        other._by_label = {}
        for label, groups in self._by_label.items():
            value = labels.get(label)
            grown_groups = dict(groups)
            if value is not None:
                grown_groups[value] = [*groups.get(value, ()), name]
            other._by_label[label] = grown_groups
        return other

    def by_label(self, key: str) -> dict[str, list[str]]:
        found = self._by_label.get(key)
        if found is None:
            found = {}
            info = self._info
            for name in self.names:
                value = info(name).node.labels.get(key)
                if value is not None:
                    found.setdefault(value, []).append(name)
            self._by_label[key] = found
        return found

    def scope(self, node_names: Sequence[str], index: ScoreIndex) -> Scope:
        """``node_names`` (this layout's node list or one of its domains) with their
        index positions, kept per list object."""
        found = self._scopes.get(id(node_names))
        if found is not None and found[0] is node_names:
            return found[1]
        if index.covers(node_names):
            scope = Scope(node_names, list(range(len(node_names))), None)
        else:
            positions = index.positions(node_names)
            scope = Scope(node_names, positions, None if positions is None else set(positions))
        self._scopes[id(node_names)] = (node_names, scope)
        return scope

    def domains(self, level_index: int) -> dict[tuple[str, ...], list[str]]:
        """The level's domains: key → nodes in node order, in first-node order."""
        domains = self._domains.get(level_index)
        if domains is not None:
            return domains
        domains, of = {}, {}
        for name in self.names:
            path = self.paths[name]
            if path[level_index] is None:
                continue  # unknown at this level: never guessed into a domain
            key = _domain_key(path, level_index)
            domains.setdefault(key, []).append(name)
            of[name] = key
        self._domains[level_index], self._domain_of[level_index] = domains, of
        return domains

    def domain_of(self, level_index: int) -> dict[str, tuple[str, ...]]:
        self.domains(level_index)
        return self._domain_of[level_index]

    def matching(self, selector: Mapping[str, str]) -> list[int]:
        """Positions of the nodes whose labels hold every ``selector`` entry."""
        key = tuple(sorted(selector.items()))
        found = self._matching.get(key)
        if found is None:
            info = self._info
            found = [p for p, n in enumerate(self.names) if _matches(info(n).node.labels, key)]
            self._matching[key] = found
        return found

    def domains_matching(
        self, level_index: int, selector: Mapping[str, str]
    ) -> set[tuple[str, ...]]:
        """The level's domains holding at least one node whose labels hold ``selector``."""
        key = (level_index, tuple(sorted(selector.items())))
        found = self._domains_matching.get(key)
        if found is None:
            of = self.domain_of(level_index)
            names = self.names
            found = {of[names[p]] for p in self.matching(selector) if names[p] in of}
            self._domains_matching[key] = found
        return found

    def prefix_positions(self, shared: int) -> dict[tuple[str | None, ...], list[int]]:
        """Node positions by their path's first ``shared`` levels (all known)."""
        by_prefix = self._prefixes.get(shared)
        if by_prefix is None:
            by_prefix = {}
            for position, name in enumerate(self.names):
                prefix = self.paths[name][:shared]
                if None not in prefix:
                    by_prefix.setdefault(prefix, []).append(position)
            self._prefixes[shared] = by_prefix
        return by_prefix


def _domain_key(path: tuple[str | None, ...], level_index: int) -> tuple[str, ...]:
    """A domain's key: its path down to the level. An outer level may be unknown (no
    region label, say): the known values below it still name the domain, with ""
    for the unknown ones."""
    return tuple(v or "" for v in path[: level_index + 1])


def _matches(labels: Mapping[str, str], selector: tuple[tuple[str, str], ...]) -> bool:
    return all(labels.get(k) == v for k, v in selector)


@dataclass(frozen=True, slots=True)
class Scope:
    """The nodes a pod may go to, with their score-index positions when indexed
    (ascending) and, for a strict subset, those positions as a set."""

    names: Sequence[str]
    positions: list[int] | None
    members: set[int] | None


class PathCache(dict[str, tuple[str | None, ...]]):
    """Topology path per node name, computed on first use (nodes may be added later)."""

    def __init__(self, cluster: Cluster, state: ClusterState) -> None:
        super().__init__()
        self._topology = cluster.topology
        self._state = state

    def __missing__(self, name: str) -> tuple[str | None, ...]:
        path = self[name] = self._state.info(name).path(self._topology)
        return path
