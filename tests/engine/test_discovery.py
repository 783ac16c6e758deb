"""Node groups discovered from what a cluster runs: CA status, pool labels, Karpenter."""

from pathlib import Path

import pytest

from tests.builders.objects import (
    GPU,
    as_dicts,
    ca_status_object,
    daemon_set_object,
    kube_object,
    node_group_object,
    node_object,
    node_pool_object,
    pod_object,
)
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

FIXTURES = Path(__file__).parent / "fixtures"
GKE_POOL = "cloud.google.com/gke-nodepool"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
GIB = 2**30

# a ready a2-highgpu-8g of us-central1 (GPUs allocatable as the number 8), no pool label;
# a member of GKE's gpu-pool
MEMBER = (
    node_object("")
    .hostname()
    .labels({INSTANCE_TYPE: "a2-highgpu-8g", "topology.kubernetes.io/region": "us-central1"})
    .taints()
    .allocatable({"cpu": "94", "memory": "1300Gi", "pods": "110", GPU: 8})
    .ready()
)
GPU_POOL = MEMBER.label(GKE_POOL, "gpu-pool")
GPU_TAINT = {"key": GPU, "value": "present", "effect": "NoSchedule"}
# a kube-system DaemonSet whose pods ask for 500m and 1Gi
AGENT = daemon_set_object("kube-system", "").requests(cpu="500m", memory="1Gi")


def parse(*objects, source="cluster.yaml"):
    return parse_objects([(source, o) for o in as_dicts(*objects)], cluster_name="t")


def ca_status_text(group_name, min_size, max_size, target, registered):
    """The readable status in the shape clusterstate.go writes (see the AKS fixture)."""
    health = (
        f"Healthy (ready={registered} unready=0 notStarted=0 longNotStarted=0 "
        f"registered={registered} longUnregistered=0 cloudProviderTarget={target} "
        f"(minSize={min_size}, maxSize={max_size}))"
    )
    return (
        "Cluster-autoscaler status at 2026-12-01 10:00:00.0 +0000 UTC:\n"
        "Cluster-wide:\n  Health:      Healthy (ready=2)\n\n"
        f"NodeGroups:\n  Name:        {group_name}\n  Health:      {health}\n"
        f"  ScaleUp:     NoActivity (ready={registered} cloudProviderTarget={target})\n"
    )


def fixture_objects(name):
    return read_objects(FIXTURES / name)


# --- the status ConfigMap, both formats -------------------------------------------------


def test_it_reads_a_ca_group_from_the_yaml_status_of_upstream_test_data():
    snapshot = parse_objects(fixture_objects("ca-status-yaml-upstream-test.yaml"), cluster_name="t")
    # sample-node-group has no labelled node: reported, not simulated, and not an error
    assert snapshot.errors == ()
    (notice,) = snapshot.notices
    assert notice.object == "ConfigMap/kube-system/cluster-autoscaler-status"
    assert notice.field == "data.status: node group sample-node-group"
    assert "no member to take a template from" in notice.reason


def test_it_reads_min_max_and_target_from_the_yaml_status():
    objects = fixture_objects("ca-status-yaml-upstream-test.yaml")
    sample = MEMBER.label(GKE_POOL, "sample-node-group")
    members = as_dicts(*(sample.named(f"n{i}") for i in range(3)))
    snapshot = parse_objects([*objects, *(("n.yaml", n) for n in members)], cluster_name="t")
    (group,) = snapshot.cluster.node_groups
    assert (group.min_size, group.max_size, group.current_size) == (2, 12, 3)
    assert group.autoscaler.kind == "cluster-autoscaler"
    assert group.autoscaler.target_size == 8
    assert (group.autoscaler.pool_kind, group.autoscaler.pool) == ("gke", "sample-node-group")
    assert group.source == "cluster-autoscaler status ConfigMap + GKE node pool label"
    assert group.notes == (
        "cluster-autoscaler scale-up in Backoff QUOTA_EXCEEDED: Instance "
        "'sample-node-group-40ce0341-t28s' creation failed: Quota 'CPUS' exceeded. "
        "Limit: 57.0 in region us-central1.",
    )


def test_it_reads_min_and_max_from_the_old_text_status_of_the_aks_docs():
    objects = fixture_objects("ca-status-text-aks-docs.yaml")
    member = MEMBER.named("aks-nodepool1-1").label("kubernetes.azure.com/agentpool", "nodepool1")
    snapshot = parse_objects([*objects, ("n.yaml", member.dict())], cluster_name="t")
    (group,) = snapshot.cluster.node_groups
    assert (group.name, group.min_size, group.max_size, group.current_size) == (
        "nodepool1",
        1,
        5,
        1,
    )
    assert group.autoscaler.target_size == 1
    assert group.source == "cluster-autoscaler status ConfigMap + AKS agent pool label"


def test_it_joins_a_gke_instance_group_url_to_the_pool_it_names():
    mig = (
        "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/"
        "instanceGroups/gke-prod-gpu-pool-1a2b3c4d-grp"
    )
    status = ca_status_object(ca_status_text(mig, 0, 6, 2, 2))
    snapshot = parse(GPU_POOL.named("a"), GPU_POOL.named("b"), status)
    (group,) = snapshot.cluster.node_groups
    assert (group.name, group.min_size, group.max_size) == ("gpu-pool", 0, 6)
    assert group.autoscaler.name == mig
    assert snapshot.notices == ()


def test_it_ignores_other_config_maps():
    other = kube_object("v1", "ConfigMap", "cluster-autoscaler-status", "default")
    snapshot = parse(other.top(data={"status": "x"}))
    assert snapshot.errors == ()
    assert snapshot.ignored == {"ConfigMap (v1)": 1}


def test_it_rejects_a_status_that_is_neither_format():
    (error,) = parse(ca_status_object("nodeGroups: [unclosed")).errors
    assert error.field == "data.status"


# --- managed pools and their template ---------------------------------------------------


def test_it_groups_nodes_sharing_a_managed_pool_label():
    snapshot = parse(
        GPU_POOL.named("g1"),
        GPU_POOL.named("g2"),
        MEMBER.named("e1").label("eks.amazonaws.com/nodegroup", "p4d-ng"),
    )
    groups = {g.name: g for g in snapshot.cluster.node_groups}
    assert sorted(groups) == ["gpu-pool", "p4d-ng"]
    assert groups["gpu-pool"].node_selector == {GKE_POOL: "gpu-pool"}
    assert groups["gpu-pool"].current_size == 2
    assert groups["p4d-ng"].autoscaler.kind == "eks"
    assert groups["p4d-ng"].source == "EKS node group label"
    assert {n.name: n.node_group for n in snapshot.cluster.nodes} == {
        "g1": "gpu-pool",
        "g2": "gpu-pool",
        "e1": "p4d-ng",
    }


def test_a_pool_without_autoscaler_status_is_held_at_its_size_and_says_so():
    (group,) = parse(GPU_POOL.named("g1"), GPU_POOL.named("g2")).cluster.node_groups
    assert (group.min_size, group.max_size) == (2, 2)
    assert any("min/max size unknown" in note for note in group.notes)


def test_the_template_is_a_ready_member_less_its_daemonsets():
    tainted = GPU_POOL.taints(GPU_TAINT)
    gpu_agent = AGENT.tolerate(GPU, operator="Exists")
    snapshot = parse(
        tainted.named("a-not-ready").ready(False),
        tainted.named("b-ready").taint("ToBeDeletedByClusterAutoscaler"),
        # runs on GPU nodes: tolerates the taint
        gpu_agent.named("dcgm"),
        gpu_agent.named("logs").requests(cpu="250m", memory="512Mi"),
        # does not run there: taint not tolerated, or selector not matched
        AGENT.named("untolerated").requests(cpu="1"),
        gpu_agent.named("cpu-only").requests(cpu="1").node_selector({"kind": "cpu"}),
    )
    (group,) = snapshot.cluster.node_groups
    template = group.template
    assert template.name == "gpu-pool-template"
    assert template.labels["kubernetes.io/hostname"] == "gpu-pool-template"
    assert template.labels[GKE_POOL] == "gpu-pool"
    # CA's own taint dropped, the GPU taint kept
    assert [t.key for t in template.taints] == ["nvidia.com/gpu"]
    # 94 cores - 0.5 - 0.25; 1300Gi - 1Gi - 0.5Gi; 110 pods - 2
    assert template.allocatable.cpu_milli == 94_000 - 750
    assert template.allocatable.memory_bytes == 1300 * GIB - GIB - GIB // 2
    assert template.allocatable.pods == 108
    assert template.gpu_count == 8


def test_the_template_keeps_the_members_daemonset_and_mirror_pods_once():
    """simulator/node_info_utils.go podsExpectedOnFreshNode: the member's DaemonSet pod
    (its DaemonSet object counted once with it) and a static pod's mirror stay on the
    template, a plain pod on the member does not."""

    on_g1 = pod_object("kube-system", "").on("g1")
    snapshot = parse(
        GPU_POOL.named("g1"),
        AGENT.named("logs").requests(cpu="250m", memory="0"),
        on_g1.named("logs-x").requests(cpu="250m").owner("DaemonSet", "logs"),
        on_g1.named("kube-proxy-g1")
        .requests(cpu="100m")
        .annotation("kubernetes.io/config.mirror", "h"),
        on_g1.named("job").requests(cpu="40"),
    )
    (group,) = snapshot.cluster.node_groups
    # 94 cores - 0.25 (logs, once) - 0.1 (kube-proxy); the 40-core job is not a new node's
    assert group.template.allocatable.cpu_milli == 94_000 - 250 - 100
    assert group.template.allocatable.pods == 110 - 2


def test_discovered_groups_are_priced_from_the_bundled_table():
    (group,) = parse(GPU_POOL.named("g1")).cluster.node_groups
    # a2-highgpu-8g in us-central1, topology/data/prices.yaml
    assert group.price_per_node_hour == 29.38708
    assert group.price_source.startswith("gcp on-demand us-central1 as of 2024-06-01")


def test_an_unknown_instance_type_has_no_price_and_says_so():
    unknown = GPU_POOL.named("g1").label(INSTANCE_TYPE, "x9.huge")
    (group,) = parse(unknown).cluster.node_groups
    assert group.price_per_node_hour == 0.0
    assert group.price_source is None
    assert any(n.startswith("price unknown (instance type x9.huge") for n in group.notes)


# --- hand-written groups win ------------------------------------------------------------


def test_a_project_node_group_overrides_only_the_fields_it_sets():
    override = node_group_object("gpu-pool").spec(maxSize=9, pricePerNodeHour=20.0)
    status = ca_status_object(ca_status_text("gpu-pool", 1, 4, 1, 1))
    snapshot = parse(GPU_POOL.named("g1"), status, override)
    assert snapshot.errors == ()
    (group,) = snapshot.cluster.node_groups
    assert (group.min_size, group.max_size) == (1, 9)  # min from CA, max from the NodeGroup
    assert group.price_per_node_hour == 20.0
    assert group.template.gpu_count == 8  # template still the member's
    assert group.template.price_per_node_hour == 20.0
    assert group.price_source == "capacityweb.io NodeGroup gpu-pool pricePerNodeHour"
    assert group.source == (
        "cluster-autoscaler status ConfigMap + GKE node pool label + "
        "capacityweb.io NodeGroup overrides"
    )
    assert snapshot.cluster.nodes[0].price_per_node_hour == 20.0


def test_a_ca_pool_with_no_node_yet_takes_the_template_of_the_node_group_it_names():
    # GKE names the pool's instance group gke-<cluster>-<pool>-<hash>-grp; CA builds its
    # nodes from the instance template, which no object shows: the NodeGroup gives it
    mig = "gke-prod-spare-pool-1a2b3c4d-grp"
    status = ca_status_object(ca_status_text(mig, 0, 3, 0, 0))
    template = {
        "labels": {INSTANCE_TYPE: "a2-highgpu-8g", GKE_POOL: "spare-pool"},
        "allocatable": {"cpu": "94", "memory": "1300Gi", "pods": "110", GPU: "8"},
    }
    declared = node_group_object("spare-pool").spec(template=template)
    snapshot = parse(GPU_POOL.named("g1"), status, declared)
    assert snapshot.errors == () and snapshot.notices == ()
    spare = next(g for g in snapshot.cluster.node_groups if g.name == "spare-pool")
    # bounds and target from the CA status (the NodeGroup sets none), no member
    assert (spare.min_size, spare.max_size, spare.current_size) == (0, 3, 0)
    ref = spare.autoscaler
    assert (ref.kind, ref.name, ref.pool_kind, ref.pool) == (
        "cluster-autoscaler",
        mig,
        "gke",
        "spare-pool",
    )
    assert spare.template.gpu_count == 8
    # priced from the bundled table by the template's instance type (a2-highgpu-8g,
    # us-central1: 29.38708), as a pool with members is
    assert spare.price_per_node_hour == 29.38708 and spare.price_known
    assert spare.source == (
        "cluster-autoscaler status ConfigMap + capacityweb.io NodeGroup template "
        "(no member yet) + capacityweb.io NodeGroup overrides"
    )


def test_a_node_group_no_ca_group_names_stays_a_project_group():
    template = {"labels": {}, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    declared = node_group_object("other").spec(maxSize=2, template=template)
    status = ca_status_object(ca_status_text("gke-prod-spare-pool-1a2b3c4d-grp", 0, 3, 0, 0))
    snapshot = parse(status, declared)
    (group,) = snapshot.cluster.node_groups
    assert (group.name, group.autoscaler, group.source) == (
        "other",
        None,
        "capacityweb.io NodeGroup",
    )
    (notice,) = snapshot.notices  # the CA group still has no template: said
    assert notice.field == "data.status: node group gke-prod-spare-pool-1a2b3c4d-grp"


def test_a_project_node_group_without_template_needs_a_discovered_one():
    (error,) = parse(node_group_object("x").spec(maxSize=2)).errors
    assert (error.object, error.field, error.reason) == ("NodeGroup/x", "spec.template", "required")


# --- Karpenter ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nodegroups(shared_data):
    return shared_data / "k8s-examples" / "nodegroups"


def test_a_karpenter_node_pool_gives_one_group_per_allowed_instance_type(nodegroups):
    snapshot = parse_objects(
        read_objects(nodegroups / "karpenter-nodepool-gpu-taint-p3.yaml"), cluster_name="t"
    )
    groups = {g.name: g for g in snapshot.cluster.node_groups}
    assert sorted(groups) == ["gpu-p3.16xlarge", "gpu-p3.8xlarge"]
    small = groups["gpu-p3.8xlarge"]
    assert small.template.gpu_count == 4
    assert small.template.allocatable.cpu_milli == 31_850
    assert [(t.key, t.value, t.effect) for t in small.template.taints] == [
        ("nvidia.com/gpu", "true", "NoSchedule")
    ]
    assert small.template.labels["karpenter.sh/nodepool"] == "gpu"
    assert small.node_selector == {
        "karpenter.sh/nodepool": "gpu",
        "node.kubernetes.io/instance-type": "p3.8xlarge",
    }
    assert small.price_per_node_hour == 12.24
    assert small.autoscaler.kind == "karpenter" and small.autoscaler.name == "gpu"
    assert groups["gpu-p3.16xlarge"].template.gpu_count == 8
    assert small.notes == ("no spec.limits: up to 1000 new nodes assumed",)


def test_a_node_pool_limit_bounds_new_nodes_by_what_is_left(nodegroups):
    p4d = {"key": INSTANCE_TYPE, "operator": "In", "values": ["p4d.24xlarge"]}
    pool = node_pool_object("a100", p4d).spec(limits={GPU: 20})
    member = MEMBER.named("m1").label(INSTANCE_TYPE, "p4d.24xlarge")
    member = member.label("karpenter.sh/nodepool", "a100")
    (group,) = parse(pool, member).cluster.node_groups
    # 20 GPUs - 8 on the member = 12 left: one more 8-GPU node
    assert (group.current_size, group.max_size) == (1, 2)
    assert group.template.allocatable.memory_bytes == 1_082_712 * 2**20


def test_a_static_node_pool_is_reported_not_scaled(nodegroups):
    snapshot = parse_objects(
        read_objects(nodegroups / "karpenter-nodepool-static-gpu-limit.yaml"), cluster_name="t"
    )
    assert snapshot.cluster.node_groups == ()
    (notice,) = snapshot.notices
    assert (notice.object, notice.field) == ("NodePool/default", "spec.replicas")
    assert "static NodePool (10 nodes)" in notice.reason


def test_a_node_pool_no_catalogue_type_satisfies_is_reported(nodegroups):
    snapshot = parse_objects(
        read_objects(nodegroups / "karpenter-nodepool-g6f-fractional-gpu.yaml"), cluster_name="t"
    )
    assert snapshot.cluster.node_groups == ()
    # instance-family In [g6f]: the family is named, then that nothing is simulated
    named, none = snapshot.notices
    assert named.object == none.object == "NodePool/fractional-gpu"
    assert "the bundled catalogue (topology/data/instance_types.yaml) lacks: family g6f" in (
        named.reason
    )
    assert "no instance type of the bundled catalogue" in none.reason


def test_a_node_pool_weight_is_reported_as_not_modelled():
    h100 = {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["h100"]}
    snapshot = parse(node_pool_object("h100", h100).spec(weight=50))
    assert [g.name for g in snapshot.cluster.node_groups] == ["h100-p5.48xlarge", "h100-p5.4xlarge"]
    (notice,) = snapshot.notices
    assert notice.field == "spec.weight"
    # the weight travels with each instance type's group, for the karpenter profile
    assert {g.autoscaler.weight for g in snapshot.cluster.node_groups if g.autoscaler} == {50}


def test_the_kwok_provider_config_is_read_and_reported_not_modelled(nodegroups):
    path = nodegroups / "cluster-autoscaler-kwok-static-nodegroups-config.yaml"
    snapshot = parse_objects(read_objects(path), cluster_name="t")
    assert snapshot.errors == ()
    (notice,) = snapshot.notices
    assert notice.field == "nodegroups"
    assert "groups keyed by node.kubernetes.io/instance-type" in notice.reason
    assert notice.reason.endswith("not modelled")


def test_a_regional_pool_with_one_ca_group_per_zone_sums_their_bounds():
    base = "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-{}/instanceGroups/"
    status = ca_status_text(base.format("a") + "gke-prod-gpu-pool-1111-grp", 0, 3, 1, 1)
    second = ca_status_text(base.format("b") + "gke-prod-gpu-pool-2222-grp", 1, 4, 1, 1)
    _, _, groups_b = second.partition("NodeGroups:\n")
    status = ca_status_object(status + groups_b)
    snapshot = parse(GPU_POOL.named("a1"), GPU_POOL.named("b1"), status)
    (group,) = snapshot.cluster.node_groups
    assert (group.min_size, group.max_size) == (1, 7)
    assert group.autoscaler.target_size == 2
    assert group.source == "cluster-autoscaler status ConfigMap + GKE node pool label"
    assert group.notes[0].startswith("also cluster-autoscaler group https://")
