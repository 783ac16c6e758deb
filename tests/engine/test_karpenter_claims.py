"""Karpenter's in-flight NodeClaims and the instance catalogue (issue 30 item 3), worked
out by hand from kubernetes-sigs/karpenter (``pkg/apis/v1/nodeclaim.go``; the cluster
state counts a NodeClaim without its Node as a node) and the generated instance-type
reference of aws/karpenter-provider-aws."""

from recommender.engine.evaluate.evaluation import evaluate
from tests.builders.objects import node_claim_object, node_object, node_pool_object
from tests.engine.test_actions import AT, evaluated, pending_pod, sourced
from topology.kube.karpenter import bundled_catalogue

GPU_TAINT = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]


def node_pool(requirement: dict) -> dict:
    return node_pool_object("gpu", requirement, taints=GPU_TAINT).dict()


LAUNCHED = {"conditions": [{"type": "Launched", "status": "True"}]}
IN_FLIGHT_P5 = node_claim_object("gpu-abc", "gpu", "p5.48xlarge").status(**LAUNCHED)


P5 = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]}


def test_an_in_flight_node_claim_is_an_upcoming_node_not_bought_twice() -> None:
    # one 8-GPU pod; a p5.48xlarge NodeClaim launched for it, no Node yet: the pod lands
    # on the upcoming node, nothing is recommended
    objects = sourced(node_pool(P5), IN_FLIGHT_P5.dict(), pending_pod("job", 8))
    snapshot, evaluation = evaluated(objects)
    (group,) = snapshot.cluster.node_groups
    assert (group.current_size, group.autoscaler.target_size) == (0, 1)
    assert evaluation.recommendations == ()


def test_without_the_claim_one_p5_is_recommended() -> None:
    snapshot, evaluation = evaluated(sourced(node_pool(P5), pending_pod("job", 8)))
    (rec,) = evaluation.recommendations
    assert (rec.node_group, rec.count) == ("gpu-p5.48xlarge", 1)


def test_a_registered_claim_is_its_node_not_an_upcoming_one() -> None:
    claim = IN_FLIGHT_P5.status(nodeName="ip-10-0-0-1").dict()
    node = (
        node_object("ip-10-0-0-1")
        .labels({"karpenter.sh/nodepool": "gpu", "node.kubernetes.io/instance-type": "p5.48xlarge"})
        .allocatable(cpu="191", memory="1800Gi")
        .gpus(8)
    )
    snapshot, _ = evaluated(sourced(node_pool(P5), claim, node.dict()))
    (group,) = snapshot.cluster.node_groups
    assert group.autoscaler.target_size is None


def test_a_one_gpu_pod_on_a_p3_family_pool_gets_a_p3_2xlarge(shared_data) -> None:
    # instance-family In [p3]: p3.2xlarge (1 x V100) is now in the catalogue; the
    # cheapest fitting type for 1 GPU (3.06/h against 12.24/h for p3.8xlarge)
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p3"]}
    snapshot, evaluation = evaluated(sourced(node_pool(family), pending_pod("job", 1)))
    (rec,) = evaluation.recommendations
    assert rec.node_group == "gpu-p3.2xlarge"


def test_each_type_the_pool_allows_but_the_catalogue_lacks_is_named() -> None:
    names = {
        "key": "node.kubernetes.io/instance-type",
        "operator": "In",
        "values": ["g5.xlarge", "x9.huge", "p4d.24xlarge"],
    }
    snapshot, _ = evaluated(sourced(node_pool(names), pending_pod("job", 1)))
    reasons = [n.reason for n in snapshot.notices if n.object == "NodePool/gpu"]
    assert any("lacks: x9.huge: Karpenter may launch them" in r for r in reasons)


def test_the_catalogue_copies_the_reference_for_the_gpu_families() -> None:
    # aws/karpenter-provider-aws instance-types.md (commit 0c5e7d81): g6e.48xlarge
    # "nvidia.com/gpu|8", "memory|1449132Mi", "pods|492"; g4dn.xlarge "memory|14481Mi"
    by_name = {t.name: t for t in bundled_catalogue()}
    g6e = by_name["g6e.48xlarge"]
    assert (g6e.gpus, g6e.labels["karpenter.k8s.aws/instance-gpu-name"]) == (8, "l40s")
    assert g6e.allocatable["memory"] == 1449132 * 2**20
    assert by_name["g4dn.xlarge"].allocatable["memory"] == 14481 * 2**20
    for family in ("g4dn", "g5", "g6", "g6e", "p3", "p4d", "p4de", "p5", "p5e", "p5en"):
        assert any(
            t.labels["karpenter.k8s.aws/instance-family"] == family for t in by_name.values()
        )


def test_the_karpenter_profile_launches_no_second_node_for_an_in_flight_claim() -> None:
    # Karpenter's scheduler tries in-flight NodeClaims as existing nodes first
    # (scheduling/existingnode.go): the 8-GPU pod fits the launching p5.48xlarge
    objects = sourced(node_pool(P5), IN_FLIGHT_P5.dict(), pending_pod("job", 8))
    snapshot, _ = evaluated(objects)
    karpenter = evaluate(snapshot.cluster, at=AT, autoscaler="karpenter")
    assert karpenter.naive_plan.additions == ()


# The catalogue holds NVIDIA GPU types only. A NodePool that does not confine itself to
# them also lets Karpenter launch its AWS provider's general-purpose types (categories
# c, m, r: no karpenter.k8s.aws/instance-gpu-* label), the cheapest that fits first
# (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling): for a pod without
# GPUs the model's GPU type is then not Karpenter's choice, and the workload says so.
ON_DEMAND = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}
CATEGORY = "karpenter.k8s.aws/instance-category"
GPU_CATEGORIES = {"key": CATEGORY, "operator": "In", "values": ["g", "p"]}
CPU_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "ml"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
    "status": {"phase": "Pending"},
}


def karpenter_reasons(requirement: dict) -> list[str]:
    objects = sourced(node_pool_object("default", requirement).dict(), CPU_POD)
    snapshot, _ = evaluated(objects)
    evaluation = evaluate(snapshot.cluster, at=AT, autoscaler="karpenter")
    (web,) = evaluation.workloads
    return list(web.naive.reasons)


def test_it_names_the_general_purpose_types_an_open_node_pool_allows() -> None:
    (said,) = karpenter_reasons(ON_DEMAND)
    assert said.startswith("NodePool default: the NodePool also allows general-purpose")
    assert "(c, m, r families)" in said


def test_it_says_nothing_where_the_node_pool_keeps_to_gpu_categories() -> None:
    assert karpenter_reasons(GPU_CATEGORIES) == []
