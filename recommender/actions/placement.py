"""Where a card's nodes must land, said as the concrete domain, with what places them.

Two cases make a card depend on a domain:

- the group adds nodes in several domains of a label the recommendation names (its
  placements): a size change does not choose which;
- a workload of the card needs all its pods in one domain of a level (Kueue
  ``kueue.x-k8s.io/podset-required-topology``) and the plan counted the new nodes in
  the domain of the group's template (the labels of the member it was taken from):
  the card names that domain (``rack=r7``), never "any domain".

What places the nodes, per autoscaler: the ProvisioningRequest's nodeSelector on the
domain label (cluster-autoscaler scales only a group whose template carries it: a
group per domain), Karpenter NodePool requirements on a label Karpenter chooses at
launch (zone, capacity type, instance type; not a block or rack, which the cloud sets
after launch: kubernetes-sigs/karpenter ``pkg/apis/v1/labels.go`` WellKnownLabels), or
a per-domain node pool (GKE ``--node-locations``, an EKS node group on the zone's
subnets, AKS ``--zones``).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from recommender.actions.cloud_commands import CLUSTER_VARIABLE, LOCATION_VARIABLE
from recommender.engine.evaluate.evaluation import Recommendation
from recommender.engine.evaluate.report import spanned_domains
from topology.model.hardware import AutoscalerRef, Cluster, NodeGroup

KARPENTER_CHOSEN = (
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "karpenter.sh/capacity-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
)
ZONE_LABEL = "topology.kubernetes.io/zone"


def placement_text(rec: Recommendation, group: NodeGroup) -> str | None:
    """The group spans several domains of the card's placement: how to land in one."""
    spans = spanned_domains(rec, group)
    if not spans or group.autoscaler is None:
        return None
    lines = [
        f"# node group {group.name} adds nodes in "
        + "; ".join(f"{k} = {', '.join(v)}" for k, v in spans.items())
        + ": a size change does not choose where the cloud puts them.",
        f"# To land these {rec.count} node(s) in {labels_text(rec.placement)}:",
    ]
    lines += [_how(group.autoscaler, group, key, rec.placement[key]) for key in spans]
    return "\n".join(lines) + "\n"


def required_domains(rec: Recommendation, cluster: Cluster, group: NodeGroup) -> dict[str, str]:
    """The domains the plan depends on that the card's placement does not name: for
    each required topology level of the card's workloads, the group template's value
    (``(unknown)`` when the template has no such label)."""
    keys = {
        pod.required_topology
        for pod in cluster.pending_pods()
        if pod.required_topology and (pod.gang or pod.key) in rec.workloads
    }
    return {
        key: group.template.labels.get(key, "(unknown)")
        for key in sorted(keys)
        if key not in rec.placement
    }


def required_domain_text(rec: Recommendation, cluster: Cluster, group: NodeGroup) -> str | None:
    needed = required_domains(rec, cluster, group)
    if not needed or group.autoscaler is None:
        return None
    lines = [
        f"# the plan needs these {rec.count} node(s) in {labels_text(needed)}: the workloads "
        "need all their pods in one domain of that level, and the group's nodes are counted "
        "there (its template's labels). A size change does not choose it:",
    ]
    for key, value in needed.items():
        if value == "(unknown)":
            lines.append(f"# - the group's nodes carry no {key} label: where they land is unknown")
            continue
        lines.append(_how(group.autoscaler, group, key, value))
    return "\n".join(lines) + "\n"


def _how(ref: AutoscalerRef, group: NodeGroup, key: str, value: str) -> str:
    if ref.kind == "cluster-autoscaler":
        return (
            f"# - the ProvisioningRequest's nodeSelector {key}={value} places them only if "
            f"cluster-autoscaler has a node group whose every node is in {key}={value} "
            f"(a group per {key}); {group.name} is not one: create one first."
        )
    if ref.kind == "karpenter" and key in KARPENTER_CHOSEN:
        requirement = {"key": key, "operator": "In", "values": [value]}
        return (
            f"# - give the pods nodeSelector {key}={value} (Karpenter launches where the "
            f"pods require), or add to NodePool {ref.name}'s "
            f"spec.template.spec.requirements: {json.dumps(requirement)}"
        )
    if ref.kind == "karpenter":
        return (
            f"# - Karpenter cannot target {key}: the cloud sets it after launch and "
            "Karpenter's offerings know zone, capacity type and instance type only. "
            f"Reserve capacity in {key}={value} (a capacity reservation or placement "
            "group, selected by the EC2NodeClass's capacityReservationSelectorTerms) "
            f"or use a node group per {key}."
        )
    return f"# - {_per_domain_pool(ref.kind, ref.name, key, value)}"


def _per_domain_pool(kind: str, pool: str, key: str, value: str) -> str:
    """The managed pool that only lands in one domain: a new pool per domain."""
    if key != ZONE_LABEL:
        return (
            f"{kind} pool {pool} cannot target {key}: no pool setting chooses it; use a "
            f"reservation or compact placement in {key}={value} for a pool of its own"
        )
    new = f"{pool}-{value}"
    if kind == "gke":
        return (
            f"create a pool in that zone only: gcloud container node-pools create {new} "
            f"--cluster {CLUSTER_VARIABLE} --location {LOCATION_VARIABLE} "
            f"--node-locations {value} (same machine type as {pool}), and add the nodes there"
        )
    if kind == "eks":
        return (
            f"create a node group on the subnets of {value} only (aws eks "
            f"create-nodegroup --nodegroup-name {new} --subnets <subnets in {value}>), "
            "and add the nodes there"
        )
    if kind == "eksctl":
        return (
            f"create a node group in that zone only (eksctl create nodegroup --cluster "
            f"{CLUSTER_VARIABLE} --name {new} --node-zones {value}), and add the nodes there"
        )
    return (
        f"create a pool in that zone only (az aks nodepool add --name {new} --zones "
        f"{value}), and add the nodes there"
    )


def labels_text(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
