"""The default profile's preferred scores: NodeAffinity, InterPodAffinity, PodTopologySpread.

Upstream (kubernetes/kubernetes, ``pkg/scheduler/framework/plugins/``), each plugin's
Score then NormalizeScore over the nodes that passed Filter, weighted 2 each in the
default profile (``apis/config/v1/default_plugins.go``):

- NodeAffinity (``nodeaffinity/node_affinity.go`` ``Score``): the sum of the weights of
  the pod's preferred terms the node matches (a term without requirements matches no
  node); ``NormalizeScore`` is ``helper.DefaultNormalizeScore(100, false, …)``:
  ``100·score / max`` (integer division), all 0 when the max is 0.
- InterPodAffinity (``interpodaffinity/scoring.go``): ``PreScore`` walks every placed
  pod (``processExistingPod``): the pod's preferred affinity terms it matches add their
  weight, preferred anti-affinity terms subtract it; the placed pod's required affinity
  terms the incoming pod matches add ``hardPodAffinityWeight`` (1, ``defaults.go``), its
  preferred affinity terms add their weight and its preferred anti-affinity terms
  subtract it; each to the (topologyKey, value) of the placed pod's node (a node without
  labels counts nothing). ``Score`` sums the node's pairs; ``NormalizeScore`` is min-max:
  ``int(100·(s − min)/(max − min))``, all 0 when max = min; nothing at all when no pair
  was counted.
- PodTopologySpread (``podtopologyspread/scoring.go``), the ScheduleAnyway constraints:
  a feasible node lacking a constraint's key is ignored (score 0). Per constraint, the
  matching pods (same namespace, ``countPodsMatchSelector``) in each domain of a
  feasible node, counted on every node with all keys that passes the constraint's
  inclusion policies; hostname: the node's own pods. A node's score is
  ``round(Σ count·log(size + 2) + maxSkew − 1)`` (size: the constraint's domains among
  feasible nodes, or the feasible non-ignored nodes for hostname); ``NormalizeScore``:
  ``100·(max + min − s) / max``, 100 everywhere when max is 0.

The cluster's default spread constraints (``buildDefaultConstraints``: zone and
hostname for pods a Service, ReplicaSet or StatefulSet selects) are not applied: the
model does not keep owners or Services (docs/FIDELITY.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from topology.model.hardware import Cluster, Node, Pod, PodAffinityTerm, SpreadConstraint

from .interpod import NO_LABELS, count_matching, included

HOSTNAME = "kubernetes.io/hostname"
MAX_NODE_SCORE = 100
HARD_POD_AFFINITY_WEIGHT = 1  # InterPodAffinityArgs default (apis/config/v1/defaults.go)
# default_plugins.go: NodeAffinity 2, InterPodAffinity 2, PodTopologySpread 2
NODE_AFFINITY_WEIGHT = INTER_POD_AFFINITY_WEIGHT = POD_TOPOLOGY_SPREAD_WEIGHT = 2

Placed = Sequence[tuple[Node, Sequence[Pod]]]
NamespaceLabels = Mapping[str, Mapping[str, str]]


class PreferredIndex:
    """The placed pods' terms that may score an incoming pod, once per cluster."""

    def __init__(self, cluster: Cluster) -> None:
        self.namespace_labels: NamespaceLabels = cluster.namespace_labels
        terms: list[PodAffinityTerm] = []
        for pod in cluster.pods:
            terms.extend(pod.pod_terms.affinity)
            terms.extend(w.term for w in (*pod.preferred.affinity, *pod.preferred.anti_affinity))
        self.terms = tuple(dict.fromkeys(terms))
        self._applies: dict[int, tuple[Pod, bool]] = {}

    def applies(self, pod: Pod) -> bool:
        """Whether any of the three scores can tell the pod's feasible nodes apart."""
        if pod.preferred:
            return True
        if not self.terms:
            return False
        found = self._applies.get(id(pod))
        if found is None or found[0] is not pod:
            labels = self.namespace_labels.get(pod.namespace, NO_LABELS)
            verdict = any(t.matches(pod.namespace, pod.labels, labels) for t in self.terms)
            found = self._applies[id(pod)] = (pod, verdict)
        return found[1]


def preferred_scores(
    pod: Pod, feasible: Sequence[Node], placed: Placed, namespace_labels: NamespaceLabels
) -> dict[str, float]:
    """Per feasible node, the weighted sum of the three normalised scores."""
    parts = (
        (NODE_AFFINITY_WEIGHT, node_affinity(pod, feasible)),
        (INTER_POD_AFFINITY_WEIGHT, inter_pod_affinity(pod, feasible, placed, namespace_labels)),
        (POD_TOPOLOGY_SPREAD_WEIGHT, topology_spread(pod, feasible, placed)),
    )
    return {
        node.name: float(sum(weight * scores.get(node.name, 0) for weight, scores in parts))
        for node in feasible
    }


def node_affinity(pod: Pod, feasible: Sequence[Node]) -> dict[str, int]:
    """NodeAffinity's normalised score (module docstring); empty: PreScore skips."""
    terms = [w for w in pod.preferred.node if w.weight and w.term.requirements]
    if not pod.preferred.node:
        return {}
    raw = {
        node.name: sum(w.weight for w in terms if w.term.matches(node.labels)) for node in feasible
    }
    top = max(raw.values(), default=0)
    if top == 0:
        return raw
    return {name: MAX_NODE_SCORE * score // top for name, score in raw.items()}


def inter_pod_affinity(
    pod: Pod, feasible: Sequence[Node], placed: Placed, namespace_labels: NamespaceLabels
) -> dict[str, int]:
    """InterPodAffinity's normalised score (module docstring); empty: nothing counted."""
    counts = _topology_counts(pod, placed, namespace_labels)
    if not counts:
        return {}
    raw = {
        node.name: sum(
            counts.get((key, value), 0)
            for key, value in node.labels.items()
            if (key, value) in counts
        )
        for node in feasible
    }
    low, high = min(raw.values(), default=0), max(raw.values(), default=0)
    if high == low:
        return dict.fromkeys(raw, 0)
    return {
        name: int(MAX_NODE_SCORE * ((score - low) / (high - low))) for name, score in raw.items()
    }


def _topology_counts(
    pod: Pod, placed: Placed, namespace_labels: NamespaceLabels
) -> dict[tuple[str, str], int]:
    """``processExistingPod`` over every placed pod: (topologyKey, value) → weight sum."""
    own = namespace_labels.get(pod.namespace, NO_LABELS)
    counts: dict[tuple[str, str], int] = {}
    mine = pod.preferred
    for node, pods in placed:
        labels = node.labels
        if not labels:
            continue
        for other in pods:
            theirs = namespace_labels.get(other.namespace, NO_LABELS)
            weighted = [
                *((w.term, w.weight, other, theirs) for w in mine.affinity),
                *((w.term, -w.weight, other, theirs) for w in mine.anti_affinity),
                *((t, HARD_POD_AFFINITY_WEIGHT, pod, own) for t in other.pod_terms.affinity),
                *((w.term, w.weight, pod, own) for w in other.preferred.affinity),
                *((w.term, -w.weight, pod, own) for w in other.preferred.anti_affinity),
            ]
            for term, weight, target, ns_labels in weighted:
                value = labels.get(term.topology_key)
                if value is not None and term.matches(target.namespace, target.labels, ns_labels):
                    pair = (term.topology_key, value)
                    counts[pair] = counts.get(pair, 0) + weight
    return counts


def topology_spread(pod: Pod, feasible: Sequence[Node], placed: Placed) -> dict[str, int]:
    """PodTopologySpread's normalised score (module docstring); empty: PreScore skips."""
    constraints = pod.preferred.spread
    if not constraints:
        return {}
    ignored = {n.name for n in feasible if not _has_keys(n, constraints)}
    counts: list[dict[str, int]] = [
        {n.labels[c.topology_key]: 0 for n in feasible if n.name not in ignored}
        for c in constraints
    ]
    pods_on = {node.name: pods for node, pods in placed}
    for node, pods in placed:
        if not _has_keys(node, constraints):
            continue
        for index, constraint in enumerate(constraints):
            key = constraint.topology_key
            value = node.labels[key]
            if key == HOSTNAME or value not in counts[index]:
                continue
            if included(constraint, pod, node):
                counts[index][value] += count_matching(constraint, pod.namespace, pods)
    sizes = [
        len(feasible) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])
        for i, c in enumerate(constraints)
    ]
    raw: dict[str, int] = {}
    for node in feasible:
        if node.name in ignored:
            continue
        score = 0.0
        for index, constraint in enumerate(constraints):
            if constraint.topology_key == HOSTNAME:
                count = count_matching(constraint, pod.namespace, pods_on.get(node.name, ()))
            else:
                count = counts[index][node.labels[constraint.topology_key]]
            score += count * math.log(sizes[index] + 2) + constraint.max_skew - 1
        raw[node.name] = math.floor(score + 0.5)  # Go math.Round (score >= 0)
    return _normalise_spread(raw, feasible)


def _has_keys(node: Node, constraints: Sequence[SpreadConstraint]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


def _normalise_spread(raw: Mapping[str, int], feasible: Sequence[Node]) -> dict[str, int]:
    """``PodTopologySpread.NormalizeScore``: fewer matching pods score more; ignored 0."""
    low = min(raw.values(), default=0)
    high = max(raw.values(), default=0)
    out = {}
    for node in feasible:
        score = raw.get(node.name)
        if score is None:
            out[node.name] = 0
        elif high == 0:
            out[node.name] = MAX_NODE_SCORE
        else:
            out[node.name] = MAX_NODE_SCORE * (high + low - score) // high
    return out
