"""Recommendations as what the user's own autoscaler applies, worked out by hand."""

from datetime import UTC, datetime
from pathlib import Path

import yaml

from recommender.actions.report import actions_for, report_json, report_text
from recommender.engine.evaluate.evaluation import evaluate
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

FIXTURES = Path(__file__).parent / "fixtures"
AT = datetime(2026, 12, 2, tzinfo=UTC)
GPU_TOLERATION = [{"key": "nvidia.com/gpu", "operator": "Exists"}]


def pending_pod(name, gpus, namespace="ml"):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "tolerations": GPU_TOLERATION,
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": gpus}}}
            ],
        },
        "status": {"phase": "Pending"},
    }


def busy_node(name, pool_label, pool, kind, zone="us-east-1a"):
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    pool_label: pool,
                    "node.kubernetes.io/instance-type": kind,
                    "topology.kubernetes.io/region": zone[:-1],
                    "topology.kubernetes.io/zone": zone,
                },
            },
            "status": {
                "allocatable": {"cpu": "90", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": 8}
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"on-{name}", "namespace": "serving"},
            "spec": {
                "nodeName": name,
                "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 8}}}],
            },
            "status": {"phase": "Running"},
        },
    ]


def evaluated(objects):
    snapshot = parse_objects(objects, cluster_name="t")
    assert snapshot.errors == ()
    return snapshot, evaluate(snapshot.cluster, at=AT)


def sourced(*objects):
    return [("cluster.yaml", o) for o in objects]


def test_a_cluster_autoscaler_group_gets_either_a_provisioning_request_or_the_pool_min():
    snapshot, evaluation = evaluated(read_objects(FIXTURES / "discovered-gke-cluster.yaml"))
    # both a2 nodes are full; the gang needs 2 x 8 GPUs: 2 new a2-highgpu-8g nodes
    (rec,) = evaluation.recommendations
    assert (rec.node_group, rec.count, rec.workloads) == ("a2-pool", 2, ("ml/train",))
    request, gcloud, undo = actions_for(rec, evaluation, snapshot.cluster)
    assert (request.role, gcloud.role, undo.role) == ("either", "or", "afterwards")
    template, provisioning = yaml.safe_load_all(request.text)
    assert request.kind == "ProvisioningRequest"
    # flags.go: --enable-provisioning-requests defaults to false
    assert request.text.startswith(
        "# needs cluster-autoscaler running with --enable-provisioning-requests=true"
    )
    assert provisioning["apiVersion"] == "autoscaling.x-k8s.io/v1"
    assert provisioning["spec"] == {
        "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
        "podSets": [{"count": 2, "podTemplateRef": {"name": "train"}}],
    }
    assert (template["kind"], template["metadata"]) == (
        "PodTemplate",
        {"name": "train", "namespace": "ml"},
    )
    spec = template["template"]["spec"]
    assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "a2-pool"}
    assert spec["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "8"
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    # 2 nodes now + 2 = 4, which is also CA's max (maxSize=4 in the status)
    assert gcloud.kind == "gcloud"
    assert gcloud.text.endswith(
        "gcloud container node-pools update a2-pool --cluster $CLUSTER --location $LOCATION "
        "--enable-autoscaling --total-min-nodes 4 --total-max-nodes 4\n"
    )
    # the status's bounds back: minSize=0, maxSize=4
    assert undo.text == (
        "gcloud container node-pools update a2-pool --cluster $CLUSTER --location $LOCATION "
        "--enable-autoscaling --total-min-nodes 0 --total-max-nodes 4\n"
    )


def test_the_json_report_adds_currency_node_groups_and_actions():
    snapshot, evaluation = evaluated(read_objects(FIXTURES / "discovered-gke-cluster.yaml"))
    payload = report_json(evaluation, snapshot.cluster, snapshot.notices, "USD")
    assert payload["currency"] == "USD"
    assert payload["schemaVersion"] == 1
    groups = {g["name"]: g for g in payload["nodeGroups"]}
    assert groups["a2-pool"]["source"] == (
        "cluster-autoscaler status ConfigMap + GKE node pool label"
    )
    assert groups["a2-pool"]["pricePerNodeHour"] == 29.38708
    assert (groups["a2-pool"]["minSize"], groups["a2-pool"]["maxSize"]) == (0, 4)
    # a2 template: 94 cores less the dcgm DaemonSet's 500m (not shown in JSON; via the model)
    a2 = next(g for g in snapshot.cluster.node_groups if g.name == "a2-pool")
    assert a2.template.allocatable.cpu_milli == 93_500
    (rec,) = payload["recommendations"]
    assert [(a["kind"], a["role"]) for a in rec["actions"]] == [
        ("ProvisioningRequest", "either"),
        ("gcloud", "or"),
        ("gcloud", "afterwards"),
    ]
    # 2 x 29.38708
    assert rec["costPerHour"] == 58.77416


def test_the_text_report_shows_groups_with_source_price_and_currency():
    snapshot, evaluation = evaluated(read_objects(FIXTURES / "discovered-gke-cluster.yaml"))
    text = report_text(evaluation, snapshot.cluster, snapshot.notices, "USD")
    assert "== Node groups (money in USD per hour) ==" in text
    assert "* a2-pool: 2 nodes (min 0, max 4), $29.39/h per node (gcp on-demand us-central1" in text
    assert "from cluster-autoscaler status ConfigMap + GKE node pool label" in text
    # 2 x 29.38708 = 58.77416, to the cent
    assert "* add 2 x a2-pool ($58.77/h) for ml/train:" in text


def test_an_eks_node_group_gets_the_aws_cli_scaling_config():
    override = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "p4d-ng"},
        "spec": {"maxSize": 5},
    }
    objects = sourced(
        *busy_node("e1", "eks.amazonaws.com/nodegroup", "p4d-ng", "p4d.24xlarge"),
        override,
        pending_pod("job", 8),
    )
    snapshot, evaluation = evaluated(objects)
    (rec,) = evaluation.recommendations
    grow, undo = actions_for(rec, evaluation, snapshot.cluster)
    # not under cluster-autoscaler: min stays (held at its 1 node), desired 1 + 1
    assert grow.text == (
        "aws eks update-nodegroup-config --cluster-name $CLUSTER --nodegroup-name p4d-ng "
        "--scaling-config minSize=1,maxSize=5,desiredSize=2\n"
    )
    assert (undo.role, undo.text) == (
        "afterwards",
        "aws eks update-nodegroup-config --cluster-name $CLUSTER --nodegroup-name p4d-ng "
        "--scaling-config minSize=1,maxSize=5,desiredSize=1\n",
    )
    assert rec.cost_per_hour == 32.7726  # p4d.24xlarge us-east-1, price table


def test_an_aks_pool_under_cluster_autoscaler_gets_its_min_count_raised():
    objects = read_objects(FIXTURES / "ca-status-text-aks-docs.yaml") + sourced(
        *busy_node("aks-1", "kubernetes.azure.com/agentpool", "nodepool1", "Standard_ND96asr_v4"),
        pending_pod("job", 8),
    )
    snapshot, evaluation = evaluated(objects)
    (rec,) = evaluation.recommendations
    actions = actions_for(rec, evaluation, snapshot.cluster)
    assert [a.kind for a in actions] == ["ProvisioningRequest", "az", "az"]
    _request, az, undo = actions
    # 1 node now + 1; CA's maxSize 5 stays
    assert az.text.endswith(
        "az aks nodepool update --resource-group $RESOURCE_GROUP --cluster-name $CLUSTER "
        "--name nodepool1 --update-cluster-autoscaler --min-count 2 --max-count 5\n"
    )
    # the status said minSize=1, maxSize=5
    assert undo.text == (
        "az aks nodepool update --resource-group $RESOURCE_GROUP --cluster-name $CLUSTER "
        "--name nodepool1 --update-cluster-autoscaler --min-count 1 --max-count 5\n"
    )


def test_a_karpenter_pool_without_limits_gets_no_limit_patch(shared_data):
    pool = shared_data / "k8s-examples" / "nodegroups" / "karpenter-nodepool-gpu-taint-p3.yaml"
    objects = read_objects(pool) + sourced(pending_pod("job", 4))
    snapshot, evaluation = evaluated(objects)
    # 4 GPUs: one p3.8xlarge (12.24/h) is cheaper than one p3.16xlarge (24.48/h)
    (rec,) = evaluation.recommendations
    assert (rec.node_group, rec.count) == ("gpu-p3.8xlarge", 1)
    (action,) = actions_for(rec, evaluation, snapshot.cluster)
    assert action.kind == "KarpenterNodePool"
    # the NodePool has no spec.limits: a limit of 4 would cap an unbounded pool
    assert "kubectl" not in action.text
    assert "# NodePool gpu sets no spec.limits: nothing to change" in action.text


def test_a_project_node_group_card_raises_its_size_then_restores_its_bounds():
    group = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "h100"},
        "spec": {
            "nodeSelector": {"pool": "h100"},
            "minSize": 0,
            "maxSize": 3,
            "pricePerNodeHour": 80.0,
            "template": {
                "allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"}
            },
        },
    }
    snapshot, evaluation = evaluated(sourced(group, pending_pod("job", 8)))
    (rec,) = evaluation.recommendations
    grow, undo = actions_for(rec, evaluation, snapshot.cluster)
    assert (grow.kind, grow.role, undo.role) == ("NodeGroup", "apply", "afterwards")
    assert yaml.safe_load(grow.text)["spec"] == {"minSize": 1}
    # a lone pod, one domain: no ProvisioningRequest; the group's own bounds come back
    assert yaml.safe_load(undo.text)["spec"] == {"minSize": 0, "maxSize": 3}


def test_the_reports_list_ignored_kinds(shared_data):
    path = (
        shared_data
        / "k8s-examples"
        / "nodegroups"
        / "karpenter-nodeoverlay-g6f-fractional-gpu.yaml"
    )
    snapshot, evaluation = evaluated(read_objects(path))
    payload = report_json(evaluation, snapshot.cluster, snapshot.notices, "USD")
    assert payload["ignored"] == [
        {"kind": "NodeOverlay", "apiVersion": "karpenter.sh/v1alpha1", "count": 1}
    ]
    text = report_text(evaluation, snapshot.cluster, snapshot.notices, "USD", snapshot.ignored)
    assert "* NodeOverlay (karpenter.sh/v1alpha1): 1 ignored" in text


def test_the_engine_report_patches_no_node_group_the_cluster_does_not_have():
    from recommender.engine.evaluate.report import render_text

    snapshot, evaluation = evaluated(read_objects(FIXTURES / "discovered-gke-cluster.yaml"))
    text = render_text(evaluation, snapshot.cluster.node_groups)
    assert "* add 2 x a2-pool for ml/train" in text
    assert "    what to apply: see Actions for your autoscaler" in text
    assert "kind: NodeGroup" not in text


def zoned_pod(name, gpus, zone):
    pod = pending_pod(name, gpus)
    pod["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": zone}
    return pod


def two_zone_override(name, max_size=5):
    return {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": name},
        "spec": {
            "maxSize": max_size,
            "placement": [
                {"labels": {"topology.kubernetes.io/zone": "us-east-1a"}, "maxNewNodes": 2},
                {"labels": {"topology.kubernetes.io/zone": "us-east-1b"}, "maxNewNodes": 2},
            ],
        },
    }


def test_a_pool_spanning_zones_says_a_resize_does_not_place_and_offers_a_zonal_pool():
    objects = sourced(
        *busy_node("e1", "eks.amazonaws.com/nodegroup", "p4d-ng", "p4d.24xlarge"),
        two_zone_override("p4d-ng"),
        zoned_pod("job", 8, "us-east-1b"),
    )
    snapshot, evaluation = evaluated(objects)
    (rec,) = evaluation.recommendations
    # the pod requires us-east-1b: the plan takes the group's us-east-1b placement
    assert dict(rec.placement) == {"topology.kubernetes.io/zone": "us-east-1b"}
    aws, _undo, placing = actions_for(rec, evaluation, snapshot.cluster)
    assert aws.kind == "aws"
    assert placing.kind == "Placement"
    assert placing.text == (
        "# node group p4d-ng adds nodes in topology.kubernetes.io/zone = us-east-1a, "
        "us-east-1b: a size change does not choose where the cloud puts them.\n"
        "# To land these 1 node(s) in topology.kubernetes.io/zone=us-east-1b:\n"
        "# - create a node group on the subnets of us-east-1b only (aws eks create-nodegroup "
        "--nodegroup-name p4d-ng-us-east-1b --subnets <subnets in us-east-1b>), and add the "
        "nodes there\n"
    )


def test_karpenter_places_a_zone_by_requirement_but_cannot_target_a_block(shared_data):
    pool = shared_data / "k8s-examples" / "nodegroups" / "karpenter-nodepool-gpu-taint-p3.yaml"
    zoned = two_zone_override("gpu-p3.8xlarge")
    objects = read_objects(pool) + sourced(zoned, zoned_pod("job", 4, "us-east-1a"))
    snapshot, evaluation = evaluated(objects)
    (rec,) = evaluation.recommendations
    assert (rec.node_group, dict(rec.placement)) == (
        "gpu-p3.8xlarge",
        {"topology.kubernetes.io/zone": "us-east-1a"},
    )
    limit, placing = actions_for(rec, evaluation, snapshot.cluster)
    assert limit.kind == "KarpenterNodePool"
    assert placing.text.splitlines()[-1] == (
        "# - give the pods nodeSelector topology.kubernetes.io/zone=us-east-1a (Karpenter "
        "launches where the pods require), or add to NodePool gpu's "
        'spec.template.spec.requirements: {"key": "topology.kubernetes.io/zone", '
        '"operator": "In", "values": ["us-east-1a"]}'
    )
    block = "cloud.google.com/gce-topology-block"
    blocks = {
        **zoned,
        "spec": {
            "maxSize": 5,
            "placement": [
                {"labels": {block: "b1"}, "maxNewNodes": 1},
                {"labels": {block: "b2"}, "maxNewNodes": 1},
            ],
        },
    }
    pod = pending_pod("job", 4)
    pod["spec"]["nodeSelector"] = {block: "b2"}
    snapshot, evaluation = evaluated(read_objects(pool) + sourced(blocks, pod))
    (rec,) = evaluation.recommendations
    assert dict(rec.placement) == {block: "b2"}
    _limit, placing = actions_for(rec, evaluation, snapshot.cluster)
    assert f"# - Karpenter cannot target {block}: the cloud sets it after launch" in placing.text
