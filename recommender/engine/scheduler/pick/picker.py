"""One pod: filter the nodes, score the feasible (node, devices), pick the best.

::

    pod ──► static rules (kept per node) ──► resource and device rules
        ──► score per device option (policy) ──► best score; ties: first or seeded pick

For a pod whose verdict depends only on the node's template and free
resources (``memo.memoisable``), kube-default and FGD score every node at once
as arrays (``vector``); other policies' scores are memoised per (pod shape,
node key) and kept per node in the state's score index. Either way a pick
costs the nodes that changed, not every node's rules. Gang closeness is added
on top of the memoised score (see ``closeness_weight``). Also the per-node
failure reasons a diagnosis counts.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import compress
from operator import itemgetter

import numpy as np

from topology.model.hardware import Cluster, GpuRequest, Pod
from topology.model.terms import Taint

from .. import fgd, interpod, preferred_score, taint_score, vector
from ..allocate import (
    Option,
    claim_takes,
    gpu_device_state,
    gpu_fit_key,
    gpu_fits,
    gpu_options,
    with_devices,
)
from ..caches import Layout, Scope, SharedMemo, index_of, kept
from ..filters import POD_RULES, RESOURCE_RULES, STATIC_RULES, FilterContext, Status, run_filters
from ..memo import NO_SCORE, memoisable, pod_shape
from ..records import Allocation, NodeAlloc, NodeInfo, device_gpu_milli, pod_allocation_base
from ..scores import (
    MAX_SCORE,
    POD_INPUTS,
    SCORE_RULES,
    Candidate,
    Policy,
    ScoreContext,
)
from ..state import ClusterState

# a column's scores (``memo.ScoreIndex``) or an array of them (``vector``)
Scores = Sequence[float] | vector.Floats


@dataclass(frozen=True, slots=True)
class Choice:
    node: str
    allocation: Allocation
    gpu_milli: int


class NodePicker:
    """Filter and score the nodes for one pod, and pick one (kube-scheduler's
    scheduling cycle for a pod), through the caches of ``caches``."""

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
        self._reasons = shared.reasons
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

    def best_node(self, pod: Pod, scope: Scope) -> Choice | None:
        """Highest score wins; equal scores: the first, or a seeded uniform pick (as
        kube-scheduler's selectHost does) when the policy says "random"."""
        if self.policy.taint_toleration_weight:
            counts = self._intolerable_counts(pod, scope)
            preferred = self.policy.preferred_scores and self._preferred.applies(pod)
            if counts or preferred:
                return self._best_with_taints(pod, scope, counts, preferred)
        shape = self.shape(pod)
        members = self.scores.member_paths
        weight = self._closeness_weight
        indexed = self.index is not None and scope.positions is not None
        if shape is not None and indexed and self.policy.constant and scope.positions:
            return self._first_passing(pod, shape, scope)
        if shape is not None and indexed and (not members or weight is not None):
            assert self.index is not None
            options: Sequence[int] | None = None
            if self.vector:
                scores: Scores = self.vector_scores(pod)
                top = _top(scores)
            else:
                scores, options = self.column(pod, shape)
                top = self.index.top(shape)
            if members and weight:
                tied = self._closest_best(scores, top, scope, weight)
            elif scope.members is None:  # the whole index: its kept best
                top_score, tied = top
                tied = [] if top_score == NO_SCORE else tied
            else:
                tied = _best_positions(scores, scope)
            if not tied:
                return None
            position = tied[self._pick_among(tied)]
            name = self.index.names[position]
            if options is None:
                scored = self._memo_score(name, pod, shape)
                assert scored is not None and scored[0] == scores[position]
                return self._choice(name, pod, scored[1])
            return self._choice(name, pod, options[position])
        best: list[tuple[str, int]] = []
        best_score = float("-inf")
        for name in scope.names:
            scored = (
                self._memo_score(name, pod, shape)
                if shape is not None and (not members or weight == 0.0)
                else self._score_node(name, pod)
            )
            if scored is None:
                continue
            score, option_index = scored
            if score > best_score:
                best, best_score = [(name, option_index)], score
            elif score == best_score:
                best.append((name, option_index))
        if not best:
            return None
        if self.policy.tie_break == "round-robin":
            order = {name: position for position, name in enumerate(self.state.node_names())}
            chosen = self._pick_among([order[name] for name, _ in best])
        else:
            chosen = self._pick(len(best))
        name, option_index = best[chosen]
        return self._choice(name, pod, option_index)

    def _first_passing(self, pod: Pod, shape: int, scope: Scope) -> Choice | None:
        """A policy whose score is the same on every node (``Policy.constant``: the
        cluster-autoscaler's first fit): every node that passes ties, so the round-robin
        pick (``_pick_among``) is the first passing node at or after the cursor,
        wrapping. Found by visiting nodes from the cursor instead of scoring them all
        (the memo keeps each (shape, node key) verdict, so a pod that fits nowhere
        costs a lookup per node once its keys are known)."""
        assert scope.positions is not None and self.policy.tie_break == "round-robin"
        positions, names = scope.positions, self._index_names()
        start = bisect_left(positions, self.cursor)
        for position in (*positions[start:], *positions[:start]):
            scored = self._memo_score(names[position], pod, shape)
            if scored is not None:
                self.cursor = position + 1
                return self._choice(names[position], pod, scored[1])
        return None

    def _intolerable_counts(self, pod: Pod, scope: Scope) -> dict[str, int]:
        """Per node of the scope, the PreferNoSchedule taints the pod does not tolerate
        (``taint_score``); empty when there are none. A cluster whose nodes and node
        group templates carry no such taint (the common case) answers at once."""
        if not kept(self.state, "prefer-no-schedule taints", self._cluster, self._any_taint):
            return {}
        found = {}
        for name in scope.names:
            taints = self._taints.get(name)
            if taints is None:
                node = self.state.info(name).node
                taints = self._taints[name] = taint_score.prefer_taints((node,)).get(name, ())
            count = taint_score.intolerable(pod, taints) if taints else 0
            if count:
                found[name] = count
        return found

    def _any_taint(self) -> bool:
        nodes = (*self._cluster.nodes, *(g.template for g in self._cluster.node_groups))
        return bool(taint_score.prefer_taints(nodes))

    def _best_with_taints(
        self, pod: Pod, scope: Scope, counts: dict[str, int], preferred: bool = False
    ) -> Choice | None:
        """Every node of the scope scored in full, TaintToleration's normalised score added
        (weight × ``taint_score.normalized`` over the feasible nodes) and, when
        ``preferred``, the preferred scores (``preferred_score``), the best picked."""
        shape = self.shape(pod)
        members = self.scores.member_paths
        memoised = shape is not None and (not members or self._closeness_weight == 0.0)
        feasible: list[tuple[str, float, int]] = []
        for name in scope.names:
            scored = (
                self._memo_score(name, pod, shape)
                if memoised and shape is not None
                else self._score_node(name, pod)
            )
            if scored is not None:
                feasible.append((name, *scored))
        if not feasible:
            return None
        taint = taint_score.normalized(counts, (name for name, _, _ in feasible))
        weight = self.policy.taint_toleration_weight
        extra = self._preferred_scores(pod, [name for name, _, _ in feasible]) if preferred else {}
        totals = [
            (name, score + weight * taint[name] + extra.get(name, 0.0), option)
            for name, score, option in feasible
        ]
        best_score = max(total for _, total, _ in totals)
        best = [(name, option) for name, total, option in totals if total == best_score]
        name, option_index = best[self._pick(len(best))]
        return self._choice(name, pod, option_index)

    def _preferred_scores(self, pod: Pod, feasible: list[str]) -> dict[str, float]:
        """``preferred_score.preferred_scores`` over the feasible nodes and every placed pod."""
        state = self.state
        placed = [(state.node(n), state.alloc(n).placed) for n in state.node_names()]
        nodes = [state.node(n) for n in feasible]
        return preferred_score.preferred_scores(
            pod, nodes, placed, self._preferred.namespace_labels
        )

    def column(self, pod: Pod, shape: int) -> tuple[list[float], Sequence[int]]:
        """Every indexed node's score for the pod's shape (see ``ScoreIndex.column``).

        A new column scores one node per memo key among the nodes passing the static
        rules (``ScoreIndex.fill``): hundreds of shapes then cost shapes × distinct
        keys, not shapes × nodes; the nodes' keys are kept per static needs. What a
        new column scores is not kept in the memo too: the column holds it, and
        thousands of shapes × keys would double the memory (the memo keeps what
        later refreshes score, the nodes that changed)."""
        index = self.index
        assert index is not None
        score = partial(self._memo_score, pod=pod, shape=shape)
        if index.has(shape):
            return index.column(shape, score)
        only = (
            self.layout.matching(pod.node_selector)
            if pod.node_selector
            else range(len(index.names))
        )
        keys = index.node_keys(self._needs_of(pod), partial(self._passing_key, pod=pod), only)
        return index.fill(shape, keys, partial(score, keep=False))

    def vector_scores(self, pod: Pod) -> vector.Floats:
        """Every indexed node's score for the pod as an array (``vector``: the policy's
        rules over arrays kept up to date from the index's change log), NO_SCORE where
        it does not fit: the values ``column`` finds, without a column kept per shape."""
        index = self.index
        assert index is not None and self.vector
        table = index.table(self._read, self._gpu_fits, self._node_inputs)
        names = index.names
        extended = {r: table.extended_free(r, names, self._read) for r in pod.requests.extended}
        feasible = vector.fits(pod, table, extended)
        feasible &= self._static_mask(pod, table, names)
        if pod.gpu is not None and pod.gpu.count > 0:
            feasible &= table.gpu_mask(pod.gpu, names, self._gpu_fits)
        if vector.keyed(self.policy):
            return self._keyed_scores(pod, table, feasible)
        return vector.scores(self.policy, pod, table, feasible)

    def _keyed_scores(
        self, pod: Pod, table: vector.NodeTable, feasible: vector.Bools
    ) -> vector.Floats:
        """FGD's score of every node (``vector.keyed``): each feasible node's kept score
        for its (node inputs, GPU request, cpu bucket), looked up by one integer per
        node; one not kept yet is worked out from the node's device choices, kept per
        (node inputs, GPU request) (nodes with equal inputs score alike:
        ``fgd.fgd_node_inputs``)."""
        fragmentation = self._base.fragmentation
        assert isinstance(fragmentation, fgd.FragmentationModel)
        inputs, stride = vector.fgd_inputs(pod, table, fragmentation)
        positions = np.flatnonzero(feasible)
        codes = (table.keys[positions] * stride + inputs[positions]).tolist()
        kept = self._by_code.setdefault(pod.gpu, {})
        get = kept.get
        values = [get(code) for code in codes]
        if None in values:
            names = self._index_names()
            for i, value in enumerate(values):
                if value is None:
                    position = int(positions[i])
                    found = self._choices(names[position], pod, int(table.keys[position]))
                    bucket = int(inputs[position])
                    score = fgd.score_in_bucket(fragmentation, found, bucket)
                    values[i] = kept[codes[i]] = score
        scores = np.full(table.size, NO_SCORE)
        scores[positions] = values
        return scores

    def _choices(self, name: str, pod: Pod, node_inputs: int) -> fgd.Choices:
        """FGD's view of the node's distinct device choices for the pod's GPU request
        (``fgd.Choices``), kept per (node inputs, GPU request): nodes alike there have
        the same choices, position for position (``fgd.fgd_node_inputs``)."""
        key = (node_inputs, pod.gpu)
        found = self._fgd_choices.get(key)
        if found is None:
            info, alloc = self.state.info(name), self.state.alloc(name)
            options = self._device_options(info, alloc, pod)
            assert not isinstance(options, str)  # feasible: the GPU mask passed
            candidates = [
                Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options
            ]
            fragmentation = self._base.fragmentation
            assert isinstance(fragmentation, fgd.FragmentationModel)
            found = self._fgd_choices[key] = fgd.choices(_distinct(candidates), fragmentation)
        return found

    def _node_inputs(self, name: str, devices: list[tuple[object, ...]]) -> int:
        """FGD's interned node inputs (``fgd.fgd_node_inputs``): what its kept scores are
        looked up by; 0 for a policy scored by array rules."""
        if not vector.keyed(self.policy):
            return 0
        info, alloc = self.state.info(name), self.state.alloc(name)
        inputs = fgd.fgd_node_inputs(info, alloc, self._base, devices)
        return self._keys.intern(("node inputs", inputs))

    def _static_mask(self, pod: Pod, table: vector.NodeTable, names: Sequence[str]) -> vector.Bools:
        """Which nodes pass the static rules for the pod. A nodeSelector is one condition
        of NodeAffinity, and no other static rule reads it: the mask is the one of the
        pod's other static needs and the nodes whose labels hold the selector (kept with
        the node list), so selectors naming a GPU model share the rest of the work."""
        if not pod.node_selector:
            return table.static_mask(
                self._needs_of(pod), names, partial(self._static_passes, pod=pod)
            )
        plain = self._without_selector.get(id(pod))
        if plain is None or plain[0] is not pod:
            plain = self._without_selector[id(pod)] = (pod, replace(pod, node_selector={}))
        rest = table.static_mask(
            self._needs_of(plain[1]), names, partial(self._static_passes, pod=plain[1])
        )
        selector = tuple(sorted(pod.node_selector.items()))
        layout = Layout.of(self._cluster, self.state)  # this node list's, nodes added or not
        return rest & table.selector_mask(selector, layout.matching(pod.node_selector))

    def _read(self, name: str) -> tuple[NodeInfo, NodeAlloc]:
        return self.state.info(name), self.state.alloc(name)

    def _static_passes(self, name: str, pod: Pod) -> bool:
        return self._static_ok(self.state.info(name), self.state.alloc(name), pod)

    def _gpu_fits(self, name: str, key: tuple[object, ...] | None, request: GpuRequest) -> bool:
        """Whether the node's GPUs hold the request (``allocate.gpu_fits``), kept per
        ``allocate.gpu_fit_key``: nodes alike there get one verdict."""
        if key is None:
            key = gpu_fit_key(gpu_device_state(self.state.info(name), self.state.alloc(name)))
        verdict = self._gpu_fit.get((key, request))
        if verdict is None:
            info, alloc = self.state.info(name), self.state.alloc(name)
            verdict = self._gpu_fit[key, request] = gpu_fits(info, alloc, request)
        return verdict

    def _passing_key(self, name: str, pod: Pod) -> int | None:
        """The node's memo key, or None when a static rule refuses the pod there."""
        info, alloc = self.state.info(name), self.state.alloc(name)
        return self._node_key(name) if self._static_ok(info, alloc, pod) else None

    def _pick_among(self, positions: list[int]) -> int:
        """Which of the tied node positions (ascending) wins: as ``_pick``, or with
        "round-robin" the first at or after ``cursor`` (wrapping), the cursor then moved
        past it (cluster-autoscaler's ``RunFiltersUntilPassingNode``)."""
        if self.policy.tie_break != "round-robin":
            return self._pick(len(positions))
        chosen = bisect_left(positions, self.cursor) % len(positions)
        self.cursor = positions[chosen] + 1
        return chosen

    def _pick(self, ties: int) -> int:
        return self.scores.rng.randrange(ties) if self.policy.tie_break == "random" else 0

    def _closest_best(
        self,
        scores: Scores,
        top: tuple[float, list[int]],
        scope: Scope,
        weight: float,
    ) -> list[int]:
        """Positions (in node order) of the best ``base + weight·closeness`` in scope.

        Closeness to the members is c/depth of MAX_SCORE for a node sharing c
        levels with one of them, so the best is the best, over c, of the best
        base score among nodes sharing at least c levels (the members' domains
        at level c) plus c's bonus; only the domains reaching it are searched
        for ties, never every node. A node found at level c with score + c's
        bonus equal to the best shares exactly c levels (sharing e > c, it would
        score more than the best at level e), so that sum is its full score.
        """
        members = self.scores.member_paths
        depth = self._depth
        ceiling = top[0]  # no node in any scope scores more
        best = NO_SCORE
        levels: list[tuple[float, float, list[int]]] = []
        for shared in range(depth, -1, -1):  # deepest (largest bonus) first
            bonus = weight * (MAX_SCORE * shared / depth)
            if ceiling + bonus < best:
                continue  # even the best node of the index could not reach the best here
            if shared == 0 and scope.members is None:
                # the whole index: its kept best, and only the nodes holding it can tie
                # (bonus is 0.0 here, so score + bonus == best means score == best)
                top_score, positions = top
                level_top = top_score + bonus
            else:
                positions = self._shared_positions(shared, members, scope)
                level_top = max(_gather(scores, positions), default=NO_SCORE) + bonus
            levels.append((level_top, bonus, positions))
            best = max(best, level_top)
        if best == NO_SCORE:
            return []
        tied: set[int] = set()
        for level_top, bonus, positions in levels:
            if level_top == best:
                tied.update(p for p in positions if scores[p] + bonus == best)
        return sorted(tied)

    def _index_names(self) -> tuple[str, ...]:
        assert self.index is not None
        return self.index.names

    def _shared_positions(
        self, shared: int, members: list[tuple[str | None, ...]], scope: Scope
    ) -> list[int]:
        """Scope positions whose nodes share at least ``shared`` levels with a member."""
        assert scope.positions is not None
        if shared == 0:
            return scope.positions
        prefixes = {m[:shared] for m in members if None not in m[:shared]}
        if not prefixes:
            return []
        by_prefix = self.layout.prefix_positions(shared)
        found = [p for prefix in prefixes for p in by_prefix.get(prefix, ())]
        if scope.members is None:
            return found
        if len(found) <= len(scope.positions):
            return [p for p in found if p in scope.members]
        names, paths = self._index_names(), self.scores.paths
        return [p for p in scope.positions if paths[names[p]][:shared] in prefixes]

    def shape(self, pod: Pod) -> int | None:
        """The memo id of the pod's shape, or None when its score cannot be memoised."""
        if self.index is not None and memoisable(pod) and not self._inter_pod.sensitive(pod):
            namespace = self.filters.namespace_class(pod.namespace)
            return self._keys.intern(("pod", *pod_shape(pod, namespace)))
        return None

    def _node_key(self, name: str) -> int:
        personal = bool(self.filters.granted) or name in self.filters.reserved_for
        return self._keys.key(self.state.info(name), self.state.alloc(name), personal)

    def _memo_score(
        self, name: str, pod: Pod, shape: int, keep: bool = True
    ) -> tuple[float, int] | None:
        """The node's score without gang closeness; labels (selector, affinity) are
        checked per node first, the rest depends on the node key only (``keep``:
        store a new score in the memo)."""
        info, alloc = self.state.info(name), self.state.alloc(name)
        if not self._static_ok(info, alloc, pod):
            return None
        node_key = self._node_key(name)
        key = (shape, node_key)
        if key in self._memo:
            return self._memo[key]
        scored = self._keyed_score(info, alloc, pod, node_key)
        if keep:
            self._memo[key] = scored
        return scored

    def _keyed_score(
        self, info: NodeInfo, alloc: NodeAlloc, pod: Pod, node_key: int
    ) -> tuple[float, int] | None:
        """``_score_node`` with the base context for a memoisable pod that passed the
        static rules, sharing across pod shapes what depends only on the node key and
        the pod's GPU request: its device options and, for a policy that says what
        else its score reads of the pod (``Policy.pod_inputs``: FGD reads only the cpu
        left), the score itself. Hundreds of shapes differ mostly in cpu and memory,
        so each shape then costs the resource rules and lookups on most nodes."""
        for rule in RESOURCE_RULES:
            if not rule(info, alloc, pod, self.filters).ok:
                return None
        reads = self.policy.pod_inputs
        reduced = None
        if reads is not None:
            inputs = POD_INPUTS[reads](pod, alloc, self._base)
            reduced = (node_key, pod.gpu, inputs)
            if reduced in self._by_inputs:
                return self._by_inputs[reduced]
        options = self._gpu_options.get((node_key, pod.gpu))
        if options is None:
            options = self._gpu_options[node_key, pod.gpu] = self._device_options(info, alloc, pod)
        if isinstance(options, str):
            scored = None
        elif self.policy.device_rule is not None:
            scored = self._rate_chosen(info, alloc, pod, node_key, options)
        else:
            candidates = [
                Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options
            ]
            scored = self._rate(candidates, self._base)
        if reduced is not None:
            self._by_inputs[reduced] = scored
        return scored

    def _candidates(self, name: str, pod: Pod) -> list[Candidate] | None:
        info = self.state.info(name)
        alloc = self.state.alloc(name)
        if not self._static_ok(info, alloc, pod):
            return None
        for rule in RESOURCE_RULES:
            if not rule(info, alloc, pod, self.filters).ok:
                return None
        if pod.host_ports or self._inter_pod.sensitive(pod):
            context = self._context(pod)
            if not all(rule(info, alloc, pod, context).ok for rule in POD_RULES):
                return None
        options = self._device_options(info, alloc, pod)
        if isinstance(options, str):
            return None
        return [Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options]

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

    def _score_node(
        self, name: str, pod: Pod, ctx: ScoreContext | None = None
    ) -> tuple[float, int] | None:
        """The node's score and the index of the device option it would use."""
        candidates = self._candidates(name, pod)
        if candidates is None:
            return None
        return self._rate(candidates, ctx or self.scores)

    def _rate_chosen(
        self, info: NodeInfo, alloc: NodeAlloc, pod: Pod, node_key: int, options: list[Option]
    ) -> tuple[float, int]:
        """``_rate`` for a policy whose device rule picks the option: the rule reads the
        node and the devices taken, never the pod's other requests, so its pick is kept
        per (node key, GPU request) and only the chosen candidate is scored."""
        assert self.policy.device_rule is not None
        chosen = self._device_choice.get((node_key, pod.gpu))
        if chosen is None:
            device_rule = SCORE_RULES[self.policy.device_rule]
            candidates = [
                Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options
            ]
            chosen = max(
                range(len(candidates)), key=lambda i: device_rule(candidates[i], self._base)
            )
            self._device_choice[node_key, pod.gpu] = chosen
        option = options[chosen]
        candidate = Candidate(info, alloc, pod, option, _option_gpu_milli(info, option))
        return self.policy.score(candidate, self._base), chosen

    def _rate(self, candidates: list[Candidate], ctx: ScoreContext) -> tuple[float, int]:
        """The policy's best candidate: its score and option index."""
        if self.policy.device_rule is None:
            scores = [self.policy.score(c, ctx) for c in _distinct(candidates)]
            best = max(range(len(scores)), key=lambda i: scores[i])
            return scores[best], _distinct_index(candidates, best)
        device_rule = SCORE_RULES[self.policy.device_rule]
        index = max(range(len(candidates)), key=lambda i: device_rule(candidates[i], ctx))
        return self.policy.score(candidates[index], ctx), index

    def _choice(self, name: str, pod: Pod, option_index: int) -> Choice:
        candidates = self._candidates(name, pod)
        assert candidates is not None
        chosen = candidates[option_index]
        allocation = with_devices(pod_allocation_base(pod), chosen.devices)
        return Choice(name, allocation, chosen.gpu_milli)

    def _device_options(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> list[Option] | str:
        options: list[Option] = [()]
        if pod.gpu is not None and pod.gpu.count > 0:
            found = gpu_options(info, alloc, pod.gpu)
            if isinstance(found, str):
                return found
            options = found
        if pod.claims:
            filters = self.filters
            takes = claim_takes(
                info, alloc, pod, filters.device_classes, filters.partitionable_devices
            )
            if isinstance(takes, str):
                return takes
            options = [(*o, *takes) for o in options]
        return options

    # --- why not -------------------------------------------------------------------

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


def closeness_weight(policy: Policy) -> float | None:
    """How gang closeness enters the policy's node score, for scoring members off the
    memo: 0.0 when it does not (no topology rule), its weight when it is the last,
    positive term (the sum is then the memoised score plus weight × closeness, to
    the bit), None when members must be scored node by node.

    Closeness is one value per node, equal for every device option there, so a
    policy that rates device options with its own score (FGD: ``device_rule`` None)
    picks the same option with or without it: the memo holds for it too."""
    names = [name for name, _ in policy.weights]
    if "topology" not in names:
        return 0.0
    weight = policy.weights[-1][1]
    if names.index("topology") != len(names) - 1 or weight <= 0:
        return None
    return weight


def _gather(values: Scores, positions: list[int]) -> list[float]:
    if isinstance(values, np.ndarray):
        return values[positions].tolist() if positions else []
    if len(positions) > 1:
        return list(itemgetter(*positions)(values))
    return [values[p] for p in positions]


def _top(scores: Scores) -> tuple[float, list[int]]:
    """The best of array scores and its positions, ascending (NO_SCORE and every
    position when nothing fits, as ``ScoreIndex.top``)."""
    assert isinstance(scores, np.ndarray)
    if not len(scores):
        return NO_SCORE, []
    best = float(scores.max())
    return best, np.flatnonzero(scores == best).tolist()


def _best_positions(scores: Scores, scope: Scope) -> list[int]:
    """Positions in a domain holding the best score, in node order (empty: none fits)."""
    assert scope.positions is not None
    values = _gather(scores, scope.positions)
    best = max(values, default=NO_SCORE)
    if best == NO_SCORE:
        return []
    return list(compress(scope.positions, map(best.__eq__, values)))


def _free_signature(candidate: Candidate) -> tuple[int, ...]:
    alloc, devices = candidate.alloc, candidate.info.devices
    return tuple(alloc.device_milli_free(devices[t.device]) for t in candidate.devices)


def _distinct(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per distinct free-capacity pattern: equal GPUs score equally."""
    seen: set[tuple[int, ...]] = set()
    kept = []
    for candidate in candidates:
        signature = _free_signature(candidate)
        if signature not in seen:
            seen.add(signature)
            kept.append(candidate)
    return kept


def _distinct_index(candidates: list[Candidate], distinct_position: int) -> int:
    target = _free_signature(_distinct(candidates)[distinct_position])
    return next(i for i, c in enumerate(candidates) if _free_signature(c) == target)


def _option_gpu_milli(info: NodeInfo, option: Option) -> int:
    total = 0
    for take in option:
        device = info.devices[take.device]
        if device.gpu is not None:
            total += device_gpu_milli(device, take, info)
    return total
