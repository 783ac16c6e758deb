"""cluster-autoscaler's ``--balance-similar-node-groups``: similar groups share a scale-up.

- ``similar`` follows ``processors/nodegroupset/compare_nodegroups.go``
  ``IsCloudProviderNodeInfoSimilar`` on two template nodes: every resource but
  memory equal (capacity; the model has allocatable only and compares that),
  memory within ``MaxCapacityMemoryDifferenceRatio`` (0.015), allocatable and
  free within ``MaxAllocatableDifferenceRatio``/``MaxFreeDifferenceRatio``
  (0.05; templates are empty, so free = allocatable), and the same labels
  except ``BasicIgnoredLabels`` (hostname, zone, region, CSI zone labels) and
  ``--balancing-ignore-label``. GPUs count as a resource (``nvidia.com/gpu``),
  so their count must match; the model also requires the same GPU model (a
  different product is a different machine, and its label differs anyway).
- ``balance`` is ``balancing_processor.go`` ``BalanceScaleUpBetweenGroups``:
  the new nodes go one at a time to the smallest group (target size), never
  beyond a group's max size, capped to what the set can still take.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from recommender.engine.scheduler.demand import advertised_gpus
from topology.hardware import HOSTNAME_LABEL, Node

BASIC_IGNORED_LABELS = frozenset(
    {
        HOSTNAME_LABEL,
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "beta.kubernetes.io/fluentd-ds-ready",
        "kops.k8s.io/instancegroup",
        "worker.gardener.cloud/kubernetes-version",
        "topology.ebs.csi.aws.com/zone",
        "topology.gke.io/zone",
        "topology.disk.csi.azure.com/zone",
    }
)
MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO = 0.015
MAX_ALLOCATABLE_DIFFERENCE_RATIO = 0.05


def _within(a: int, b: int, ratio: float) -> bool:
    larger, smaller = max(a, b), min(a, b)
    return larger - smaller <= larger * ratio


def similar(first: Node, second: Node, ignored: Iterable[str] = ()) -> bool:
    """Whether two groups' templates are "the same kind of machine"."""
    a, b = first.allocatable, second.allocatable
    if a.cpu_milli != b.cpu_milli or a.pods != b.pods or dict(a.extended) != dict(b.extended):
        return False
    if advertised_gpus(first) != advertised_gpus(second):
        return False
    if {g.model for g in first.gpus} != {g.model for g in second.gpus}:
        return False
    if not _within(a.memory_bytes, b.memory_bytes, MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO):
        return False
    if not _within(a.memory_bytes, b.memory_bytes, MAX_ALLOCATABLE_DIFFERENCE_RATIO):
        return False
    skip = BASIC_IGNORED_LABELS | frozenset(ignored)
    return _kept(first.labels, skip) == _kept(second.labels, skip)


def _kept(labels: Mapping[str, str], skip: frozenset[str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k not in skip}


def balance(sizes: Sequence[tuple[str, int, int]], new_nodes: int) -> dict[str, int]:
    """``BalanceScaleUpBetweenGroups``: (group, target size, max size) → nodes to add each.

    One node at a time to the smallest group still below its max (ties: the order
    given, upstream's sort is not stable); capped to the set's free capacity."""
    current = {name: size for name, size, _ in sizes}
    limits = {name: limit for name, _, limit in sizes}
    new_nodes = min(new_nodes, sum(max(0, limits[n] - current[n]) for n in current))
    added = dict.fromkeys(current, 0)
    order = [name for name, _, _ in sizes]
    for _ in range(new_nodes):
        open_groups = [n for n in order if current[n] < limits[n]]
        smallest = min(open_groups, key=lambda n: current[n])
        current[smallest] += 1
        added[smallest] += 1
    return {name: count for name, count in added.items() if count}
