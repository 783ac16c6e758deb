"""Pods: requests, selectors, affinity, tolerations, phases, claims and gangs."""

import pytest

from tests.builders.objects import DRA, as_dicts, kube_object, pod_object
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

V1BETA1 = "resource.k8s.io/v1beta1"

# the pending pod ml/p with an empty labels map and no container; with one bare container
NO_CONTAINER = pod_object("ml", "p").labels({})
POD = NO_CONTAINER.container()


def parse(*objects):
    return parse_objects([("pods.yaml", o) for o in as_dicts(*objects)], cluster_name="t")


def one(*objects):
    (result,) = parse(*objects).cluster.pods
    return result


def test_it_sums_containers_and_takes_the_max_with_init_containers():
    p = one(
        NO_CONTAINER.container(requests={"cpu": "1", "memory": "1Gi"})
        .container(requests={"cpu": "500m"})
        .init_container(requests={"cpu": "2"})
        .init_container(requests={"memory": "4Gi"})
        .pod_spec(overhead={"cpu": "100m"})
    )
    assert p.requests.cpu_milli == 2100
    assert p.requests.memory_bytes == 4 * 2**30


def test_it_adds_sidecar_init_containers_to_the_sum():
    with_sidecar = NO_CONTAINER.init_container(requests={"cpu": "1"}, restartPolicy="Always")
    p = one(with_sidecar.container(requests={"cpu": "1"}))
    assert p.requests.cpu_milli == 2000


def test_it_defaults_requests_to_limits():
    assert one(NO_CONTAINER.container(requests={}, limits={"cpu": "3"})).requests.cpu_milli == 3000


def test_it_turns_nvidia_gpu_limits_into_a_gpu_request_and_keeps_mig_extended():
    limits = {"nvidia.com/gpu": 2, "nvidia.com/mig-1g.12gb": 1}
    p = one(NO_CONTAINER.container(limits=limits))
    assert p.gpu.count == 2 and p.gpu.milli_per_gpu == 1000
    assert p.requests.extended == {"nvidia.com/mig-1g.12gb": 1}


def test_it_drops_finished_pods_and_keeps_bound_running_ones():
    snapshot = parse(
        POD.named("done").phase("Succeeded"),
        POD.named("failed").phase("Failed"),
        POD.named("run").on("n1"),
    )
    assert [(p.name, p.node_name) for p in snapshot.cluster.pods] == [("run", "n1")]


def test_it_reads_selectors_tolerations_priority_and_arrival():
    p = one(
        POD.node_selector({"nvidia.com/gpu.product": "A100-SXM4-40GB"})
        .tolerate("nvidia.com/gpu", operator="Exists", effect="NoSchedule")
        .priority(1000)
        .created("2026-01-01T00:00:10Z")
    )
    assert p.node_selector == {"nvidia.com/gpu.product": "A100-SXM4-40GB"}
    assert p.tolerations[0].operator == "Exists"
    assert p.priority == 1000
    assert p.arrival == 1767225610.0


@pytest.mark.parametrize(
    ("operator", "values", "labels", "matches"),
    [
        ("In", ["a", "b"], {"k": "b"}, True),
        ("NotIn", ["a"], {"k": "a"}, False),
        ("Exists", [], {"k": "x"}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("Gt", ["4"], {"k": "8"}, True),
        ("Lt", ["4"], {"k": "8"}, False),
    ],
)
def test_it_compiles_all_six_affinity_operators(operator, values, labels, matches):
    expression = {"key": "k", "operator": operator, "values": values}
    required = {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    p = one(POD.affinity(**affinity))
    assert p.affinity[0].matches(labels) is matches


def test_it_rejects_gt_without_one_integer_naming_the_path():
    expression = {"key": "k", "operator": "Gt", "values": ["many"]}
    required = {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    snapshot = parse(POD.affinity(**affinity))
    assert not snapshot.cluster.pods
    assert snapshot.errors[0].field == (
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].values"
    )


def test_it_reads_kueue_topology_annotations():
    obj = POD.annotation(
        "kueue.x-k8s.io/podset-required-topology", "cloud.google.com/gce-topology-block"
    )
    assert one(obj).required_topology == "cloud.google.com/gce-topology-block"


# --- gangs --------------------------------------------------------------------


def test_it_forms_a_kueue_pod_group_from_labels_and_total_count(shared_data):
    objects = read_objects(shared_data / "k8s-examples/gangs/kueue-pods-kueue-kueue-pod-group.yaml")
    cluster = parse_objects(objects, cluster_name="t").cluster
    assert [p.name for p in cluster.pods] == ["sample-leader-0", "sample-worker-0"]
    assert {p.gang for p in cluster.pods} == {"default/sample-group"}
    assert [(g.key, g.min_member) for g in cluster.gangs] == [("default/sample-group", 2)]


def test_it_takes_min_member_from_a_coscheduling_pod_group(shared_data):
    path = "k8s-examples/gangs/scheduler-plugins-coscheduling-podgroup-replicaset.yaml"
    objects = read_objects(shared_data / path)
    labels = {"scheduling.x-k8s.io/pod-group": "nginx"}
    member = pod_object("default", "").labels(labels).container()
    members = [("x", member.named(f"nginx-{i}").dict()) for i in range(6)]
    cluster = parse_objects([*objects, *members], cluster_name="t").cluster
    assert [(g.key, g.min_member) for g in cluster.gangs] == [("default/nginx", 3)]
    assert all(p.gang == "default/nginx" for p in cluster.pods)


def test_it_resolves_a_kep4671_pod_group_through_its_workload_template(shared_data):
    gangs = shared_data / "k8s-examples/gangs"
    workload = read_objects(gangs / "kep4671-user-story-workload-jobset.yaml")
    group = read_objects(gangs / "kep4671-user-story-podgroup-instance.yaml")
    del group[0][1]["spec"]["schedulingPolicy"]
    cluster = parse_objects([*workload, *group], cluster_name="t").cluster
    assert [(g.key, g.min_member) for g in cluster.gangs] == [
        ("default/job-instance-worker-0", 100)
    ]


# --- DRA claims ------------------------------------------------------------------


def test_it_attaches_a_named_resource_claim_with_match_attribute(shared_data):
    path = "k8s-examples/dra/rocm-amd-resourceclaim-partitions-same-parent.yaml"
    device_class = kube_object(DRA, "DeviceClass", "gpu.amd.com").spec()
    objects = [*read_objects(shared_data / path), ("x", device_class.dict())]
    (p,) = parse_objects(objects, cluster_name="t").cluster.pods
    assert not p.unsupported
    (claim,) = p.claims
    assert [r.name for r in claim.requests] == ["p0", "p1"]
    assert claim.constraints[0].attribute == "gpu.amd.com/deviceID"
    assert claim.constraints[0].requests == ("p0", "p1")
    assert claim.requests[0].selectors[0].value == "amdgpu-partition"


def test_it_instantiates_a_claim_template_per_pod(shared_data):
    path = "k8s-examples/dra/nvidia-dra-bats-multiple-mig-capacity-cel.yaml"
    (p,) = parse_objects(read_objects(shared_data / path), cluster_name="t").cluster.pods
    (claim,) = p.claims
    assert claim.name == "pod-2mig-migdevs"
    selector = claim.requests[0].selectors[0]
    assert (selector.target, selector.name, selector.op, selector.value) == (
        "capacity", "gpu.nvidia.com/multiprocessors", "<", 30,
    )  # fmt: skip


def test_it_marks_a_pod_whose_cel_is_beyond_the_subset_unsupported(shared_data):
    path = "k8s-examples/dra/nvidia-dra-gpu-test6-productname-index-timeslicing.yaml"
    objects = read_objects(shared_data / path)
    claim_ref = [{"name": "a100", "resourceClaimTemplateName": "a100"}]
    in_gpu_test6 = pod_object("gpu-test6", "p").labels({}).container()
    objects.append(("x", in_gpu_test6.pod_spec(resourceClaims=claim_ref).dict()))
    pods = {p.name: p for p in parse_objects(objects, cluster_name="t").cluster.pods}
    # the file's Deployment (4 replicas, no status) creates pod-pending-0..3 from the same template
    assert sorted(pods) == ["p", "pod-pending-0", "pod-pending-1", "pod-pending-2", "pod-pending-3"]
    for p in pods.values():
        assert any(r.startswith("CEL expression not supported: ") for r in p.unsupported)
        assert "lowerAscii" in " ".join(p.unsupported)


def test_it_marks_a_pod_with_a_missing_claim_unsupported():
    p = one(POD.resource_claim("g", "nope"))
    assert p.unsupported == ("ResourceClaim ml/nope not found",)


def test_it_rejects_a_claim_with_nested_spec_spec(shared_data):
    path = "k8s-examples/dra/kep4815-resourceclaim-mig-devices-parentuuid.yaml"
    snapshot = parse_objects(read_objects(shared_data / path), cluster_name="t")
    assert snapshot.errors[0].field == "spec.spec"


def test_it_reads_v1beta1_flat_requests_with_capacity():
    request = {"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2,
               "capacity": {"requests": {"memory": "10Gi"}}}  # fmt: skip
    claim = kube_object(V1BETA1, "ResourceClaim", "c", "ml").spec(devices={"requests": [request]})
    gpu_class = kube_object(V1BETA1, "DeviceClass", "gpu.example.com")
    p = one(claim, gpu_class, POD.resource_claim("g", "c"))
    (request,) = p.claims[0].requests
    assert (request.count, request.capacity_requests) == (2, {"memory": 10 * 2**30})
