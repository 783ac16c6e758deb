"""cluster-autoscaler has no single answer: the other node additions it may make.

Three of its choices are random upstream, so the same cluster can get different
scale-ups from run to run (the recorded cases of ``data/oracle-cases`` show it: in 18
of 150 the per-group totals differ between runs):

- the order of pending pods of equal priority: the lister's map order, then a stable
  sort by priority (``core/podlistprocessor/filter_out_schedulable.go``), and the
  binpacking estimator's unstable sort (``estimator/decreasing_pod_orderer.go``);
- the node filter-out-schedulable puts a pod on: the first that passes among nodes in
  the snapshot's map order, ``--predicate-parallelism`` of them checked at once
  (``simulator/clustersnapshot/predicate/plugin_runner.go``
  ``RunFiltersUntilPassingNode``);
- the expander's ties: a random pick among the options left
  (``expander/random``, ``expander/factory/chain.go``).

The naive plan is one outcome (``cluster_autoscaler.NaivePlanner`` with its seeded,
deterministic choices). Here the planner runs again with choices made the other way
(``VARIANTS``): equal-priority pods in the opposite order; the smallest of them first;
the smallest first with each pod on the best-scored node that passes (the scheduler's
scores standing for "another node that passes": together they lean to a small pod
taking the room a big one needed, the dearer side); and, only when the plan's expander
met a tie, the last option of each tie instead of the seeded pick. A
run whose per-group additions differ is an ``OtherOutcome``: the plan says "CA may
also add …", and the dearest outcome is the worst case priced. These are samples of
the range, not all of it: other combinations, and other orders, are not run. Each run
costs about what the plan's own does (0.4 s of CPU at 2,000 nodes, 2.2 s at 10,000), so
the range is worked out for clusters of at most ``MAX_NODES`` nodes; above, the plan
says it was not (``skipped``), never that there is a single answer.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recommender.engine import costs
from topology.model.money import format_per_hour

REVERSED = "equal-priority pods in the opposite order"
SMALL_FIRST = "the smallest of equal-priority pods first"
OTHER_NODE = "each pending pod on the best-scored node that passes, not the first"
OTHER_TIE = "the other option among the expander's ties"
CHOICES = (REVERSED, SMALL_FIRST, OTHER_NODE, OTHER_TIE)  # in the order a reason names them
# the runs made besides the plan's own (OTHER_TIE is added when the plan met a tie)
VARIANTS = ((REVERSED,), (SMALL_FIRST,), (SMALL_FIRST, OTHER_NODE))


MAX_NODES = 2_000


def skipped(nodes: int) -> str | None:
    """Why the range is not worked out for a cluster of ``nodes`` nodes (None: it is)."""
    if nodes <= MAX_NODES:
        return None
    return (
        f"other outcomes not worked out above {MAX_NODES} nodes ({nodes}): cluster-autoscaler's "
        "random choices (pod order, node order, expander ties) may add other nodes"
    )


@dataclass(frozen=True, slots=True)
class OtherOutcome:
    """Node additions per group cluster-autoscaler may make instead, and why."""

    add_nodes: Mapping[str, int]
    cost_per_hour: float
    because: str

    def to_json(self) -> dict[str, Any]:
        return {
            "addNodes": dict(sorted(self.add_nodes.items())),
            "costPerHour": self.cost_per_hour,
            "because": self.because,
        }

    def text(self, currency: str) -> str:
        """What it adds, at what cost (``currency``: topology.model.money), and why."""
        added = ", ".join(f"{n} x {g}" for g, n in sorted(self.add_nodes.items())) or "nothing"
        return f"{added} ({format_per_hour(self.cost_per_hour, currency)}), with {self.because}"


class TieRecorder(random.Random):
    """The expander's random source, counting the picks among several options."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.ties = 0

    def choice(self, seq: Any) -> Any:  # random.Random.choice's sequence
        self.ties += len(seq) > 1
        return super().choice(seq)


class LastOfTies(random.Random):
    """An expander source that takes the last of the tied options (by group name)."""

    def choice(self, seq: Any) -> Any:  # random.Random.choice's sequence
        return seq[-1]


def distinct_others(
    main: Mapping[str, int], runs: Sequence[tuple[str, Mapping[str, int], float]]
) -> tuple[OtherOutcome, ...]:
    """The runs whose additions differ from ``main`` and from each other (first reason kept)."""
    seen = [dict(main)]
    found = []
    for because, add_nodes, cost in runs:
        totals = {g: n for g, n in add_nodes.items() if n}
        if totals in seen:
            continue
        seen.append(totals)
        found.append(OtherOutcome(totals, costs.round_money(cost), because))
    return tuple(found)


def worst_case_per_hour(main_per_hour: float, others: Sequence[OtherOutcome]) -> float:
    return max([main_per_hour, *(o.cost_per_hour for o in others)])
