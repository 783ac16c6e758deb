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
    if ref.kind == "karpenter":
        return [_karpenter_action(rec, evaluation, cluster, group)]
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
    return actions


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
    added = sum(
        r.count * groups[r.node_group].template.gpu_count
        for r in evaluation.recommendations
        if r.node_group in groups
    )
    patch = {"spec": {"limits": {GPU_RESOURCE: str(held + added)}}}
    where = f"; the pods need nodeSelector {_labels(rec.placement)}" if rec.placement else ""
    kind = group.template.labels.get(INSTANCE_TYPE_LABEL, group.name)
    return Action(
        "KarpenterNodePool",
        f"# NodePool {pool}: Karpenter adds the {rec.count} x {kind} "
        f"itself for the pending pods{where}; only if its nvidia.com/gpu limit is below "
        f"{held + added}:\n"
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
