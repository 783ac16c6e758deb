"""Verdicts that rest on an exact score tie: kube-scheduler picks among them at random.

Upstream (kubernetes/kubernetes v1.35, ``pkg/scheduler/schedule_one.go``): after
scoring, ``selectHost`` takes a node of the highest total score, uniformly at random
among those tied (``prioritizeNodes``; reservoir sampling over the tied nodes). Which
tied node a pod gets can decide what fits for the pods after it, or whether the pod
itself runs (a tie broken one way leaves it room, the other way not).

The scheduler pass (``placement.place``) draws its tie-breaks from one seeded random
source (``PlacementOptions.seed``, 0): one of the outcomes kube-scheduler may reach.
Here the pass runs again with other seeds (``TIE_SEEDS``): each draws other picks among
the same ties, nothing else changes. A workload placed in one run and not in another
rests on a tie; it is said on the workload with the tie that first set the runs apart::

    pass (seed 0) ─┐
    seed 1, 2, 3 ──┴─► per workload: placed in every run?  no ─► ScoreTie(first pod bound
                                                                 elsewhere, its two nodes)

These are samples of the picks kube-scheduler may make, not all of them (a tie found
by none of the seeds is not said). Each run costs one scheduler pass; clusters above
``MAX_NODES`` nodes are not sampled (docs/FIDELITY.md).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from recommender.engine.scheduler.placement import (
    PlacementOptions,
    PlacementResult,
    place,
)
from recommender.engine.scheduler.scores import policy_named
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Cluster

TIE_SEEDS = (1, 2, 3)
MAX_NODES = 2000


@dataclass(frozen=True, slots=True)
class ScoreTie:
    """With other picks among tied nodes, this workload's fate differs."""

    pod: str  # the first pod the runs bind to different nodes ("ns/name")
    here: str | None  # its node in the pass (None: not bound there)
    there: str | None  # its node with the other picks (None: not bound then)
    placed: bool  # whether the workload is placed with the other picks

    def reason(self) -> str:
        fate = "runs now" if self.placed else "does not run"
        here = f"binds to {self.here}" if self.here else "is not bound"
        there = f"on {self.there}" if self.there else "not bound"
        return (
            f"rests on an exact score tie: kube-scheduler picks at random among equally "
            f"scored nodes (selectHost); here {self.pod} {here}, and with {self.pod} "
            f"{there} this workload {fate}"
        )


def score_ties(
    cluster: Cluster,
    pending: Sequence[Workload],
    state: ClusterState,
    options: PlacementOptions,
    scheduled: PlacementResult,
) -> dict[str, ScoreTie]:
    """The workloads whose placement differs in a run with other tie-breaks (first seed
    that sets it apart), keyed by workload."""
    if policy_named(options.policy).tie_break != "random" or len(cluster.nodes) > MAX_NODES:
        return {}
    base = {o.workload: o.placed for o in scheduled.outcomes}
    found: dict[str, ScoreTie] = {}
    for seed in TIE_SEEDS:
        if seed == options.seed:
            continue
        other = place(cluster, pending, state=state, options=replace(options, seed=seed))
        placed = {o.workload: o.placed for o in other.outcomes}
        differing = [key for key, was in base.items() if placed.get(key) != was]
        if not differing:
            continue
        pod, here, there = _first_divergence(scheduled, other)
        for key in differing:
            found.setdefault(key, ScoreTie(pod, here, there, placed[key]))
    return found


def _first_divergence(
    one: PlacementResult, other: PlacementResult
) -> tuple[str, str | None, str | None]:
    """The first pod, in the order the pass bound them, that the other run binds
    elsewhere (or not at all), and its two nodes."""
    here = _bound_in_order(one)
    there = dict(_bound_in_order(other))
    for pod, node in here:
        if there.get(pod) != node:
            return pod, node, there.get(pod)
    first_here = dict(here)
    for pod, node in _bound_in_order(other):
        if first_here.get(pod) != node:
            return pod, first_here.get(pod), node
    raise ValueError("the runs bind every pod alike")


def _bound_in_order(result: PlacementResult) -> list[tuple[str, str]]:
    by_key = {o.workload: o for o in result.outcomes}
    return [(b.pod, b.node) for key in result.placed_order for b in by_key[key].bindings]
