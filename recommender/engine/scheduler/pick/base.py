"""What every part of the picker shares: the state and the caches it reads through
(``caches.SharedMemo``), the scope of a search, and the node accessors: a pod's
shape and static needs, a node's memo key, the static rules' verdict kept per
(static needs, node), and the filter context with the pod's PreFilter state."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from topology.model.hardware import Cluster, Pod
from topology.model.terms import Taint

from .. import interpod, preferred_score, vector
from ..caches import Layout, Scope, SharedMemo, index_of, kept
from ..filters import STATIC_RULES, FilterContext
from ..memo import memoisable, pod_shape
from ..records import NodeAlloc, NodeInfo
from ..scores import Policy, ScoreContext
from ..state import ClusterState
from .closeness import closeness_weight


class PickerBase:
    """The state of a ``picker.NodePicker`` and the node accessors its scoring
    (``scoring``) and its reasons (``reasons``) both read."""

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        policy: Policy,
        shared: SharedMemo,
        seed: int,
        indexed: bool,
    ) -> None:
        self.state = state
        self.policy = policy
        self.filters = shared.filters
        self.scores = ScoreContext(rng=random.Random(seed))
        # tie_break "round-robin": the node position the next search starts from
        self.cursor = 0
        self._cluster = cluster
        self._taints: dict[str, tuple[Taint, ...]] = {}  # PreferNoSchedule, per node
        self.layout = Layout.of(cluster, state)
        self.scores.paths = self.layout.paths
        self._keys = shared.keys
        self._memo = shared.scores
        self._gpu_reasons = shared.gpu_reasons
        self._static = shared.static
        self._gpu_options = shared.gpu_options
        self._by_inputs = shared.by_inputs
        self._device_choice = shared.device_choice
        self._by_code = shared.by_code
        self._gpu_fit = shared.gpu_fit
        self._fgd_choices = shared.fgd_choices
        self._needs: dict[int, tuple[Pod, int]] = {}  # id(pod) → (pod, its static needs)
        self._without_selector: dict[int, tuple[Pod, Pod]] = {}  # id(pod) → (pod, selector-free)
        self.index = index_of(state, shared) if indexed else None
        # the policy's scores as arrays over every node (``vector``), no column per shape
        self.vector = indexed and vector.supports(policy)
        # which pods depend on the pods placed around a node (never memoised)
        self._inter_pod = kept(
            state, "inter-pod index", cluster, lambda: interpod.InterPodIndex(cluster)
        )
        self._preferred = kept(
            state, "preferred index", cluster, lambda: preferred_score.PreferredIndex(cluster)
        )
        self.scores.fragmentation = shared.fragmentation
        # Memoised scores are computed without the gang's members (``base``);
        # closeness to them is added per node (see ``closeness_weight``).
        self._base = ScoreContext(
            rng=self.scores.rng, paths=self.scores.paths, fragmentation=self.scores.fragmentation
        )
        self._depth = len(cluster.topology.levels)
        weight = closeness_weight(self.policy)
        self._closeness_weight = 0.0 if self._depth == 0 and weight is not None else weight

    def restart(self, seed: int) -> None:
        """As a fresh picker: the seeded tie-break restarts, no gang member carries over."""
        self.scores.rng = self._base.rng = random.Random(seed)
        self.scores.member_paths = []

    def scope(self, node_names: Sequence[str]) -> Scope:
        if self.index is None:
            return Scope(node_names, None, None)
        return self.layout.scope(node_names, self.index)

    def shape(self, pod: Pod) -> int | None:
        """The memo id of the pod's shape, or None when its score cannot be memoised."""
        if self.index is not None and memoisable(pod) and not self._inter_pod.sensitive(pod):
            namespace = self.filters.namespace_class(pod.namespace)
            return self._keys.intern(("pod", *pod_shape(pod, namespace)))
        return None

    def _node_key(self, name: str) -> int:
        personal = bool(self.filters.granted) or name in self.filters.reserved_for
        return self._keys.key(self.state.info(name), self.state.alloc(name), personal)

    def _index_names(self) -> tuple[str, ...]:
        assert self.index is not None
        return self.index.names

    def _static_ok(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> bool:
        return not self._static_reason(info, alloc, pod)

    def _static_reason(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> str:
        """The first failing rule that reads no free resources ("" when none fails),
        once per (pod's static needs, node)."""
        key = (self._needs_of(pod), info.node.name)
        reason = self._static.get(key)
        if reason is None:
            reason = self._static[key] = next(
                (s.reason for r in STATIC_RULES if not (s := r(info, alloc, pod, self.filters)).ok),
                "",
            )
        return reason

    def _needs_of(self, pod: Pod) -> int:
        """The id of what the static rules read of the pod (kept per pod object)."""
        cached = self._needs.get(id(pod))
        if cached is None or cached[0] is not pod:
            needs = self._keys.intern(
                (
                    "static",
                    self.filters.namespace_class(pod.namespace),
                    pod.tolerations,
                    tuple(sorted(pod.node_selector.items())),
                    pod.affinity,
                )
            )
            cached = self._needs[id(pod)] = (pod, needs)
        return cached[1]

    def _context(self, pod: Pod) -> FilterContext:
        """The filter context, with the pod's PreFilter state (``interpod.prefilter``,
        once per pod and state change) when the pods placed around a node matter to it."""
        if not self._inter_pod.sensitive(pod):
            return self.filters
        cycles = interpod.PodCycles.of(self.state)
        context = cycles.get(pod)
        gate = self.filters.partitionable_devices  # a context kept for another gate is stale
        if not isinstance(context, FilterContext) or context.partitionable_devices != gate:
            state = self.state
            nodes = ((state.node(n), state.alloc(n).placed) for n in state.node_names())
            cycle = interpod.prefilter(pod, nodes, self._inter_pod.namespace_labels)
            context = cycles.put(pod, replace(self.filters, cycle=cycle))
        return context
