"""Labels, taints and the terms pods are placed by: the scheduling constraints of the
one hardware model (``topology.model.hardware`` re-exports every name here).

Taints and tolerations (TaintToleration), node selector terms (NodeAffinity), pod
selectors, pod (anti-)affinity terms (InterPodAffinity) and topology spread
constraints (PodTopologySpread), as kube-scheduler reads them.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# --- scheduling constraints ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""  # empty key with operator Exists tolerates everything
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty matches all effects

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One nodeSelectorRequirement: In, NotIn, Exists, DoesNotExist, Gt, Lt.

    ``origin`` says which kube-scheduler plugin the requirement belongs to: ""
    for the pod's own node affinity, ``VolumeBinding`` / ``VolumeZone`` for one
    merged in from a volume (so a node that fails it gets that plugin's reason).
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    origin: str = ""

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.operator
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if op in ("Gt", "Lt"):
            if value is None or not _is_int(value) or not self.values:
                return False
            bound = int(self.values[0])
            return int(value) > bound if op == "Gt" else int(value) < bound
        return False


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Requirements ANDed; the terms of a node affinity are ORed."""

    requirements: tuple[LabelRequirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


# --- inter-pod constraints (InterPodAffinity, PodTopologySpread) ---------------


@dataclass(frozen=True, slots=True)
class PodSelector:
    """A metav1.LabelSelector over pod (or namespace) labels: requirements ANDed.

    ``nothing`` is the nil selector, which matches no pod (as
    ``LabelSelectorAsSelector(nil)`` does); no requirements match every pod.
    """

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """``{}``: matches everything (PodTopologySpread counts no pod with it)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.nothing and all(r.matches(labels) for r in self.requirements)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """One required (anti-)affinity term: pods matching ``selector`` in ``namespaces``
    (or in namespaces matching ``namespace_selector``) within ``topology_key``.

    ``namespaces`` is already defaulted: a term naming neither namespaces nor a
    namespaceSelector means the owning pod's own namespace."""

    selector: PodSelector
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: PodSelector | None = None  # None: not given (matches no namespace)

    def matches(
        self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]
    ) -> bool:
        """kube-scheduler's ``AffinityTerm.Matches``: namespace first, then labels."""
        selected = self.namespace_selector
        if namespace in self.namespaces or (
            selected is not None and selected.matches(namespace_labels)
        ):
            return self.selector.matches(labels)
        return False


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One DoNotSchedule topologySpreadConstraint, matchLabelKeys merged into
    ``selector``; defaults as kube-scheduler's: minDomains 1, nodeAffinityPolicy
    Honor, nodeTaintsPolicy Ignore."""

    max_skew: int
    topology_key: str
    selector: PodSelector
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False


@dataclass(frozen=True, slots=True)
class PodPlacementTerms:
    """What a pod asks of the pods around it (required terms only: they filter)."""

    affinity: tuple[PodAffinityTerm, ...] = ()
    anti_affinity: tuple[PodAffinityTerm, ...] = ()
    spread: tuple[SpreadConstraint, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.affinity or self.anti_affinity or self.spread)


NO_POD_TERMS = PodPlacementTerms()


@dataclass(frozen=True, slots=True)
class HostPort:
    """One container port bound on the node (NodePorts): what two pods on one node
    may not both ask for. ``ip`` "0.0.0.0" (the default) conflicts with every IP."""

    ip: str
    protocol: str
    port: int

    def conflicts(self, other: HostPort) -> bool:
        """upstream ``HostPortInfo.CheckConflict`` (pkg/scheduler/framework/types.go)."""
        if self.port != other.port or self.protocol != other.protocol:
            return False
        return BIND_ALL_HOST_IP in (self.ip, other.ip) or self.ip == other.ip


BIND_ALL_HOST_IP = "0.0.0.0"


# --- preferred terms (Score only: NodeAffinity, InterPodAffinity, PodTopologySpread) ---


@dataclass(frozen=True, slots=True)
class WeightedNodeTerm:
    """One ``preferredDuringSchedulingIgnoredDuringExecution`` node affinity term."""

    weight: int
    term: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class WeightedPodTerm:
    """One preferred pod (anti-)affinity term (``WeightedPodAffinityTerm``)."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class PreferredTerms:
    """What a pod prefers: it never filters, it only scores (kube-scheduler's default
    profile: NodeAffinity, InterPodAffinity and PodTopologySpread Score)."""

    node: tuple[WeightedNodeTerm, ...] = ()
    affinity: tuple[WeightedPodTerm, ...] = ()
    anti_affinity: tuple[WeightedPodTerm, ...] = ()
    spread: tuple[SpreadConstraint, ...] = ()  # the ScheduleAnyway constraints

    def __bool__(self) -> bool:
        return bool(self.node or self.affinity or self.anti_affinity or self.spread)


NO_PREFERRED = PreferredTerms()
