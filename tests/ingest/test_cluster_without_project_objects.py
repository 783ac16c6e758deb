"""Issue 20's done-when: a cluster with no capacityweb.io object at all, read live through
the local list/watch server by the real client, ingested and evaluated: recommendations
with prices.

The cluster: two managed pools (a GKE pool of a2-highgpu-8g and an EKS node group of
p4d.24xlarge, one busy node each), cluster-autoscaler's status ConfigMap naming both,
the real Karpenter NodePool, JobSet, Kueue ClusterQueue and LocalQueue of the shared
k8s-examples, and one JobSet of 2 x 8 A100 GPUs queued on that ClusterQueue.
Node GPU labels are the real GPU Feature Discovery labels of the shared example node
(``nvidia.com/gpu.count`` set to the 8 GPUs both instance types carry); the nodes,
the busy pods, the status ConfigMap and the GPU JobSet are written here in the upstream
schemas (cluster-autoscaler ``clusterstate/api/types.go`` YAML status, JobSet
``jobset.x-k8s.io/v1alpha2``), every name made up.
"""

from __future__ import annotations

import copy
import io
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from tests.ingest.kubeobjects import EXAMPLES_DIR
from tests.ingest.kubeserver import KubeServer
from topology.ingest.files import read_objects

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

A100 = "A100-SXM4-40GB"


def _gfd_labels() -> dict[str, str]:
    """The GFD labels of the shared example node (a ``kubectl get nodes -o yaml`` excerpt
    with ``...`` elisions, which are dropped before parsing)."""
    path = EXAMPLES_DIR / "nodes" / "gfd-readme-kubectl-get-nodes-a100-dgx2h.yaml"
    lines = [
        line
        for line in path.read_text().splitlines()
        if not line.startswith("$") and line.strip() != "..."
    ]
    (node,) = yaml.safe_load("\n".join(lines))["items"]
    labels = {str(k): str(v) for k, v in node["metadata"]["labels"].items()}
    assert labels["nvidia.com/gpu.product"] == A100
    return {**labels, "nvidia.com/gpu.count": "8"}


def _node(name: str, pool_labels: dict[str, str]) -> dict[str, Any]:
    labels = {**_gfd_labels(), "kubernetes.io/hostname": name, **pool_labels}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": {"cpu": "94", "memory": "1300Gi", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


GKE_NODE = _node(
    "gke-prod-a2-pool-1",
    {
        "cloud.google.com/gke-nodepool": "a2-pool",
        "node.kubernetes.io/instance-type": "a2-highgpu-8g",
        "topology.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": "us-central1-a",
    },
)
EKS_NODE = _node(
    "ip-10-0-1-17.ec2.internal",
    {
        "eks.amazonaws.com/nodegroup": "p4d-nodes",
        "node.kubernetes.io/instance-type": "p4d.24xlarge",
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1a",
    },
)


def _busy_pod(name: str, node: str) -> dict[str, Any]:
    requests = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "serving", "name": name},
        "spec": {
            "nodeName": node,
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [{"name": "c", "resources": {"requests": requests}}],
        },
        "status": {"phase": "Running"},
    }


# cluster-autoscaler >= 1.30 writes its status as YAML (clusterstate/api/types.go
# ClusterAutoscalerStatus): the GKE group (a managed instance group) may grow to 4,
# the EKS group (an auto scaling group) is at its maximum of 1.
CA_STATUS = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"namespace": "kube-system", "name": "cluster-autoscaler-status"},
    "data": {
        "status": yaml.safe_dump(
            {
                "time": "2026-12-04 08:00:00.000000000 +0000 UTC",
                "autoscalerStatus": "Running",
                "nodeGroups": [
                    {
                        "name": "https://www.googleapis.com/compute/v1/projects/p/zones/"
                        "us-central1-a/instanceGroups/gke-prod-a2-pool-5e6f7a8b-grp",
                        "health": {
                            "status": "Healthy",
                            "nodeCounts": {"registered": {"total": 1, "ready": 1}},
                            "cloudProviderTarget": 1,
                            "minSize": 0,
                            "maxSize": 4,
                        },
                        "scaleUp": {"status": "NoActivity"},
                    },
                    {
                        "name": "eks-p4d-nodes-46c5e3f1-7b0a-4f0c-9e0d-2a1b3c4d5e6f",
                        "health": {
                            "status": "Healthy",
                            "nodeCounts": {"registered": {"total": 1, "ready": 1}},
                            "cloudProviderTarget": 1,
                            "minSize": 1,
                            "maxSize": 1,
                        },
                        "scaleUp": {"status": "NoActivity"},
                    },
                ],
            }
        )
    },
}

# 2 pods x 8 A100 GPUs, admitted by Kueue as one workload on the shared example's queue.
GPU_JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {
        "namespace": "default",
        "name": "llm-finetune",
        "labels": {"kueue.x-k8s.io/queue-name": "tas-user-queue"},
    },
    "spec": {
        "replicatedJobs": [
            {
                "name": "workers",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": 2,
                        "completions": 2,
                        "template": {
                            "spec": {
                                "nodeSelector": {"nvidia.com/gpu.product": A100},
                                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                                "containers": [
                                    {
                                        "name": "trainer",
                                        "resources": {
                                            "requests": {
                                                "cpu": "8",
                                                "memory": "32Gi",
                                                "nvidia.com/gpu": "8",
                                            }
                                        },
                                    }
                                ],
                            }
                        },
                    }
                },
            }
        ]
    },
}


def _example(folder: str, name: str, *kinds: str) -> list[dict[str, Any]]:
    objects = [o for _s, o in read_objects(EXAMPLES_DIR / folder / name)]
    found = [o for o in objects if o.get("kind") in kinds]
    assert {o["kind"] for o in found} == set(kinds), name
    return [copy.deepcopy(o) for o in found]


def _cluster_objects() -> list[dict[str, Any]]:
    return [
        GKE_NODE,
        EKS_NODE,
        _busy_pod("serve-gke", GKE_NODE["metadata"]["name"]),
        _busy_pod("serve-eks", EKS_NODE["metadata"]["name"]),
        CA_STATUS,
        *_example("nodegroups", "karpenter-nodepool-gpu-taint-p3.yaml", "NodePool"),
        *_example("gangs", "kueue-jobs-sample-jobset-tas-sliced.yaml", "JobSet"),
        *_example("gangs", "kueue-tas-sample-gpu-queues.yaml", "ClusterQueue", "LocalQueue"),
        GPU_JOBSET,
    ]


@pytest.fixture
def evaluated(tmp_path: Path) -> tuple[Any, str, KubeServer]:
    from recommender.models import Evaluation

    server = KubeServer().start()
    try:
        server.put_many(_cluster_objects())
        server.unserved.add("LeaderWorkerSet.leaderworkerset.x-k8s.io")  # CRD not installed
        name = f"no-project-{uuid.uuid4().hex[:6]}"
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        out = io.StringIO()
        call_command(
            "ingest", name, "--source", "kube", "--kubeconfig", str(kubeconfig), stdout=out
        )
    finally:
        server.stop()
    evaluation = Evaluation.objects.filter(snapshot__cluster__name=name).latest("pk")
    return evaluation, out.getvalue(), server


def test_it_reads_the_cluster_only_through_get_list_and_watch(evaluated):
    evaluation, output, server = evaluated
    assert {method for method, _path, _query in server.requests} == {"GET"}
    config_map_calls = [q for _m, p, q in server.requests if p.endswith("/configmaps")]
    assert config_map_calls
    assert all(
        q.get("fieldSelector") == "metadata.name=cluster-autoscaler-status"
        for q in config_map_calls
    )
    # Kueue is served at v1beta1 only: the source fell back from v1beta2
    assert any(p == "/apis/kueue.x-k8s.io/v1beta1/clusterqueues" for _m, p, _q in server.requests)
    unserved = "LeaderWorkerSet.leaderworkerset.x-k8s.io"
    assert f"not served by the cluster, read as none: {unserved}" in output
    assert evaluation.snapshot.object_counts["unavailable"] == [unserved]
    assert evaluation.snapshot.errors == []


def test_it_discovers_the_node_groups_with_their_sources_and_prices(evaluated):
    evaluation, _output, _server = evaluated
    groups = {g["name"]: g for g in evaluation.result["nodeGroups"]}
    assert evaluation.result["currency"] == "USD"
    # a2-pool: the GKE label's pool, joined to the CA group whose name contains it;
    # bounds from the status; price: the table's gcp a2-highgpu-8g us-central1 row
    a2 = groups["a2-pool"]
    assert a2["source"] == "cluster-autoscaler status ConfigMap + GKE node pool label"
    assert (a2["minSize"], a2["maxSize"], a2["currentSize"]) == (0, 4, 1)
    assert a2["pricePerNodeHour"] == 29.38708
    # p4d-nodes: the EKS node group, at its CA maximum; aws p4d.24xlarge us-east-1 row
    p4d = groups["p4d-nodes"]
    assert p4d["source"] == "cluster-autoscaler status ConfigMap + EKS node group label"
    assert (p4d["minSize"], p4d["maxSize"], p4d["currentSize"]) == (1, 1, 1)
    assert p4d["pricePerNodeHour"] == 32.7726
    # the real Karpenter NodePool allows p3.8xlarge and p3.16xlarge: one group each,
    # priced in the aws default region (the NodePool names none), unbounded (no limits)
    assert groups["gpu-p3.8xlarge"]["pricePerNodeHour"] == 12.24
    assert groups["gpu-p3.16xlarge"]["pricePerNodeHour"] == 24.48
    assert groups["gpu-p3.16xlarge"]["maxSize"] == 1000
    assert set(groups) == {"a2-pool", "p4d-nodes", "gpu-p3.8xlarge", "gpu-p3.16xlarge"}


def test_it_recommends_the_scale_up_with_its_price(evaluated):
    evaluation, _output, _server = evaluated
    workloads = {w["name"]: w for w in evaluation.result["workloads"]}
    # 2 x 8 A100 GPUs within the ClusterQueue's 16-GPU quota (cpu 16 of 100, memory
    # 64Gi of 100Gi); both A100 nodes are busy, p4d-nodes is at its maximum and the
    # Karpenter pool's V100 types miss the product selector: 2 new a2-pool nodes
    finetune = workloads["default/llm-finetune"]
    assert finetune["verdict"] == "runs_after_scale_up"
    assert finetune["joint"]["addNodes"] == {"a2-pool": 2}
    (recommendation,) = evaluation.result["recommendations"]
    assert recommendation["nodeGroup"] == "a2-pool"
    assert recommendation["count"] == 2
    assert recommendation["workloads"] == ["default/llm-finetune"]
    assert recommendation["costPerHour"] == pytest.approx(2 * 29.38708)
    assert evaluation.result["cost"]["jointPerHour"] == pytest.approx(58.77416)
    # the actions the cluster's own autoscaler takes: no capacityweb.io NodeGroup patch
    # either the ProvisioningRequest or the pool's size, then the bounds restored
    kinds = [(a["kind"], a["role"]) for a in recommendation["actions"]]
    assert kinds == [("ProvisioningRequest", "either"), ("gcloud", "or"), ("gcloud", "afterwards")]
    provisioning, gcloud, _undo = (a["text"] for a in recommendation["actions"])
    assert "count: 2" in provisioning and "cloud.google.com/gke-nodepool: a2-pool" in provisioning
    assert "gcloud container node-pools update a2-pool " in gcloud
    assert "--total-min-nodes 3 --total-max-nodes 4" in gcloud  # 1 node + 2, max unchanged


def test_it_says_why_the_real_example_jobset_waits(evaluated):
    evaluation, _output, _server = evaluated
    workloads = {w["name"]: w for w in evaluation.result["workloads"]}
    sliced = workloads["default/jobset-tas-sliced"]
    # its kueue.x-k8s.io/queue-name is user-queue; the example's LocalQueue is tas-user-queue
    assert sliced["verdict"] == "waiting"
    assert sliced["reasons"] == ["waiting: LocalQueue default/user-queue not found"]
    assert sliced["joint"]["addNodes"] == {}
