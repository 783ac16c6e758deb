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
- by ``--cloud-provider`` (``main.go`` ``buildAutoscaler``: the comparator for
  ``aws``, ``azure`` or ``gce``, else the generic one) the labels each cloud sets per
  group are ignored too: ``aws_nodegroups.go`` ``CreateAwsNodeInfoComparator``
  (eksctl instance id and node group name, ``eks.amazonaws.com/nodegroup``, the CNI's
  ``k8s.amazonaws.com/eniConfig``, ``lifecycle``, the EBS CSI zone),
  ``azure_nodegroups.go`` ``CreateAzureNodeInfoComparator`` (the agent pool labels,
  the disk CSI zone, the VMSS tags aksEngineVersion/creationSource/poolName/
  resourceNameSuffix, the node image version, consolidated additional properties; and
  two nodes of the same agent pool are similar whatever else differs),
  ``gce_nodegroups.go`` ``CreateGceNodeInfoComparator`` (``topology.gke.io/zone``).
- ``balance`` is ``balancing_processor.go`` ``BalanceScaleUpBetweenGroups``:
  the new nodes go one at a time to the smallest group (target size), never
  beyond a group's max size, capped to what the set can still take.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from recommender.engine.scheduler.demand import advertised_gpus
from topology.model.hardware import HOSTNAME_LABEL, Node

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
AZURE_POOL_LABELS = ("kubernetes.azure.com/agentpool", "agentpool")
PROVIDER_IGNORED_LABELS: Mapping[str, frozenset[str]] = {
    "aws": frozenset(
        {
            "alpha.eksctl.io/instance-id",
            "alpha.eksctl.io/nodegroup-name",
            "eks.amazonaws.com/nodegroup",
            "k8s.amazonaws.com/eniConfig",
            "lifecycle",
            "topology.ebs.csi.aws.com/zone",
        }
    ),
    "azure": frozenset(
        {
            *AZURE_POOL_LABELS,
            "topology.disk.csi.azure.com/zone",
            "aksEngineVersion",
            "creationSource",
            "poolName",
            "resourceNameSuffix",
            "kubernetes.azure.com/node-image-version",
            "kubernetes.azure.com/consolidated-additional-properties",
        }
    ),
    "gce": frozenset({"topology.gke.io/zone"}),
}
MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO = 0.015
MAX_ALLOCATABLE_DIFFERENCE_RATIO = 0.05


def _within(a: int, b: int, ratio: float) -> bool:
    larger, smaller = max(a, b), min(a, b)
    return larger - smaller <= larger * ratio


def similar(
    first: Node, second: Node, ignored: Iterable[str] = (), cloud_provider: str = "gce"
) -> bool:
    """Whether two groups' templates are "the same kind of machine", by the comparator
    of ``cloud_provider``."""
    if cloud_provider == "azure" and _same_azure_pool(first, second):
        return True
    ignored = frozenset(ignored) | PROVIDER_IGNORED_LABELS.get(cloud_provider, frozenset())
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


def _same_azure_pool(first: Node, second: Node) -> bool:
    """``nodesFromSameAzureNodePool``: the AKS pool label, else the legacy one, equal and set."""
    return any(
        bool(first.labels.get(key)) and first.labels.get(key) == second.labels.get(key)
        for key in AZURE_POOL_LABELS
    )


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
