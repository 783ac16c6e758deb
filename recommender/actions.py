"""Recommendations as the action the user's own autoscaler takes, and the report's
discovery sections (node groups with their source and price, what was not modelled).

A recommendation says "add N nodes of group G (in domain D)". What a platform
team applies depends on what grows G (``NodeGroup.autoscaler``)::

    cluster-autoscaler group ─► ProvisioningRequest + PodTemplate per workload
                                (autoscaling.x-k8s.io/v1, best-effort-atomic-scale-up:
                                all of a gang's nodes or none; the template carries
                                the group's and the domain's nodeSelector)
                                + the managed pool's min raised with its cloud CLI
    Karpenter NodePool       ─► NodePool merge patch: spec.limits large enough for
                                the plan (Karpenter itself launches for pending pods)
    GKE / EKS / AKS pool     ─► the cloud CLI command that sets its size / min
                                (gcloud / aws / az, text to paste)
    capacityweb.io NodeGroup ─► the NodeGroup merge patch (recommender.engine.evaluate.report)

A size change does not choose where the cloud puts a node. When the group adds
nodes in several domains of a label the recommendation names (its placements),
a ``Placement`` action says so plainly and gives what does place them: the
ProvisioningRequest's nodeSelector on the domain label (cluster-autoscaler
scales only a group whose template carries it: a group per domain), Karpenter
NodePool requirements on a label Karpenter chooses at launch (zone, capacity
type, instance type; not a block or rack, which the cloud sets after launch),
or a per-domain node pool (GKE ``--node-locations``, an EKS node group on the
zone's subnets, AKS ``--zones``).

Every card is self-contained: its size or limit is the group's current one
plus this card's own nodes; the total of all cards of a group is given
separately (``nodeGroupTotals``, and the Karpenter comment).

Upstream formats: kubernetes/autoscaler ``cluster-autoscaler/apis/provisioningrequest/
autoscaling.x-k8s.io/v1/types.go`` (``provisioningClassName``, ``podSets[].count``,
``podSets[].podTemplateRef.name``), kubernetes-sigs/karpenter ``pkg/apis/v1/nodepool.go``
(``spec.limits``), ``gcloud container node-pools update --total-min-nodes``,
``gcloud container clusters resize --node-pool --num-nodes``, ``aws eks
update-nodegroup-config --scaling-config``, ``az aks nodepool scale --node-count`` /
``az aks nodepool update --update-cluster-autoscaler --min-count``.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from recommender.engine.evaluate.evaluation import Evaluation, Recommendation, WorkloadEvaluation
from recommender.engine.evaluate.report import (
    ATOMIC_CLASS,
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    node_group_patch,
    planned_size,
    provisioning_request,
    recommendation_yaml,
    spanned_domains,
)
from topology.hardware import GPU_RESOURCE, Cluster, ModelError, NodeGroup, Pod

KARPENTER_LABEL = "karpenter.sh/nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
CLUSTER_VARIABLE = "$CLUSTER"  # the cloud's name of the cluster: not in the snapshot
LOCATION_VARIABLE = "$LOCATION"  # the GKE cluster's region or zone: not in the snapshot either


@dataclass(frozen=True, slots=True)
class Action:
    """One thing to apply: ``kind`` names the tool, ``text`` is what to paste."""

    kind: str  # ProvisioningRequest | KarpenterNodePool | gcloud | aws | az | NodeGroup
    text: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


def actions_for(rec: Recommendation, evaluation: Evaluation, cluster: Cluster) -> list[Action]:
    """What to apply for one recommendation, for the autoscaler that grows its group."""
    group = next((g for g in cluster.node_groups if g.name == rec.node_group), None)
    if group is None or group.autoscaler is None:
        return [Action("NodeGroup", _yaml(node_group_patch(rec, evaluation, group)))]
    ref = group.autoscaler
    placing = _placement_action(rec, group)
    if ref.kind == "karpenter":
        return [_karpenter_action(rec, evaluation, cluster, group), *placing]
    actions = []
    if ref.kind == "cluster-autoscaler":
        workloads = {w.key: w for w in evaluation.workloads}
        for key in rec.workloads:
            if key in workloads:
                actions.append(_provisioning_action(workloads[key], cluster, group, rec.placement))
    pool_kind = ref.pool_kind if ref.kind == "cluster-autoscaler" else ref.kind
    pool = ref.pool if ref.kind == "cluster-autoscaler" else ref.name
    if pool_kind and pool:
        _current, size = planned_size(rec, evaluation)
        autoscaled = ref.kind == "cluster-autoscaler"
        actions.append(_cloud_action(pool_kind, pool, size, group, autoscaled))
    return [*actions, *placing]


# --- where the nodes land -----------------------------------------------------------------

# labels Karpenter chooses when it launches (offering requirements), so a NodePool
# requirement or a pod's nodeSelector on them places the node (kubernetes-sigs/karpenter
# pkg/apis/v1/labels.go WellKnownLabels)
KARPENTER_CHOSEN = (
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "karpenter.sh/capacity-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
)
ZONE_LABEL = "topology.kubernetes.io/zone"


def _placement_action(rec: Recommendation, group: NodeGroup) -> list[Action]:
    spans = spanned_domains(rec, group)
    if not spans or group.autoscaler is None:
        return []
    ref = group.autoscaler
    lines = [
        f"# node group {group.name} adds nodes in "
        + "; ".join(f"{k} = {', '.join(v)}" for k, v in spans.items())
        + ": a size change does not choose where the cloud puts them.",
        f"# To land these {rec.count} node(s) in {_labels(rec.placement)}:",
    ]
    for key in spans:
        value = rec.placement[key]
        if ref.kind == "cluster-autoscaler":
            lines.append(
                f"# - the ProvisioningRequest's nodeSelector {key}={value} places them only if "
                f"cluster-autoscaler has a node group whose every node is in {key}={value} "
                f"(a group per {key}); {group.name} is not one: create one first."
            )
        elif ref.kind == "karpenter" and key in KARPENTER_CHOSEN:
            requirement = {"key": key, "operator": "In", "values": [value]}
            lines.append(
                f"# - give the pods nodeSelector {key}={value} (Karpenter launches where the "
                f"pods require), or add to NodePool {ref.name}'s "
                f"spec.template.spec.requirements: {json.dumps(requirement)}"
            )
        elif ref.kind == "karpenter":
            lines.append(
                f"# - Karpenter cannot target {key}: the cloud sets it after launch and "
                "Karpenter's offerings know zone, capacity type and instance type only. "
                f"Reserve capacity in {key}={value} (a capacity reservation or placement "
                "group, selected by the EC2NodeClass's capacityReservationSelectorTerms) "
                f"or use a node group per {key}."
            )
        else:
            lines.append(f"# - {_per_domain_pool(ref.kind, ref.name, key, value)}")
    return [Action("Placement", "\n".join(lines) + "\n")]


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
    return (
        f"create a pool in that zone only (az aks nodepool add --name {new} --zones "
        f"{value}), and add the nodes there"
    )


def apply_text(rec: Recommendation, evaluation: Evaluation, cluster: Cluster) -> str:
    """What the recommendations page shows to apply: the YAML of
    ``recommendation_yaml`` for a project-defined group (its NodeGroup patch, and a
    ProvisioningRequest per gang); for a discovered group, its actions, each under a
    comment naming the tool."""
    group = next((g for g in cluster.node_groups if g.name == rec.node_group), None)
    if group is None or group.autoscaler is None:
        return recommendation_yaml(rec, evaluation, cluster.node_groups)
    return "\n".join(f"# {a.kind}\n{a.text}" for a in actions_for(rec, evaluation, cluster))


# --- cluster-autoscaler: ProvisioningRequest -------------------------------------------


def _provisioning_action(
    workload: WorkloadEvaluation, cluster: Cluster, group: NodeGroup, placement: Mapping[str, str]
) -> Action:
    namespace, _, name = workload.key.partition("/")
    member = _first_pending_pod(cluster, workload.key)
    selector = {**group.node_selector, **placement}
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "template": {
            "metadata": {"annotations": {CONSUME_ANNOTATION: name, CLASS_ANNOTATION: ATOMIC_CLASS}},
            "spec": _pod_spec(member, selector),
        },
    }
    request = provisioning_request(workload)
    comment = (
        f"# cluster-autoscaler group {group.autoscaler.name if group.autoscaler else group.name}: "
        f"all {workload.pods} pods of {workload.key} or none\n"
    )
    return Action("ProvisioningRequest", comment + _yaml(template) + "---\n" + _yaml(request))


def _first_pending_pod(cluster: Cluster, key: str) -> Pod | None:
    for pod in cluster.pending_pods():
        if pod.gang == key or (pod.gang is None and pod.key == key):
            return pod
    return None


def _pod_spec(pod: Pod | None, selector: Mapping[str, str]) -> dict[str, Any]:
    requests: dict[str, str] = {}
    tolerations: list[dict[str, str]] = []
    if pod is not None:
        if pod.requests.cpu_milli:
            requests["cpu"] = f"{pod.requests.cpu_milli}m"
        if pod.requests.memory_bytes:
            requests["memory"] = str(pod.requests.memory_bytes)
        if pod.gpu_count:
            requests[GPU_RESOURCE] = str(pod.gpu_count)
        requests.update({k: str(v) for k, v in sorted(pod.requests.extended.items())})
        tolerations = [
            {
                k: v
                for k, v in (
                    ("key", t.key),
                    ("operator", t.operator),
                    ("value", t.value),
                    ("effect", t.effect),
                )
                if v
            }
            for t in pod.tolerations
        ]
    spec: dict[str, Any] = {
        "nodeSelector": dict(sorted(selector.items())),
        "containers": [{"name": "member", "image": "pause", "resources": {"requests": requests}}],
    }
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


# --- Karpenter ----------------------------------------------------------------------------


def _karpenter_action(
    rec: Recommendation, evaluation: Evaluation, cluster: Cluster, group: NodeGroup
) -> Action:
    """Karpenter launches for pending pods by itself; what can stop it is the pool's
    limit. The patch sets the GPU limit to what the pool's nodes hold plus every
    node the plan adds to any of its groups."""
    pool = group.autoscaler.name if group.autoscaler else group.name
    held = sum(n.gpu_count for n in cluster.nodes if n.labels.get(KARPENTER_LABEL) == pool)
    groups = {
        g.name: g
        for g in cluster.node_groups
        if g.autoscaler and g.autoscaler.kind == "karpenter" and g.autoscaler.name == pool
    }
    cards = [r for r in evaluation.recommendations if r.node_group in groups]
    added = sum(r.count * groups[r.node_group].template.gpu_count for r in cards)
    own = held + rec.count * group.template.gpu_count  # this card alone: self-contained
    patch = {"spec": {"limits": {GPU_RESOURCE: str(own)}}}
    where = f"; the pods need nodeSelector {_labels(rec.placement)}" if rec.placement else ""
    kind = group.template.labels.get(INSTANCE_TYPE_LABEL, group.name)
    together = (
        f"# with the other {len(cards) - 1} card(s) of NodePool {pool}: a limit of "
        f"{held + added} in all (apply that once instead; limits do not add up)\n"
        if len(cards) > 1
        else ""
    )
    return Action(
        "KarpenterNodePool",
        f"# NodePool {pool}: Karpenter adds the {rec.count} x {kind} "
        f"itself for the pending pods{where}; only if its nvidia.com/gpu limit is below "
        f"{own}:\n{together}"
        f"kubectl patch nodepool {pool} --type merge -p '{json.dumps(patch, sort_keys=True)}'\n",
    )


# --- managed pools: the cloud CLI ------------------------------------------------------------


def _cloud_action(
    pool_kind: str, pool: str, size: int, group: NodeGroup, autoscaled: bool
) -> Action:
    """The size (or, under cluster-autoscaler, the min) of the pool set to the plan's size;
    the max raised with it when the plan goes past it."""
    top = max(size, group.max_size)
    if pool_kind == "gke":
        if autoscaled:
            command = (
                f"gcloud container node-pools update {pool} --cluster {CLUSTER_VARIABLE} "
                f"--location {LOCATION_VARIABLE} --enable-autoscaling "
                f"--total-min-nodes {size} --total-max-nodes {top}"
            )
        else:
            command = (
                f"gcloud container clusters resize {CLUSTER_VARIABLE} --location "
                f"{LOCATION_VARIABLE} --node-pool {pool} --num-nodes {size}"
                "  # per zone in a regional cluster"
            )
        return Action("gcloud", command + "\n")
    if pool_kind == "eks":
        desired = f",desiredSize={size}" if not autoscaled else ""
        return Action(
            "aws",
            f"aws eks update-nodegroup-config --cluster-name {CLUSTER_VARIABLE} "
            f"--nodegroup-name {pool} --scaling-config minSize={size},maxSize={top}{desired}\n",
        )
    if autoscaled:
        command = (
            f"az aks nodepool update --resource-group $RESOURCE_GROUP --cluster-name "
            f"{CLUSTER_VARIABLE} --name {pool} --update-cluster-autoscaler "
            f"--min-count {size} --max-count {top}"
        )
    else:
        command = (
            f"az aks nodepool scale --resource-group $RESOURCE_GROUP --cluster-name "
            f"{CLUSTER_VARIABLE} --name {pool} --node-count {size}"
        )
    return Action("az", command + "\n")


# --- the report's additions ---------------------------------------------------------------


def report_json(
    evaluation: Evaluation,
    cluster: Cluster,
    notices: Iterable[ModelError],
    currency: str,
) -> dict[str, Any]:
    """``evaluation.to_json()`` plus the additive keys: ``currency``, ``nodeGroups``,
    ``actions`` per recommendation and the notices in ``unsupported`` (the kinds not
    modelled are in ``ignored`` already, from ``Evaluation.to_json``)."""
    payload = evaluation.to_json()
    payload["currency"] = currency
    payload["nodeGroups"] = [node_group_json(g) for g in cluster.node_groups]
    for rec, item in zip(evaluation.recommendations, payload["recommendations"], strict=True):
        item["actions"] = [a.to_json() for a in actions_for(rec, evaluation, cluster)]
    payload.setdefault("unsupported", []).extend(
        {"object": n.object, "field": n.field, "reason": n.reason} for n in notices
    )
    return payload


def node_group_json(group: NodeGroup) -> dict[str, Any]:
    ref = group.autoscaler
    return {
        "name": group.name,
        "source": group.source,
        "autoscaler": None if ref is None else {"kind": ref.kind, "name": ref.name},
        "minSize": group.min_size,
        "maxSize": group.max_size,
        "currentSize": group.current_size,
        "pricePerNodeHour": group.price_per_node_hour,
        "priceSource": group.price_source,
        "notes": list(group.notes),
    }


def report_text(
    evaluation: Evaluation,
    cluster: Cluster,
    notices: Iterable[ModelError],
    currency: str,
    ignored: Mapping[str, int] | None = None,
) -> str:
    """The sections the text report gains: node groups, actions, not modelled."""
    lines = [f"== Node groups (money in {currency} per hour) =="]
    for group in cluster.node_groups:
        price = (
            f"{group.price_per_node_hour:,.2f} {currency}/h per node ({group.price_source})"
            if group.price_source
            else "no price"
        )
        lines.append(
            f"* {group.name}: {group.current_size} nodes (min {group.min_size}, max "
            f"{group.max_size}), {price}; from {group.source or 'unknown source'}"
        )
        lines += [f"    note: {note}" for note in group.notes]
    if len(lines) == 1:
        lines.append("no node group known")
    lines.append("")
    lines.append("== Actions for your autoscaler ==")
    if not evaluation.recommendations:
        lines.append("nothing to apply")
    for rec in evaluation.recommendations:
        lines.append(
            f"* add {rec.count} x {rec.node_group} "
            f"({rec.cost_per_hour:,.2f} {currency}/h) for {', '.join(rec.workloads)}:"
        )
        for action in actions_for(rec, evaluation, cluster):
            lines.append(f"  [{action.kind}]")
            lines += [f"    {line}" if line else "" for line in action.text.rstrip().splitlines()]
    notices = list(notices)
    if notices or ignored:
        lines.append("")
        lines.append("== Read but not modelled ==")
        lines += [f"* {n}" for n in notices]
        lines += [f"* {kind}: {count} ignored" for kind, count in sorted((ignored or {}).items())]
    return "\n".join(lines) + "\n"


def _yaml(body: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(body), sort_keys=False, default_flow_style=False)


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
