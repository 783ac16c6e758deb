"""InterPodAffinity and PodTopologySpread: may this pod run here, given the pods around?

Upstream (kubernetes/kubernetes, ``pkg/scheduler/framework/plugins/``):
``interpodaffinity/filtering.go`` and ``podtopologyspread/filtering.go``,
``common.go``. Both plugins work the same way, and so does this module:

::

    PreFilter (once per pod and state) ── every node's placed pods ──► PodCycle
        affinity:       (topologyKey, value) → pods matching ALL the pod's affinity terms
        anti-affinity:  (topologyKey, value) → pods matching one of its anti-affinity terms
        existing anti:  (topologyKey, value) → placed pods whose anti-affinity matches the pod
        spread:         per DoNotSchedule constraint, domain value → matching pods
                        (eligible nodes only), and the minimum over domains
    Filter (per node) ── the node's labels looked up in the cycle: O(terms), not O(pods)

Reasons are upstream's, checked in upstream's order (affinity, anti-affinity,
existing pods' anti-affinity; spread: a node lacking a key first).

Only *required* terms and DoNotSchedule constraints filter. Preferred terms and
ScheduleAnyway constraints only score: ``preferred_score`` computes them for the
kube-scheduler profiles; the parser also lists them as "not modelled (score
only)", which holds for the other profiles.

A pod is *sensitive* when its verdict on a node depends on the pods placed
around that node: it carries terms, or some pod's required anti-affinity term
matches it. Only sensitive pods leave the memoised fast path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from topology.model.hardware import Cluster, Node, Pod, PodAffinityTerm, SpreadConstraint

from .state import ClusterState

AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
SPREAD_MISSING_LABEL = f"{SPREAD_NOT_MATCH} (missing required label)"

Pair = tuple[str, str]  # (topology key, value)
NO_LABELS: Mapping[str, str] = {}
_T = TypeVar("_T")


@dataclass(slots=True)
class PodCycle:
    """One pod's PreFilter state over one cluster state (see the module picture)."""

    pod: Pod
    affinity_counts: dict[Pair, int] = field(default_factory=dict)
    anti_counts: dict[Pair, int] = field(default_factory=dict)
    existing_anti_counts: dict[Pair, int] = field(default_factory=dict)
    spread_counts: list[dict[str, int]] = field(default_factory=list)
    matches_own_affinity: bool = False


class InterPodIndex:
    """What a cluster's pods ask of each other, worked out once per cluster:
    namespace labels and every required anti-affinity term (which makes the pods
    it matches sensitive)."""

    def __init__(self, cluster: Cluster) -> None:
        self.namespace_labels = cluster.namespace_labels
        self.anti_terms: tuple[PodAffinityTerm, ...] = tuple(
            dict.fromkeys(t for p in cluster.pods for t in p.pod_terms.anti_affinity)
        )
        self._sensitive: dict[int, tuple[Pod, bool]] = {}

    def sensitive(self, pod: Pod) -> bool:
        """Whether the pod's verdict on a node depends on the pods placed around it."""
        if not self.anti_terms and not pod.pod_terms:
            return False
        found = self._sensitive.get(id(pod))
        if found is None or found[0] is not pod:
            labels = self.namespace_labels.get(pod.namespace, NO_LABELS)
            verdict = bool(pod.pod_terms) or any(
                t.matches(pod.namespace, pod.labels, labels) for t in self.anti_terms
            )
            found = self._sensitive[id(pod)] = (pod, verdict)
        return found[1]


def prefilter(
    pod: Pod,
    nodes: Iterable[tuple[Node, Sequence[Pod]]],
    namespace_labels: Mapping[str, Mapping[str, str]],
) -> PodCycle:
    """The pod's PreFilter state: ``nodes`` is every node with the pods placed on it."""
    terms = pod.pod_terms
    own_labels = namespace_labels.get(pod.namespace, NO_LABELS)
    cycle = PodCycle(pod, spread_counts=[{} for _ in terms.spread])
    cycle.matches_own_affinity = _matches_all(terms.affinity, pod, namespace_labels)
    for node, placed in nodes:
        labels = node.labels
        for other in placed:
            for term in other.pod_terms.anti_affinity:
                if term.matches(pod.namespace, pod.labels, own_labels):
                    _count(cycle.existing_anti_counts, labels, term.topology_key)
            if terms.affinity and _matches_all(terms.affinity, other, namespace_labels):
                for term in terms.affinity:
                    _count(cycle.affinity_counts, labels, term.topology_key)
            for term in terms.anti_affinity:
                if _matches(term, other, namespace_labels):
                    _count(cycle.anti_counts, labels, term.topology_key)
        if terms.spread:
            _count_spread(cycle, pod, node, placed)
    return cycle


def _matches(
    term: PodAffinityTerm, pod: Pod, namespace_labels: Mapping[str, Mapping[str, str]]
) -> bool:
    return term.matches(pod.namespace, pod.labels, namespace_labels.get(pod.namespace, NO_LABELS))


def _matches_all(
    terms: Sequence[PodAffinityTerm], pod: Pod, namespace_labels: Mapping[str, Mapping[str, str]]
) -> bool:
    """``podMatchesAllAffinityTerms``: false for no terms."""
    return bool(terms) and all(_matches(t, pod, namespace_labels) for t in terms)


def _count(counts: dict[Pair, int], labels: Mapping[str, str], key: str) -> None:
    value = labels.get(key)
    if value is not None:
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + 1


def _count_spread(cycle: PodCycle, pod: Pod, node: Node, placed: Sequence[Pod]) -> None:
    """``calPreFilterState``: a node counts only if it has every constraint's key and
    passes the constraint's node inclusion policies; its domain then exists (with 0
    matching pods if none match)."""
    constraints = pod.pod_terms.spread
    labels = node.labels
    if any(c.topology_key not in labels for c in constraints):
        return
    for index, constraint in enumerate(constraints):
        if not included(constraint, pod, node):
            continue
        matching = count_matching(constraint, pod.namespace, placed)
        counts = cycle.spread_counts[index]
        value = labels[constraint.topology_key]
        counts[value] = counts.get(value, 0) + matching


def included(constraint: SpreadConstraint, pod: Pod, node: Node) -> bool:
    """``matchNodeInclusionPolicies``: node affinity (Honor by default) and taints
    (Ignore by default; Honor drops nodes with an untolerated NoSchedule/NoExecute taint)."""
    labels = node.labels
    if constraint.honor_node_affinity:
        if any(labels.get(k) != v for k, v in pod.node_selector.items()):
            return False
        if pod.affinity and not any(term.matches(labels) for term in pod.affinity):
            return False
    if constraint.honor_node_taints:
        for taint in node.taints:
            if taint.effect == "PreferNoSchedule":
                continue
            if not any(t.tolerates(taint) for t in pod.tolerations):
                return False
    return True


def count_matching(constraint: SpreadConstraint, namespace: str, placed: Sequence[Pod]) -> int:
    """``countPodsMatchSelector``: pods of the same namespace, terminating ones bypassed
    (``pod.DeletionTimestamp != nil``); an empty selector counts none."""
    selector = constraint.selector
    if selector.empty:
        return 0
    return sum(
        1
        for p in placed
        if p.namespace == namespace and not p.terminating and selector.matches(p.labels)
    )


def fits(
    pod: Pod,
    node: Node,
    nodes: Iterable[tuple[Node, Sequence[Pod]]],
    namespace_labels: Mapping[str, Mapping[str, str]],
) -> bool:
    """Whether both filters pass ``node`` for the pod among ``nodes`` (every node with
    its pods, ``node`` included): one PreFilter, one Filter."""
    around = tuple(nodes)
    if not pod.pod_terms and not any(p.pod_terms.anti_affinity for _, ps in around for p in ps):
        return True
    cycle = prefilter(pod, around, namespace_labels)
    return not (spread_reason(node.labels, cycle) or affinity_reason(node.labels, cycle))


# --- Filter -------------------------------------------------------------------------


def affinity_reason(labels: Mapping[str, str], cycle: PodCycle) -> str:
    """InterPodAffinity's Filter: "" when the node passes, else upstream's reason."""
    if not _satisfies_affinity(labels, cycle):
        return AFFINITY_RULES_NOT_MATCH
    for term in cycle.pod.pod_terms.anti_affinity:
        value = labels.get(term.topology_key)
        if value is not None and cycle.anti_counts.get((term.topology_key, value), 0) > 0:
            return ANTI_AFFINITY_RULES_NOT_MATCH
    existing = cycle.existing_anti_counts
    if existing and any(existing.get(pair, 0) > 0 for pair in labels.items()):
        return EXISTING_ANTI_AFFINITY_NOT_MATCH
    return ""


def _satisfies_affinity(labels: Mapping[str, str], cycle: PodCycle) -> bool:
    """``satisfyPodAffinity``: every term's key on the node and a matching pod in its
    domain; or, when no pod anywhere matches and the pod matches its own terms, the
    first pod of its group may go to any node having the keys."""
    pods_exist = True
    for term in cycle.pod.pod_terms.affinity:
        value = labels.get(term.topology_key)
        if value is None:
            return False
        if cycle.affinity_counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not cycle.affinity_counts and cycle.matches_own_affinity


def spread_reason(labels: Mapping[str, str], cycle: PodCycle) -> str:
    """PodTopologySpread's Filter: ``matching + self - global minimum <= maxSkew`` per
    DoNotSchedule constraint; the minimum is 0 while fewer domains than minDomains."""
    pod = cycle.pod
    for index, constraint in enumerate(pod.pod_terms.spread):
        value = labels.get(constraint.topology_key)
        if value is None:
            return SPREAD_MISSING_LABEL
        counts = cycle.spread_counts[index]
        minimum = _global_minimum(counts, constraint.min_domains)
        self_match = 1 if constraint.selector.matches(pod.labels) else 0
        if counts.get(value, 0) + self_match - minimum > constraint.max_skew:
            return SPREAD_NOT_MATCH
    return ""


def _global_minimum(counts: Mapping[str, int], min_domains: int) -> int:
    if len(counts) < min_domains:  # minDomains is at least 1: no domain at all gives 0
        return 0
    return min(counts.values())


class PodCycles:
    """PreFilter states (kept as the caller's filter contexts) per pod, for one
    cluster state: a state watcher, forgotten on every change (a copy starts empty)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Pod, object]] = {}

    @classmethod
    def of(cls, state: ClusterState) -> PodCycles:
        return state.watcher(cls)

    def get(self, pod: Pod) -> object | None:
        found = self._kept.get(id(pod))
        return found[1] if found is not None and found[0] is pod else None

    def put(self, pod: Pod, value: _T) -> _T:
        self._kept[id(pod)] = (pod, value)
        return value

    def changed(self, name: str, released: bool) -> None:
        self._kept.clear()

    def added(self, name: str) -> None:
        self._kept.clear()

    def clone(self) -> PodCycles:
        return PodCycles()
