"""cluster-autoscaler's expanders: which whole scale-up option wins.

An option is one node group with the node count the binpacking estimator
gave and the pods it would help (``expander.Option`` in
``cluster-autoscaler/expander/expander.go``). Expanders judge whole options,
never single pods:

- ``least-waste`` (``expander/waste/waste.go`` ``BestOption``): the lowest
  (cpu unused + memory unused) fraction over ``nodeCount`` template nodes,
  given the option's pods' requests. Upstream divides by the template's
  *capacity*; the model has allocatable only and uses it (partly).
- ``most-pods`` (``expander/mostpods/mostpods.go``): the most pods helped.
- ``least-nodes`` (``expander/leastnodes/leastnodes.go``): the fewest nodes.
- ``price`` (``expander/price/price.go`` ``BestOption``): the lowest
  ``unfitness x price``. Unfitness follows upstream exactly: against the preferred
  node of the cluster's size (``preferred.go`` ``SimplePreferredNodeProvider``: 1
  core up to 2 nodes, 2 up to 6, 4 up to 20, 8 up to 60, 16 up to 200, else 32),
  ``SimpleNodeUnfitness`` = max(preferred/node, node/preferred) cores, suppressed
  for larger options ((u - 1)(1 - tanh((count - 1)/15)) + 1), and a fixed 1000 for
  a group whose nodes have GPUs (``gpuUnfitnessOverride``; ``gpu.NodeHasGpu``: the
  provider's GPU label, or allocatable nvidia.com/gpu): a CPU-only pod never goes to
  a GPU group while a CPU group can take it. The price factor is the option's $/h
  per helped pod (upstream: node price over the pods' price under the cloud's
  pricing model, plus a stabilisation pod; the model has no per-resource prices:
  partly). An option whose price cannot be got is skipped (``BestOption``: a
  ``NodePrice`` error ``continue``s to the next option): a group without a known
  price (``NodeGroup.price_known``) is never chosen by it, and when no option has a
  price the expander has none to give, so nothing is added.
- ``priority`` (``expander/priority/priority.go``): the highest priority of
  the ``cluster-autoscaler-priority-expander`` ConfigMap regexes matching the
  group name (``priorities`` given by the caller; unmatched groups are
  dropped unless nothing matches).
- ``random`` (``expander/random/random.go``): one at random.

``--expander=a,b`` is a chain (``expander/factory/chain.go``
``chainStrategy.BestOption``): each filter keeps its best options, the next
one sees only those (one left: chosen; none left: no option), and what is still
tied at the end is decided at random.
Our random is a seeded ``random.Random``: the same evaluation gives the same
choice every time.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from topology.model.hardware import Node, NodeGroup, Pod

LEAST_WASTE, MOST_PODS, LEAST_NODES, PRICE, PRIORITY, RANDOM = (
    "least-waste",
    "most-pods",
    "least-nodes",
    "price",
    "priority",
    "random",
)
# config/flags/flags.go of current releases: --expander defaults to least-waste
# (releases before the flags moved out of main.go defaulted to random)
DEFAULT_EXPANDERS = (LEAST_WASTE,)
EXPANDERS = (RANDOM, MOST_PODS, LEAST_WASTE, PRICE, PRIORITY, LEAST_NODES)  # expander.go


@dataclass(frozen=True, slots=True)
class Option:
    """One node group's scale-up option: ``node_count`` nodes like ``template`` for ``pods``."""

    group: NodeGroup
    node_count: int
    pods: tuple[Pod, ...]
    template: Node


def waste_score(option: Option) -> float:
    """``waste.go``: (avail - requested) / avail for cpu plus the same for memory."""
    cpu = sum(p.requests.cpu_milli for p in option.pods)
    memory = sum(p.requests.memory_bytes for p in option.pods)
    score = 0.0
    for requested, per_node in (
        (cpu, option.template.allocatable.cpu_milli),
        (memory, option.template.allocatable.memory_bytes),
    ):
        available = per_node * option.node_count
        if available > 0:
            score += (available - requested) / available
    return score


def price_per_pod(option: Option) -> float:
    return option.group.price_per_node_hour * option.node_count / max(1, len(option.pods))


GPU_UNFITNESS_OVERRIDE = 1000.0  # price.go gpuUnfitnessOverride
# preferred.go SimplePreferredNodeProvider: (cluster nodes up to, preferred cores)
PREFERRED_CORES = ((2, 1), (6, 2), (20, 4), (60, 8), (200, 16))
PREFERRED_CORES_ABOVE = 32


def preferred_cpu_milli(cluster_nodes: int) -> int:
    """The preferred node's cores for a cluster of ``cluster_nodes`` nodes (in milli)."""
    cores = next((c for size, c in PREFERRED_CORES if cluster_nodes <= size), PREFERRED_CORES_ABOVE)
    return cores * 1000


def node_has_gpu(node: Node, gpu_label: str) -> bool:
    """``utils/gpu`` ``NodeHasGpu``: the provider's GPU label, or nvidia.com/gpu allocatable."""
    return bool(gpu_label and gpu_label in node.labels) or node.gpu_count > 0


def price_score(option: Option, cluster_nodes: int, gpu_label: str) -> float:
    """``price.go``: suppressed unfitness (1000 for a GPU group) times the price factor."""
    if node_has_gpu(option.template, gpu_label):
        suppressed = GPU_UNFITNESS_OVERRIDE
    else:
        preferred = preferred_cpu_milli(cluster_nodes)
        node_cpu = max(1, option.template.allocatable.cpu_milli)
        unfitness = max(preferred / node_cpu, node_cpu / preferred)
        suppressed = (unfitness - 1.0) * (1.0 - math.tanh((option.node_count - 1) / 15.0)) + 1.0
    return suppressed * price_per_pod(option)


def _lowest(options: Sequence[Option], score: Callable[[Option], float]) -> list[Option]:
    if not options:
        return []
    best = min(score(o) for o in options)
    return [o for o in options if score(o) == best]


def _priority_filter(
    options: Sequence[Option], priorities: Mapping[int, Sequence[str]]
) -> list[Option]:
    """``priority.go``: options whose group name matches a regex of the highest priority
    (``groupIDMatchesList``: ``FindStringIndex``, a match anywhere in the name)."""
    for priority in sorted(priorities, reverse=True):
        patterns = [re.compile(p) for p in priorities[priority]]
        kept = [o for o in options if any(p.search(o.group.name) for p in patterns)]
        if kept:
            return kept
    return list(options)


def best_option(
    options: Sequence[Option],
    expanders: Sequence[str],
    rng: random.Random,
    priorities: Mapping[int, Sequence[str]] | None = None,
    *,
    cluster_nodes: int = 0,
    gpu_label: str = "",
) -> Option | None:
    """The chain's choice: each named filter in turn, then a random pick among ties
    (``cluster_nodes``, ``gpu_label``: what the price expander weighs, ``price_score``)."""
    left = sorted(options, key=lambda o: o.group.name)  # a stable order for the rng
    for name in expanders:
        if not left:
            break
        if name == LEAST_WASTE:
            left = _lowest(left, waste_score)
        elif name == MOST_PODS:
            left = _lowest(left, lambda o: -len(o.pods))
        elif name == LEAST_NODES:
            left = _lowest(left, lambda o: o.node_count)
        elif name == PRICE:
            priced = [o for o in left if o.group.price_known]  # the others are skipped
            left = _lowest(priced, lambda o: price_score(o, cluster_nodes, gpu_label))
        elif name == PRIORITY:
            left = _priority_filter(left, priorities or {})
        elif name != RANDOM:
            raise ValueError(f"unknown expander {name!r}")
        if len(left) == 1:
            break
    if not left:
        return None
    return left[0] if len(left) == 1 else rng.choice(left)
