"""Actions a platform engineer can paste without harm (issue 30), each checked against
the real schema or CLI contract it is written for, expectations worked out by hand:

- ProvisioningRequest: the upstream CRD's openAPIV3Schema (kubernetes/autoscaler
  ``cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml``,
  copied in data/upstream-examples) and ``podSets[].podTemplateRef.name`` naming the
  PodTemplate shipped beside it (``apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go``);
- Karpenter: the NodePool after the merge patch against kubernetes-sigs/karpenter's
  CRD (``pkg/apis/crds/karpenter.sh_nodepools.yaml``), limits per ``nodepool.go``;
- EKS: ``update-nodegroup-config --scaling-config`` obeys NodegroupScalingConfig
  (minSize <= desiredSize <= maxSize);
- a card paid by a reservation changes no pool size.
"""

import copy
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from recommender.actions.cloud_commands import PoolResize, grow, restore
from recommender.actions.report import actions_for, named_placement, report_json
from recommender.actions.reservation import reservation_text
from recommender.engine.autoscaler.plan import NAIVE
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.engine.test_actions import AT, FIXTURES, busy_node, evaluated, pending_pod, sourced
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import AutoscalerRef, Node, NodeGroup, Taint

PR_CRD = (
    Path("kubernetes+autoscaler")
    / "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
)
NODEPOOL_CRD = Path("kubernetes-sigs+karpenter") / "pkg/apis/crds/karpenter.sh_nodepools.yaml"
P3_POOL = Path("k8s-examples") / "nodegroups" / "karpenter-nodepool-gpu-taint-p3.yaml"
RACK = "cloud.google.com/gce-topology-subblock"


def crd_schema(shared_data: Path, path: Path, version: str) -> dict:
    crd = yaml.safe_load((shared_data / "upstream-examples" / path).read_text())
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    return served["schema"]["openAPIV3Schema"]


def documents(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_it_writes_provisioning_requests_the_upstream_crd_accepts(shared_data):
    snapshot, evaluation = evaluated(read_objects(FIXTURES / "discovered-gke-cluster.yaml"))
    schema = crd_schema(shared_data, PR_CRD, "v1")
    (rec,) = evaluation.recommendations
    (request,) = [
        a for a in actions_for(rec, evaluation, snapshot.cluster) if a.kind == "ProvisioningRequest"
    ]
    requests = [d for d in documents(request.text) if d["kind"] == "ProvisioningRequest"]
    assert len(requests) == 1
    for body in requests:
        jsonschema.validate(body, schema)


def test_it_ships_the_pod_template_each_request_points_at():
    snapshot, evaluation = evaluated(read_objects(FIXTURES / "discovered-gke-cluster.yaml"))
    (rec,) = evaluation.recommendations
    (request,) = [
        a for a in actions_for(rec, evaluation, snapshot.cluster) if a.kind == "ProvisioningRequest"
    ]
    docs = documents(request.text)
    templates = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d
        for d in docs
        if d["kind"] == "PodTemplate"
    }
    for body in (d for d in docs if d["kind"] == "ProvisioningRequest"):
        for pod_set in body["spec"]["podSets"]:
            key = (body["metadata"]["namespace"], pod_set["podTemplateRef"]["name"])
            template = templates[key]
            # core/v1 PodTemplate: template.spec.containers[] each with a name and an image
            containers = template["template"]["spec"]["containers"]
            assert containers and all(c["name"] and c["image"] for c in containers)
            # provisioningrequest/pods: the pods consume this very request
            annotations = template["template"]["metadata"]["annotations"]
            assert annotations["autoscaling.x-k8s.io/consume-provisioning-request"] == key[1]


def limited_p3_pool(shared_data: Path) -> tuple[dict, list]:
    ((_, pool),) = read_objects(shared_data / P3_POOL)
    pool = copy.deepcopy(pool)
    # 4 GPUs and 1000 cores allowed; no node in the pool yet
    pool["spec"]["limits"] = {"nvidia.com/gpu": "4", "cpu": "1000"}
    pod = pending_pod("job", 8)
    # one p3.16xlarge (8 GPUs) is over the limit: a hand-written override lets the plan
    # take it anyway, so the card must raise the limit
    override = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "gpu-p3.16xlarge"},
        "spec": {"maxSize": 1},
    }
    return pool, sourced(pool, override, pod)


def test_it_raises_an_existing_karpenter_limit_by_the_shortfall_only(shared_data):
    pool, objects = limited_p3_pool(shared_data)
    snapshot, evaluation = evaluated(objects)
    (rec,) = evaluation.recommendations
    assert (rec.node_group, rec.count) == ("gpu-p3.16xlarge", 1)
    (action,) = actions_for(rec, evaluation, snapshot.cluster)
    # 8 GPUs needed, 4 left of 4: raised by 4 to 8; 64 cores fit under 1000: untouched
    command = action.text.splitlines()[-1]
    assert command == (
        "kubectl patch nodepool gpu --type merge -p "
        '\'{"spec": {"limits": {"nvidia.com/gpu": "8"}}}\''
    )
    patch = yaml.safe_load(command.split(" -p ", 1)[1].strip("'"))
    patched = copy.deepcopy(pool)
    patched["spec"]["limits"].update(patch["spec"]["limits"])
    # the limits as the NodePool CRD types them (the example pool itself omits the
    # required nodeClassRef, so the whole object is not what is checked here)
    limits_schema = crd_schema(shared_data, NODEPOOL_CRD, "v1")["properties"]["spec"]["properties"][
        "limits"
    ]
    jsonschema.validate(patched["spec"]["limits"], limits_schema)
    assert patched["spec"]["limits"] == {"nvidia.com/gpu": "8", "cpu": "1000"}


def test_it_leaves_a_karpenter_limit_alone_when_the_nodes_fit_under_it(shared_data):
    ((_, pool),) = read_objects(shared_data / P3_POOL)
    pool = copy.deepcopy(pool)
    pool["spec"]["limits"] = {"nvidia.com/gpu": "16"}
    snapshot, evaluation = evaluated(sourced(pool, pending_pod("job", 4)))
    (rec,) = evaluation.recommendations
    (action,) = actions_for(rec, evaluation, snapshot.cluster)
    assert "kubectl" not in action.text
    assert "# its spec.limits leave room for them: nothing to change." in action.text


def eks_under_cluster_autoscaler(desired_nodes: int = 1) -> list:
    """The AKS docs' CA status (group nodepool1, minSize=1, maxSize=5, target 1) on an
    EKS node group of that name: cluster-autoscaler manages the EKS group."""
    status = read_objects(FIXTURES / "ca-status-text-aks-docs.yaml")
    nodes = busy_node("e1", "eks.amazonaws.com/nodegroup", "nodepool1", "p4d.24xlarge")
    return status + sourced(*nodes, pending_pod("job", 8))


def scaling_config(command: str) -> dict[str, int]:
    (config,) = re.findall(r"--scaling-config (\S+)", command)
    return {k: int(v) for k, v in (item.split("=") for item in config.split(","))}


def test_it_sets_the_eks_desired_size_with_a_raised_minimum():
    snapshot, evaluation = evaluated(eks_under_cluster_autoscaler())
    (rec,) = evaluation.recommendations
    _request, grow, undo = actions_for(rec, evaluation, snapshot.cluster)
    # 1 node (target 1) + 1: min 2 > desired 1 would be rejected without desiredSize=2
    assert scaling_config(grow.text) == {"minSize": 2, "maxSize": 5, "desiredSize": 2}
    # back to the status's bounds; max was not lowered, so CA keeps the size
    assert scaling_config(undo.text) == {"minSize": 1, "maxSize": 5}
    for command in (grow.text, undo.text):
        config = scaling_config(command)
        assert (
            config["minSize"] <= config.get("desiredSize", config["minSize"]) <= config["maxSize"]
        )


def reservation_cluster() -> list:
    """The AWS export's cr-...60001 has 1 unused p4d.24xlarge in us-east-1a for team-a."""
    export = read_objects(FIXTURES / "aws-describe-capacity-reservations.json")
    bounds = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "p4d-ng"},
        "spec": {"maxSize": 4},
    }
    nodes = busy_node("a", "eks.amazonaws.com/nodegroup", "p4d-ng", "p4d.24xlarge")
    return export + sourced(*nodes, bounds, pending_pod("job", 8, namespace="team-a"))


def test_a_reservation_card_targets_the_reservation_and_resizes_no_pool():
    snapshot, evaluation = evaluated(reservation_cluster())
    (rec,) = evaluation.recommendations
    assert rec.reservation == "cr-0a1b2c3d4e5f60001-unused"
    (action,) = actions_for(rec, evaluation, snapshot.cluster)
    assert action.kind == "Reservation"
    assert "update-nodegroup-config" not in action.text
    assert "CapacityReservationId=cr-0a1b2c3d4e5f60001" in action.text


def test_a_karpenter_reservation_card_selects_the_reservation_id():
    objects = read_objects(FIXTURES / "aws-describe-capacity-reservations.json")
    snapshot = parse_objects(objects, cluster_name="t")
    assert snapshot.errors == ()
    reservation = next(
        r for r in snapshot.cluster.reservations if r.name.startswith("cr-0a1b2c3d4e5f60001")
    )
    template = Node(name="t", taints=(Taint("nvidia.com/gpu", "true", "NoSchedule"),))
    group = NodeGroup(
        "gpu-p4d", {}, 0, 4, 0.0, template=template, autoscaler=AutoscalerRef("karpenter", "gpu")
    )
    text = reservation_text(reservation, reservation.name, group, 1, ())
    body = yaml.safe_load("\n".join(line for line in text.splitlines() if not line.startswith("#")))
    # aws/karpenter-provider-aws: capacity type "reserved", node label capacity-reservation-id
    assert body["spec"]["nodeSelector"] == {
        "karpenter.sh/capacity-type": "reserved",
        "karpenter.k8s.aws/capacity-reservation-id": "cr-0a1b2c3d4e5f60001",
    }
    # the reserved nodes' taint: no pod given, so the toleration is added
    assert body["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]


def test_no_action_for_a_discovered_group_is_a_capacityweb_object():
    objects = read_objects(FIXTURES / "discovered-gke-cluster.yaml")
    # a second gang on the same pool: two cards, so the group has a total
    second = [
        copy.deepcopy(o)
        for _, o in objects
        if o["kind"] == "Pod" and "train" in o["metadata"]["name"]
    ]
    for obj in second:
        obj["metadata"]["name"] = obj["metadata"]["name"].replace("train", "tune")
        obj["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = "tune"
    snapshot, evaluation = evaluated(objects + sourced(*second))
    payload = report_json(evaluation, snapshot.cluster, snapshot.notices, "USD")
    assert payload["recommendations"]
    for rec in payload["recommendations"]:
        assert all("capacityweb.io" not in a["text"] for a in rec["actions"])
    (total,) = payload["nodeGroupTotals"]
    assert total["patch"] is None
    assert all("capacityweb.io" not in a["text"] for a in total["actions"])


def test_the_card_names_the_rack_a_gang_needs():
    objects = [copy.deepcopy(o) for _, o in read_objects(FIXTURES / "discovered-gke-cluster.yaml")]
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["labels"][RACK] = "r7"
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("train"):
            obj["metadata"].setdefault("annotations", {})[
                "kueue.x-k8s.io/podset-required-topology"
            ] = RACK
    snapshot, evaluation = evaluated(sourced(*objects))
    (rec,) = evaluation.recommendations
    assert rec.placement == {}
    (placing,) = [
        a for a in actions_for(rec, evaluation, snapshot.cluster) if a.kind == "Placement"
    ]
    # the template (a member's labels) is in rack r7: the plan counted the 2 nodes there
    assert placing.text.startswith(f"# the plan needs these 2 node(s) in {RACK}=r7:")


def test_cluster_autoscaler_never_scales_up_a_karpenter_node_pool(shared_data):
    snapshot, _ = evaluated(read_objects(shared_data / P3_POOL) + sourced(pending_pod("job", 4)))
    cluster = snapshot.cluster
    assert {g.autoscaler.kind for g in cluster.node_groups} == {"karpenter"}
    state = ClusterState.from_cluster(cluster)
    plan = scale_up(cluster, pending_workloads(cluster), state=state, mode=NAIVE, at=AT)
    # CA's node groups come from its cloud provider (ASGs, MIGs, VMSSs): no NodePool
    assert plan.additions == ()


# the arguments each CLI requires (aws eks update-nodegroup-config: --cluster-name,
# --nodegroup-name; gcloud container node-pools update: NAME, --cluster, --location (or a
# configured default, not assumed); gcloud container clusters resize: NAME, --node-pool,
# --num-nodes; az aks nodepool update/scale: --resource-group, --cluster-name, --name)
REQUIRED = {
    "eks": ("--cluster-name $CLUSTER", "--nodegroup-name p ", "--scaling-config "),
    "gke": ("--cluster $CLUSTER", "--location $LOCATION", "p "),
    "aks": ("--resource-group $RESOURCE_GROUP", "--cluster-name $CLUSTER", "--name p "),
    "eksctl": ("--cluster $CLUSTER", "--name p ", "--nodes-min ", "--nodes-max "),
}


@pytest.mark.parametrize("pool_kind", sorted(REQUIRED))
@pytest.mark.parametrize("autoscaled", [True, False])
def test_every_cloud_command_carries_its_required_arguments(pool_kind, autoscaled):
    resize = PoolResize(pool_kind, "p", 1, 5, 2, 4, autoscaled)
    for text in (grow(resize), restore(resize)):
        (command,) = [line for line in text.splitlines() if not line.startswith("#")]
        command = command.replace("--node-pool p ", "p ").replace(
            "resize $CLUSTER", "--cluster $CLUSTER"
        )
        for argument in REQUIRED[pool_kind]:
            assert argument in command + " "


def test_an_eksctl_node_group_is_discovered_and_resized_with_eksctl():
    bounds = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "gpu-ng"},
        "spec": {"maxSize": 3},
    }
    nodes = busy_node("n1", "alpha.eksctl.io/nodegroup-name", "gpu-ng", "p4d.24xlarge")
    snapshot, evaluation = evaluated(sourced(*nodes, bounds, pending_pod("job", 8)))
    (group,) = snapshot.cluster.node_groups
    assert (group.autoscaler.kind, group.source) == (
        "eksctl",
        "eksctl node group label + capacityweb.io NodeGroup overrides",
    )
    (rec,) = evaluation.recommendations
    grow, undo = actions_for(rec, evaluation, snapshot.cluster)
    # no autoscaler: desired 1 + 1, min stays at the 1 node it was held at, max 3
    assert grow.text == (
        "eksctl scale nodegroup --cluster $CLUSTER --name gpu-ng --nodes 2 --nodes-min 1 "
        "--nodes-max 3\n"
    )
    assert undo.text == (
        "eksctl scale nodegroup --cluster $CLUSTER --name gpu-ng --nodes 1 --nodes-min 1 "
        "--nodes-max 3\n"
    )


def test_the_page_placement_names_the_rack_the_plan_depends_on():
    objects = [copy.deepcopy(o) for _, o in read_objects(FIXTURES / "discovered-gke-cluster.yaml")]
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["labels"][RACK] = "r7"
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("train"):
            obj["metadata"].setdefault("annotations", {})[
                "kueue.x-k8s.io/podset-required-topology"
            ] = RACK
    snapshot, evaluation = evaluated(sourced(*objects))
    (rec,) = evaluation.recommendations
    # what the recommendations page shows under "Where:" (recommender.adapters)
    assert named_placement(rec, snapshot.cluster) == {RACK: "r7"}
