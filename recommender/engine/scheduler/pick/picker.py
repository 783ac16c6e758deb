"""Picking a node for a pod: the best score, ties broken first, seeded or
round-robin; a full scan when PreferNoSchedule taints or preferred scores apply;
gang members closest to the members placed (``_closest_best``)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter

import numpy as np

from topology.model.hardware import Pod

from .. import preferred_score, taint_score, vector
from ..allocate import with_devices
from ..caches import Scope, kept
from ..memo import NO_SCORE
from ..records import Allocation, pod_allocation_base
from ..scores import MAX_SCORE
from .reasons import NodeReasons

# a column's scores (``memo.ScoreIndex``) or an array of them (``vector``)
Scores = Sequence[float] | vector.Floats


@dataclass(frozen=True, slots=True)
class Choice:
    node: str
    allocation: Allocation
    gpu_milli: int


class NodePicker(NodeReasons):
    """Filter and score the nodes for one pod, and pick one (kube-scheduler's
    scheduling cycle for a pod), through the caches of ``caches``."""

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
        wrapping. Found by visiting, from the cursor, only the nodes the pod fits by the
        arrays of ``feasible`` (a pod that fits nowhere, the blocked one, costs a few
        array operations, not a lookup per node), each scored (memo kept per (shape,
        node key)) until one passes."""
        assert scope.positions is not None and self.policy.tie_break == "round-robin"
        names = self._index_names()
        _table, feasible = self.feasible(pod)
        scoped = np.asarray(scope.positions, np.int64)
        positions = scoped[feasible[scoped]].tolist()  # the others would score None
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

    def _choice(self, name: str, pod: Pod, option_index: int) -> Choice:
        candidates = self._candidates(name, pod)
        assert candidates is not None
        chosen = candidates[option_index]
        allocation = with_devices(pod_allocation_base(pod), chosen.devices)
        return Choice(name, allocation, chosen.gpu_milli)


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
