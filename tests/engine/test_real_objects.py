"""Real clusters' objects read as upstream defines them (issue 29): partly running
gangs, other schedulers' pods, terminating pods, admission, requests, DRA
allocations. Each expectation is worked out by hand from the upstream code named
in the test's docstring."""

from datetime import UTC, datetime
from typing import Any

from recommender.engine.evaluate.evaluation import evaluate
from tests.builders.objects import (
    DRA,
    GPU,
    KUEUE,
    KubeObject,
    ObjectBuilder,
    PodObjectBuilder,
    PodSpecBuilder,
    as_dicts,
    cluster_queue_object,
    device_class_object,
    job_object,
    kube_object,
    local_queue_object,
    node_object,
    pod_group_object,
    pod_object,
    resource_claim_object,
    resource_slice_object,
    volcano_pod_group_object,
)
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 5, tzinfo=UTC)
GKE_POOL = "cloud.google.com/gke-nodepool"

# an 8-GPU node (64 cpu, capacity as allocatable); a one-cpu pod of ml, pending until on()
NODE = (
    node_object("").hostname().allocatable(cpu="64", memory="512Gi", pods="110").gpus(8).capacity()
)
POD = pod_object("ml", "").requests(cpu="1")


def parse(*objects: KubeObject):  # type: ignore[no-untyped-def]
    return parse_objects([("real.yaml", o) for o in as_dicts(*objects)], cluster_name="t")


def workloads(*objects: KubeObject) -> dict[str, dict[str, Any]]:
    snapshot = parse(*objects)
    assert [str(e) for e in snapshot.errors] == []
    result = evaluate(snapshot.cluster, at=AT).to_json()
    return {w["name"]: w for w in result["workloads"]}


# coscheduling's PodGroup ml/train of minMember 4 and its 8-GPU members
POD_GROUP = pod_group_object("ml", "train", 4)
MEMBER = POD.limits({GPU: "8"}).label("scheduling.x-k8s.io/pod-group", "train")


def test_it_needs_min_member_minus_the_running_members_of_a_gang():
    """scheduler-plugins pkg/coscheduling (README, core.go Permit): a member binds once
    running + waiting members reach minMember. minMember 4 with 2 members running on
    the two 8-GPU nodes: both pending members (8 GPUs each) are needed together; one
    free 8-GPU node holds one, so the gang does not run now (4 -> 2 needed, not 1)."""
    found = workloads(
        NODE.named("a"),
        NODE.named("b"),
        NODE.named("c"),
        POD_GROUP,
        MEMBER.named("m0").on("a"),
        MEMBER.named("m1").on("b"),
        MEMBER.named("m2"),
        MEMBER.named("m3"),
    )
    assert found["ml/train"]["verdict"] != "runs_now"
    assert found["ml/train"]["pods"] == 2


def test_it_schedules_the_rest_of_a_gang_one_by_one_once_running_members_reach_min_member():
    """scheduler-plugins pkg/coscheduling Permit: with minMember already running, a
    pending member is allowed at once, alone. minMember 2, both running, 2 pending
    and one free node: one member runs now, the other is a pod of its own."""
    found = workloads(
        NODE.named("a"),
        NODE.named("b"),
        NODE.named("c"),
        POD_GROUP.spec(minMember=2),
        MEMBER.named("m0").on("a"),
        MEMBER.named("m1").on("b"),
        MEMBER.named("m2"),
        MEMBER.named("m3"),
    )
    verdicts = sorted(found[k]["verdict"] for k in ("ml/m2", "ml/m3"))
    assert "runs_now" in verdicts and verdicts != ["runs_now", "runs_now"]


# Volcano's PodGroup ml/train of minMember 3 and its 8-GPU members
VOLCANO_GROUP = volcano_pod_group_object("ml", "train", 3)
VOLCANO_MEMBER = (
    POD.limits({GPU: "8"}).scheduler("volcano").annotation("scheduling.k8s.io/group-name", "train")
)


def test_it_makes_a_volcano_gang_ready_once_running_and_new_members_reach_min_member():
    """volcano ``pkg/scheduler/plugins/gang/gang.go`` ``JobReadyFn`` and
    ``pkg/scheduler/api/job_info.go`` ``ReadyTaskNum`` (Bound, Binding, Running and
    Allocated tasks): minMember 3 with 2 members running, 2 pending 8-GPU members and
    one free 8-GPU node. Allocating one member makes 3 ready: the job is ready, that
    member binds; the other finds no node and stays pending. One runs, one does not
    (both "ran now" before, on one 8-GPU node)."""
    found = workloads(
        NODE.named("a"),
        NODE.named("b"),
        NODE.named("c"),
        VOLCANO_GROUP,
        VOLCANO_MEMBER.named("m0").on("a"),
        VOLCANO_MEMBER.named("m1").on("b"),
        VOLCANO_MEMBER.named("m2"),
        VOLCANO_MEMBER.named("m3"),
    )
    running = sum(w["pods"] for w in found.values() if w["verdict"] == "runs_now")
    assert (running, sum(w["pods"] for w in found.values())) == (1, 2)
    assert found["ml/train"]["verdict"] == "runs_now"


def test_it_lists_another_schedulers_pending_pod_as_not_ours():
    """pkg/scheduler/eventhandlers.go responsibleForPod: kube-scheduler only takes pods
    whose spec.schedulerName names one of its profiles (default-scheduler). A pod for
    my-scheduler on an empty 8-GPU node is not ours: never "runs now"."""
    found = workloads(NODE.named("a"), POD.named("p").limits({GPU: "1"}).scheduler("my-scheduler"))
    assert found["ml/p"]["verdict"] == "waiting"
    assert found["ml/p"]["reasons"] == [
        "other scheduler's pod, not ours: spec.schedulerName is my-scheduler"
    ]


def test_it_lists_a_pending_pod_being_deleted_as_terminating():
    """kube-scheduler skipPodSchedule (pkg/scheduler/schedule_one.go): a pod with
    metadata.deletionTimestamp is never scheduled. On an empty node it does not run."""
    deleted = POD.named("p").limits({GPU: "1"}).deleting("2026-12-04T23:59:00Z")
    found = workloads(NODE.named("a"), deleted)
    assert found["ml/p"]["verdict"] == "waiting"
    assert found["ml/p"]["reasons"][0].startswith("terminating: metadata.deletionTimestamp")


# a pod of app web spread over hosts (maxSkew 1, DoNotSchedule)
WEB = POD.label("app", "web").spread(
    {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
)


def test_it_leaves_terminating_pods_out_of_topology_spread_counts():
    """podtopologyspread/common.go countPodsMatchSelector: "Bypass terminating Pod".
    Node a (8 GPUs) runs web-0, terminating; node b has no GPU, so the new 1-GPU pod
    fits only a. Counts a=0, b=0: skew on a is 0+1-0 = 1 <= maxSkew 1, it fits. Were
    web-0 counted, 1+1-0 = 2 > 1: refused."""
    web_0 = WEB.named("web-0").on("a").deleting("2026-12-04T23:59:00Z")
    web_1 = WEB.named("web-1").limits({GPU: "1"})
    found = workloads(NODE.named("a"), NODE.named("b").gpus(0), web_0, web_1)
    assert found["ml/web-1"]["verdict"] == "runs_now"


# --- DRA: allocated claims, shared claims, admin access, pool generations ----------

WORKER = "k8s-gpu-dra-driver-cluster-worker"  # the node of the ROCm demo's allocation
AMD = "gpu.amd.com"


def allocation_status(shared_data) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The ROCm driver demo's real ResourceClaim status (data/k8s-examples/dra)."""
    import yaml

    path = shared_data / "k8s-examples/dra/rocm-amd-resourceclaim-status-allocation-fragment.yaml"
    return yaml.safe_load(path.read_text())["status"]


# the worker: 64 cpu, no device-plugin GPU (its GPUs are in DRA slices)
DRA_NODE = (
    node_object(WORKER).hostname().allocatable(cpu="64", memory="512Gi", pods="110").capacity()
)
# the worker's slice of AMD GPUs (pool generation 0 of 1 slice); the class of them
WORKER_SLICE = resource_slice_object(f"{WORKER}-{AMD}", AMD, WORKER, [])
AMD_CLASS = device_class_object(AMD, f'device.driver == "{AMD}"')


def amd_gpus(*names: str) -> list[dict[str, Any]]:
    """A ResourceSlice's devices: AMD GPUs of these names."""
    return [{"name": n, "attributes": {"type": {"string": "amdgpu"}}} for n in names]


def amd_request(**request: Any) -> dict[str, Any]:
    """A claim's request "gpu" of exactly the AMD class (``count``, ``allocationMode``)."""
    return {"name": "gpu", "exactly": {"deviceClassName": AMD, **request}}


# the claim ml/<name> of one AMD GPU; a pod of ml using a claim as "gpu"
AMD_CLAIM = resource_claim_object("ml", "", amd_request())


def evaluated(*objects: KubeObject) -> dict[str, Any]:
    snapshot = parse(*objects)
    assert [str(e) for e in snapshot.errors] == []
    return evaluate(snapshot.cluster, at=AT).to_json()


def test_it_counts_the_devices_an_allocated_claim_holds_for_a_running_pod(shared_data):
    """DynamicResources / structured allocatedstate.go: every device in a claim's
    status.allocation is in use. The ROCm demo's claim holds gpu-48-176 for pod1 on
    the worker; of the worker's 2 GPUs 1 is allocated, and a pending pod asking for
    2 finds 1 free: it does not run now."""
    status = allocation_status(shared_data)
    result = evaluated(
        DRA_NODE,
        WORKER_SLICE.spec(devices=amd_gpus("gpu-48-176", "gpu-0-128")),
        AMD_CLASS,
        AMD_CLAIM.named("gpu-claim").top(status=status),
        POD.named("pod1").resource_claim("gpu", "gpu-claim").on(WORKER),
        resource_claim_object("ml", "two", amd_request(count=2)),
        POD.named("pod2").resource_claim("gpu", "two"),
    )
    assert result["cluster"]["gpusAllocated"] == 1
    (pending,) = [w for w in result["workloads"] if w["name"] == "ml/pod2"]
    assert pending["verdict"] != "runs_now"


def test_it_places_a_pending_pod_whose_claim_is_allocated_only_on_that_node(shared_data):
    """dynamicresources.go Filter: an allocated claim's nodeSelector (matchFields
    metadata.name In [worker]) must match the node, else "resourceclaim not available
    on the node". The worker has 1 CPU, the pod asks 2: it fits nowhere, though
    node "other" has room and a free GPU."""
    status = allocation_status(shared_data)
    status["reservedFor"] = []
    result = evaluated(
        DRA_NODE.allocatable(cpu="1"),
        DRA_NODE.named("other"),
        WORKER_SLICE.spec(devices=amd_gpus("gpu-48-176")),
        resource_slice_object(f"other-{AMD}", AMD, "other", amd_gpus("gpu-1")),
        AMD_CLASS,
        AMD_CLAIM.named("gpu-claim").top(status=status),
        POD.named("pod1").resource_claim("gpu", "gpu-claim").requests(cpu="2"),
    )
    (pending,) = result["workloads"]
    assert pending["verdict"] != "runs_now"
    assert "resourceclaim not available on the node" in result["diagnoses"]["ml/pod1"]["summary"]


def test_it_counts_a_claim_shared_by_two_running_pods_once(shared_data):
    """A claim reserved for several pods (status.reservedFor) is allocated once: its
    one device is counted once, not per pod (1 allocated, not 2)."""
    status = allocation_status(shared_data)
    status["reservedFor"].append({"name": "pod3", "resource": "pods", "uid": "u3"})
    result = evaluated(
        DRA_NODE,
        WORKER_SLICE.spec(devices=amd_gpus("gpu-48-176", "gpu-0-128")),
        AMD_CLASS,
        AMD_CLAIM.named("gpu-claim").top(status=status),
        POD.named("pod1").resource_claim("gpu", "gpu-claim").on(WORKER),
        POD.named("pod3").resource_claim("gpu", "gpu-claim").on(WORKER),
    )
    assert result["cluster"]["gpusAllocated"] == 1


def test_it_counts_an_unexported_claim_shared_by_two_running_pods_once():
    """Without status in the snapshot a running pod's claim is taken on its node
    (first fitting device); two running pods sharing the claim take it once."""
    result = evaluated(
        DRA_NODE,
        WORKER_SLICE.spec(devices=amd_gpus("gpu-48-176", "gpu-0-128")),
        AMD_CLASS,
        AMD_CLAIM.named("gpu-claim"),
        POD.named("pod1").resource_claim("gpu", "gpu-claim").on(WORKER),
        POD.named("pod3").resource_claim("gpu", "gpu-claim").on(WORKER),
    )
    assert result["cluster"]["gpusAllocated"] == 1


def test_it_takes_no_device_for_an_admin_access_allocation(shared_data):
    """structured/internal/allocatedstate.go: results with adminAccess are left out
    of the allocated devices. The demo's claim plus a second result, gpu-0-128 with
    adminAccess: of the two devices allocated, 1 is counted."""
    status = allocation_status(shared_data)
    results = status["allocation"]["devices"]["results"]
    results.append({**results[0], "device": "gpu-0-128", "request": "admin", "adminAccess": True})
    admin = {"name": "admin", "exactly": {"deviceClassName": AMD, "adminAccess": True}}
    claim = resource_claim_object("ml", "gpu-claim", amd_request(), admin).top(status=status)
    result = evaluated(
        DRA_NODE,
        WORKER_SLICE.spec(devices=amd_gpus("gpu-48-176", "gpu-0-128")),
        AMD_CLASS,
        claim,
        POD.named("pod1").resource_claim("gpu", "gpu-claim").on(WORKER),
    )
    assert result["cluster"]["gpusAllocated"] == 1


def test_it_reads_only_the_newest_generation_of_a_pool():
    """pools_stable.go addSlice: a slice of an older pool.generation is out-dated and
    ignored. Generation 1 offers 2 devices, generation 2 one: the node has 1 GPU."""
    snapshot = parse(
        DRA_NODE,
        WORKER_SLICE.named(f"{WORKER}-{AMD}-old")
        .spec(devices=amd_gpus("gpu-a", "gpu-b"))
        .field("spec", "pool", generation=1),
        WORKER_SLICE.spec(devices=amd_gpus("gpu-a")).field("spec", "pool", generation=2),
    )
    (node_read,) = snapshot.cluster.nodes
    assert [d.name for d in node_read.devices] == ["gpu-a"]


# gpu-a in the first of the 2 slices the worker's pool says it has
INCOMPLETE_SLICE = WORKER_SLICE.spec(devices=amd_gpus("gpu-a")).field(
    "spec", "pool", resourceSliceCount=2
)


def test_it_refuses_all_devices_from_an_incomplete_pool():
    """allocator_stable.go validateDeviceRequest: allocationMode All over a pool whose
    newest generation has fewer slices than resourceSliceCount fails ("asks for all
    devices, but resource pool … is currently being updated")."""
    result = evaluated(
        DRA_NODE,
        INCOMPLETE_SLICE,
        AMD_CLASS,
        resource_claim_object("ml", "all", amd_request(allocationMode="All")),
        POD.named("p").resource_claim("gpu", "all"),
    )
    (pending,) = result["workloads"]
    assert pending["verdict"] != "runs_now"
    assert "currently being updated" in result["diagnoses"]["ml/p"]["summary"]


def test_it_takes_no_device_from_an_incomplete_pool_for_an_exact_count():
    """``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
    allocator_stable.go`` ``allocateOne``: devices of an incomplete or invalid pool are
    skipped ("we don't allocate devices from invalid or incomplete pools"), whatever
    the request's mode. The worker's pool says 2 slices, 1 is there with gpu-a; a
    claim for exactly 1 device finds none: the pod does not run (it took gpu-a)."""
    result = evaluated(
        DRA_NODE,
        INCOMPLETE_SLICE,
        AMD_CLASS,
        resource_claim_object("ml", "one", amd_request(count=1)),
        POD.named("p").resource_claim("gpu", "one"),
    )
    (pending,) = result["workloads"]
    assert pending["verdict"] != "runs_now"


def test_it_allocates_a_claim_two_pending_pods_name_once_and_runs_both():
    """``pkg/scheduler/framework/plugins/dynamicresources``: the first pod's allocation
    is written to the claim (PreBind; the assume cache has it at once), the second pod
    finds the claim allocated, takes no device and fits where the allocation's node
    selector allows: the same node. One device, one claim, two pending pods: both run
    (the second was blocked, asking for a second device)."""
    result = evaluated(
        DRA_NODE,
        WORKER_SLICE.spec(devices=amd_gpus("gpu-a")),
        AMD_CLASS,
        AMD_CLAIM.named("shared"),
        POD.named("p1").resource_claim("gpu", "shared"),
        POD.named("p2").resource_claim("gpu", "shared"),
    )
    assert {w["name"]: w["verdict"] for w in result["workloads"]} == {
        "ml/p1": "runs_now",
        "ml/p2": "runs_now",
    }


# --- requests: KEP-753 order, pod-level resources, the API server's validation ----


# the pod ml/p as created (no container until said)
P = pod_object("ml", "p")


def one_pod(pod: PodObjectBuilder):  # type: ignore[no-untyped-def]
    snapshot = parse(pod)
    assert [str(e) for e in snapshot.errors] == []
    (found,) = snapshot.cluster.pods
    return found


def test_it_adds_the_sidecars_started_before_an_init_container_to_its_need():
    """component-helpers resource/helpers.go AggregateContainerRequests (KEP-753):
    init container i needs itself + restartable init containers before it. Sidecar
    1 CPU, then init 3 CPU, app 1 CPU: init phase 1+3 = 4, run phase 1+1 = 2;
    the pod requests max(2, 4) = 4 CPU (not max(2, 3) = 3)."""
    pod = (
        P.init_container("side", {"cpu": "1"}, restartPolicy="Always")
        .init_container("init", {"cpu": "3"})
        .container("app", {"cpu": "1"})
    )
    assert one_pod(pod).requests.cpu_milli == 4000


def test_it_does_not_add_sidecars_started_after_an_init_container():
    """Same rule: init 3 CPU first, then sidecar 1 CPU, app 1 CPU: init phase 3,
    run phase 1+1 = 2; the pod requests 3 CPU."""
    pod = (
        P.init_container("init", {"cpu": "3"})
        .init_container("side", {"cpu": "1"}, restartPolicy="Always")
        .container("app", {"cpu": "1"})
    )
    assert one_pod(pod).requests.cpu_milli == 3000


def test_it_takes_pod_level_requests_instead_of_the_containers_sum():
    """PodRequests (KEP-2837): pod-level spec.resources.requests of cpu and memory
    replace the aggregate of the containers. Containers 1+1 CPU, pod-level 5 CPU."""
    pod = (
        P.pod_spec(resources={"requests": {"cpu": "5"}})
        .container("a", {"cpu": "1"})
        .container("b", {"cpu": "1"})
    )
    assert one_pod(pod).requests.cpu_milli == 5000


def invalid(limits: dict[str, Any], requests: dict[str, Any] | None = None) -> tuple[str, str]:
    snapshot = parse(P.container(requests=requests or {}, limits=limits))
    assert snapshot.cluster.pods == ()
    (error,) = snapshot.errors
    return error.field, error.reason


def test_it_refuses_a_negative_gpu_count_as_the_api_server_does():
    """validation.go ValidateResourceQuantityValue: ValidateNonnegativeQuantity."""
    assert invalid({"nvidia.com/gpu": "-5"}) == (
        "spec.containers[0].resources.limits.nvidia.com/gpu",
        "must be greater than or equal to 0, got -5",
    )


def test_it_refuses_a_fractional_gpu_count_as_the_api_server_does():
    """validation.go: extended resources are integer resources ("must be an integer")."""
    field, reason = invalid({"nvidia.com/gpu": "0.5"})
    assert (field, reason) == (
        "spec.containers[0].resources.limits.nvidia.com/gpu",
        "must be an integer, got 0.5",
    )


def test_it_refuses_a_request_above_its_limit():
    """validation.go ValidateResourceRequirements: request <= limit for cpu."""
    field, reason = invalid({"cpu": "1"}, {"cpu": "2"})
    assert field == "spec.containers[0].resources.requests.cpu"
    assert reason == "must be less than or equal to cpu limit of 1"


def test_it_refuses_a_gpu_request_other_than_its_limit():
    """validation.go: resources that cannot be overcommitted need request == limit."""
    field, reason = invalid({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "1"})
    assert field == "spec.containers[0].resources.requests.nvidia.com/gpu"
    assert reason == "must be equal to nvidia.com/gpu limit of 2"


def test_it_refuses_a_node_advertising_more_than_1024_devices_of_a_kind():
    """Issue 28 item 6: a Node with nvidia.com/gpu 65536 is an input error naming it,
    not 40 s of evaluation."""
    snapshot = parse(NODE.named("huge").gpus(65536))
    assert snapshot.cluster.nodes == ()
    (error,) = snapshot.errors
    assert (error.object, error.field) == ("Node/huge", "status.allocatable.nvidia.com/gpu")
    assert "more than 1024" in error.reason


# --- admission: Priority, ExtendedResourceToleration ------------------------------


# a PriorityClass (not the global default); a pod as written by hand or built from a
# template: no status, no priority
PRIORITY_CLASS = kube_object("scheduling.k8s.io/v1", "PriorityClass", "").top(globalDefault=False)
MANIFEST = pod_object("ml", "").container(requests={"cpu": "1"}).as_written()


def priorities(*objects: KubeObject) -> dict[str, int]:
    return {p.name: p.priority for p in parse(*objects).cluster.pods}


def test_it_gives_a_pod_its_priority_class_value():
    """plugin/pkg/admission/priority/admission.go: a pod's priorityClassName sets
    spec.priority to the class's value (1000), not 0."""
    high = PRIORITY_CLASS.named("high").top(value=1000)
    found = priorities(high, MANIFEST.named("p").pod_spec(priorityClassName="high"))
    assert found == {"p": 1000}


def test_it_gives_a_pod_without_a_class_the_lowest_global_default():
    """admission.go getDefaultPriorityClass: with two globalDefault classes (100 and
    50) the one of lowest value is used: 50."""
    default = PRIORITY_CLASS.top(globalDefault=True)
    found = priorities(
        default.named("a").top(value=100), default.named("b").top(value=50), MANIFEST.named("p")
    )
    assert found == {"p": 50}


def test_it_blocks_a_pod_naming_a_priority_class_that_does_not_exist():
    """admission.go: "no PriorityClass with name X was found": the pod is refused."""
    high = PRIORITY_CLASS.named("high").top(value=1000)
    snapshot = parse(high, MANIFEST.named("p").pod_spec(priorityClassName="nope"))
    (found,) = snapshot.cluster.pods
    assert found.unsupported == (
        "no PriorityClass with name nope was found: admission refuses the pod",
    )


# an a3 of GKE's a3-pool: 8 GPUs, tainted as GKE taints GPU nodes
GKE_A3 = (
    node_object("")
    .hostname()
    .label(GKE_POOL, "a3-pool")
    .taint(GPU, "present")
    .allocatable(cpu="208", memory="1800Gi", pods="110")
    .allocatable({"ephemeral-storage": "2Ti", GPU: "8"})
    .capacity()
)


def test_it_adds_gkes_gpu_toleration_to_pods_built_from_a_template(shared_data):
    """plugin/pkg/admission/extendedresourcetoleration/admission.go (on in GKE): a pod
    requesting nvidia.com/gpu gets an Exists/NoSchedule toleration of it. The LWS
    vLLM example (2 groups x 2 pods x 8 GPUs, no toleration) on 4 tainted GKE 8-GPU
    nodes runs now instead of "untolerated taint"."""
    from topology.ingest.files import read_objects

    lws = shared_data / "upstream-examples/kubernetes-sigs+lws/docs/examples/vllm/GPU/lws.yaml"
    objects = [o for _, o in read_objects(lws) if o.get("kind") == "LeaderWorkerSet"]
    snapshot = parse(*(GKE_A3.named(f"n{i}") for i in range(4)), *objects)
    assert [str(e) for e in snapshot.errors] == []
    result = evaluate(snapshot.cluster, at=AT).to_json()
    assert {w["verdict"] for w in result["workloads"]} == {"runs_now"}


# --- GKE sharing labels, KAI fractions, KEP-5004 names --------------------------------


GKE_NODE = NODE.label(GKE_POOL, "pool")


def test_it_reads_a_gke_mig_partitioned_node_as_its_physical_gpus():
    """GKE multi-instance GPUs: gke-gpu-partition-size 1g.5gb on an a2-highgpu-1g
    advertises 7 nvidia.com/gpu, the 7 instances of one A100-40GB (7 x 1g.5gb per
    GPU, NVIDIA MIG user guide): 1 GPU, 7 units."""
    labels = {
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "cloud.google.com/gke-gpu-partition-size": "1g.5gb",
    }
    (found,) = parse(GKE_NODE.named("a2").gpus(7).labels(labels)).cluster.nodes
    assert (found.gpu_count, len(found.devices)) == (1, 7)


def test_it_reads_a_gke_time_shared_node_as_its_physical_gpus():
    """GKE GPU time-sharing: gke-max-shared-clients-per-gpu 2 exposes each physical
    GPU twice; a g2-standard-4 (1 L4) advertises 2: 1 GPU, 2 units of half of it."""
    labels = {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
        "cloud.google.com/gke-max-shared-clients-per-gpu": "2",
    }
    (found,) = parse(GKE_NODE.named("g2").gpus(2).labels(labels)).cluster.nodes
    assert (found.gpu_count, len(found.devices)) == (1, 2)
    assert sorted(d.unit_gpu_milli for d in found.devices) == [500, 500]


# a pod of KAI's scheduler, as its upstream gpu-sharing example (docs/gpu-sharing)
KAI_POD = POD.scheduler("kai-scheduler")


def test_it_reads_a_kai_gpu_fraction_as_half_a_gpu():
    """KAI docs/gpu-sharing: gpu-fraction "0.5" asks half of one GPU. On a full
    1-GPU node (a running pod holds it) the pod does not run now; read as 0 GPUs it
    would."""
    found = workloads(
        NODE.named("a").gpus(1),
        POD.named("busy").limits({GPU: "1"}).on("a"),
        KAI_POD.named("half").annotation("gpu-fraction", "0.5"),
    )
    assert found["ml/half"]["gpus"] == 0.5
    assert found["ml/half"]["verdict"] != "runs_now"


def test_it_places_two_kai_halves_on_one_gpu():
    """Two gpu-fraction 0.5 pods share the one GPU of a node: both run now."""
    found = workloads(
        NODE.named("a").gpus(1),
        KAI_POD.named("h1").annotation("gpu-fraction", "0.5"),
        KAI_POD.named("h2").annotation("gpu-fraction", "0.5"),
    )
    assert {found["ml/h1"]["verdict"], found["ml/h2"]["verdict"]} == {"runs_now"}


def test_it_says_a_kai_gpu_memory_share_is_not_modelled():
    """KAI gpu-memory (MiB instead of a fraction) is not modelled: blocked, said."""
    found = workloads(NODE.named("a").gpus(1), KAI_POD.named("m").annotation("gpu-memory", "2000"))
    assert found["ml/m"]["reasons"][0].startswith("unsupported: KAI gpu-memory")


# a DRA driver's slice of one MIG device of profile 1g.12gb, named after its node
MIG_DEVICE = {
    "name": "gpu-0-mig-1g12gb-0",
    "attributes": {"type": {"string": "mig"}, "profile": {"string": "1g.12gb"}},
}
MIG_SLICE = kube_object(DRA, "ResourceSlice", "").spec(
    driver="gpu.nvidia.com", devices=[MIG_DEVICE]
)


def mig_example(shared_data) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """The NVIDIA DRA driver's KEP-5004 example: a DeviceClass with
    extendedResourceName nvidia.com/mig-1g.12gb and a pod asking 1 of it."""
    from topology.ingest.files import read_objects

    path = shared_data / "k8s-examples/dra/nvidia-dra-deviceclass-extended-resource-mig-1g12gb.yaml"
    return [o for _, o in read_objects(path)]


def test_it_serves_an_extended_resource_name_from_its_device_class(shared_data):
    """KEP-5004 (dynamicresources/extended.go): no node advertises
    nvidia.com/mig-1g.12gb, so the scheduler allocates a device of the class
    mapping it; the worker's DRA slice has one 1g.12gb instance: the pod runs now."""
    objects = mig_example(shared_data)
    worker = "kind-dra-1-worker"
    mig = MIG_SLICE.named(worker).spec(nodeName=worker, pool={"name": worker})
    found = workloads(DRA_NODE.named(worker), mig, *objects)
    assert found["extended-resource-mig-1g12gb/mig-1g12gb-pod"]["verdict"] == "runs_now"


def test_it_maps_the_implicit_deviceclass_resource_name_to_its_class(shared_data):
    """KEP-5004: every class C also maps deviceclass.resource.kubernetes.io/C. A pod
    asking 1 of it, on a node whose DRA slice has one instance of the class: runs now
    (read as an unknown extended resource, nothing would offer it)."""
    device_class = next(o for o in mig_example(shared_data) if o["kind"] == "DeviceClass")
    asking = POD.named("q").limits(
        {"deviceclass.resource.kubernetes.io/mig-1g-12gb.gpu.nvidia.com": "1"}
    )
    mig = MIG_SLICE.named("w").spec(nodeName="w", pool={"name": "w"})
    found = workloads(DRA_NODE.named("w"), mig, device_class, asking)
    assert found["ml/q"]["verdict"] == "runs_now"


# --- Kueue ResourceFlavors ----------------------------------------------------------

KUEUE_TAS = "upstream-examples/kubernetes-sigs+kueue/site/static/examples/tas"
TAS_USER_QUEUE = local_queue_object("default", "tas-user-queue", "cq")


def flavor(name: str) -> ObjectBuilder:
    """A Kueue ResourceFlavor whose nodes are labelled pool=<name>."""
    return kube_object(KUEUE, "ResourceFlavor", name).spec(nodeLabels={"pool": name})


def kueue_objects(shared_data, name: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    from topology.ingest.files import read_objects

    return [o for _, o in read_objects(shared_data / KUEUE_TAS / name)]


# a Job in the TAS examples' LocalQueue (like sample-job-required.yaml), pods of 1 cpu
QUEUED_JOB = (
    job_object("default", "")
    .label("kueue.x-k8s.io/queue-name", "tas-user-queue")
    .requests(cpu="1", memory="200Mi")
    .pod_spec(restartPolicy="Never")
)
# an 8-GPU node of block b1, rack r1 (no node group); one of tas-group
UNGROUPED = NODE.labels(
    {"cloud.provider.com/topology-block": "b1", "cloud.provider.com/topology-rack": "r1"}
)
TAS_NODE = UNGROUPED.label("cloud.provider.com/node-group", "tas-group")


def job_of(name: str, pods: int) -> PodSpecBuilder:
    return QUEUED_JOB.named(name).spec(parallelism=pods, completions=pods)


def test_it_gives_a_kueue_pod_set_its_flavors_tolerations(shared_data):
    """kueue flavorassigner / podset.Merge: admission adds the flavor's tolerations.
    sample-gpu-queues.yaml's tas-flavor tolerates nvidia.com/gpu NoSchedule; a 2-pod
    1-GPU job without tolerations on two tainted 8-GPU nodes of the flavor runs now."""
    found = workloads(
        TAS_NODE.named("n1").taint(GPU, "present"),
        TAS_NODE.named("n2").taint(GPU, "present"),
        *kueue_objects(shared_data, "sample-gpu-queues.yaml"),
        job_of("train", 2).limits({GPU: "1"}),
    )
    assert {w["verdict"] for w in found.values()} == {"runs_now"}


def test_it_keeps_a_kueue_pod_set_on_its_flavors_nodes(shared_data):
    """podset.Merge: the flavor's nodeLabels join the pods' nodeSelector.
    sample-queues.yaml's tas-flavor labels node-group tas-group; its only node has
    half a CPU, the unlabelled node 64: a 1-CPU pod does not run now (it would run
    on the unlabelled node without the flavor's labels)."""
    found = workloads(
        TAS_NODE.named("tas").allocatable(cpu="500m"),
        UNGROUPED.named("other"),
        *kueue_objects(shared_data, "sample-queues.yaml"),
        job_of("j", 1),
    )
    assert {w["verdict"] for w in found.values()} != {"runs_now"}


def test_it_skips_a_flavor_whose_taints_the_pod_set_does_not_tolerate():
    """flavorassigner.go: a flavor whose nodeTaints (NoSchedule) the pods do not
    tolerate is skipped; the next flavor in the ClusterQueue's order is taken:
    spot (tainted) then on-demand: the pods get pool=on-demand."""
    spot_taint = {"key": "spot", "value": "true", "effect": "NoSchedule"}
    quota = [{"name": "cpu", "nominalQuota": 10}, {"name": "memory", "nominalQuota": "10Gi"}]
    group = {
        "coveredResources": ["cpu", "memory"],
        "flavors": [
            {"name": "spot", "resources": quota},
            {"name": "on-demand", "resources": quota},
        ],
    }
    snapshot = parse(
        flavor("spot").spec(nodeTaints=[spot_taint]),
        flavor("on-demand"),
        cluster_queue_object("cq", group),
        TAS_USER_QUEUE,
        job_of("j", 1),
    )
    assert [str(e) for e in snapshot.errors] == []
    assert {p.node_selector.get("pool") for p in snapshot.cluster.pods} == {"on-demand"}


# --- training jobs and LeaderWorkerSet: one reading with or without their pods -------

LWS = "leaderworkerset.sigs.k8s.io"

KAI_PYTORCH = "upstream-examples/NVIDIA+KAI-Scheduler/docs/batch/pytorch-job.yaml"
TRAIN_JOB = kube_object("trainer.kubeflow.org/v1alpha1", "TrainJob", "llm", "ml").spec(
    runtimeRef={"name": "torch-distributed"}
)
LWS_VLLM = "upstream-examples/kubernetes-sigs+lws/docs/examples/vllm/GPU/lws.yaml"


def example_objects(shared_data, path: str, kind: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    from topology.ingest.files import read_objects

    return [o for _, o in read_objects(shared_data / path) if o.get("kind") == kind]


def test_it_reads_a_pytorchjob_as_one_gang_of_its_replicas(shared_data):
    """training-operator pkg/controller.v1/pytorch: KAI's example PyTorchJob makes
    Master x1 + Worker x2 pods, 1 GPU each; all or nothing: one gang of 3 pods,
    3 GPUs (it was ignored: no demand at all)."""
    pytorch = example_objects(shared_data, KAI_PYTORCH, "PyTorchJob")
    found = workloads(NODE.named("a"), *pytorch)
    job = found["default/pytorch-dist-mnist-nccl"]
    assert (job["kind"], job["pods"], job["gpus"]) == ("gang", 3, 3)


def test_it_reads_a_kueue_queued_trainjob_as_one_gang_of_its_nodes():
    """Kubeflow Trainer v2: a TrainJob of numNodes 2, 4 GPUs per node, in a Kueue queue
    (admitted as one Workload): one gang of 2 pods, 8 GPUs."""
    train = TRAIN_JOB.label("kueue.x-k8s.io/queue-name", "q").spec(
        trainer={"numNodes": 2, "resourcesPerNode": {"limits": {GPU: "4"}}}
    )
    found = workloads(NODE.named("a"), train)
    assert (found["ml/llm"]["kind"], found["ml/llm"]["pods"], found["ml/llm"]["gpus"]) == (
        "gang",
        2,
        8,
    )


# a pending pod as the LWS controller creates it for vllm (labels, size annotation)
LWS_POD = (
    pod_object("default", "")
    .requests(cpu="1")
    .limits({GPU: "8"})
    .label(f"{LWS}/name", "vllm")
    .annotation(f"{LWS}/size", "2")
)


def test_it_reads_a_leaderworkerset_the_same_with_or_without_its_pods(shared_data):
    """LWS (api/leaderworkerset/v1): 2 groups of size 2, no gang scheduler (the example
    sets no schedulerName, no Kueue queue). Built from the template or read from its
    4 exported pods, the workloads are the same 4 pods kube-scheduler places one by
    one (``pkg/scheduler/schedule_one.go`` ``ScheduleOne``)."""
    lws = example_objects(shared_data, LWS_VLLM, "LeaderWorkerSet")
    nodes = [GKE_A3.named(f"n{i}") for i in range(4)]
    built = workloads(*nodes, *lws)
    exported_pods = [
        LWS_POD.named(name).labels({f"{LWS}/group-index": group, f"{LWS}/worker-index": worker})
        for name, group, worker in (
            ("vllm-0", "0", "0"),
            ("vllm-0-1", "0", "1"),
            ("vllm-1", "1", "0"),
            ("vllm-1-1", "1", "1"),
        )
    ]
    exported = workloads(*nodes, *lws, *exported_pods)
    shape = {k: (w["kind"], w["pods"]) for k, w in built.items()}
    names = ("vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1")
    assert shape == {f"default/{n}": ("pod", 1) for n in names}
    assert {k: (w["kind"], w["pods"]) for k, w in exported.items()} == shape


def test_it_stores_and_reloads_claim_allocations_exactly(shared_data):
    """topology.model.serialize: a stored snapshot keeps what this issue reads (claim
    allocations, terminating and not-ours pods) through a JSON round trip."""
    from topology.model.serialize import cluster_from_json, cluster_to_json

    status = allocation_status(shared_data)
    snapshot = parse(
        DRA_NODE,
        WORKER_SLICE.spec(devices=amd_gpus("gpu-48-176")),
        AMD_CLASS,
        AMD_CLAIM.named("gpu-claim").top(status=status),
        POD.named("pod1").resource_claim("gpu", "gpu-claim").on(WORKER),
        POD.named("gone").deleting("2026-12-04T23:59:00Z"),
    )
    stored = cluster_to_json(snapshot.cluster)
    assert cluster_from_json(stored) == snapshot.cluster
    assert cluster_to_json(cluster_from_json(stored)) == stored


def two_flavor_queue(spot_gpus: int, on_demand_gpus: int) -> list[ObjectBuilder]:
    """ClusterQueue cq: one resource group, flavors spot then on-demand (nodeLabels
    pool=<flavor>), nvidia.com/gpu quota per flavor; LocalQueue tas-user-queue."""

    def quota(gpus: int) -> list[dict[str, Any]]:
        return [
            {"name": "cpu", "nominalQuota": 100},
            {"name": "memory", "nominalQuota": "1Ti"},
            {"name": "nvidia.com/gpu", "nominalQuota": gpus},
        ]

    group = {
        "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
        "flavors": [
            {"name": "spot", "resources": quota(spot_gpus)},
            {"name": "on-demand", "resources": quota(on_demand_gpus)},
        ],
    }
    queue = cluster_queue_object("cq", group)
    return [flavor("spot"), flavor("on-demand"), queue, TAS_USER_QUEUE]


def test_it_admits_a_kueue_pod_set_against_its_own_flavors_quota():
    """flavorassigner.go: quota is per flavor and resource. spot has 2 GPUs of quota,
    on-demand 3; the pod set asks 4 GPUs: neither flavor holds it, it waits for quota
    (summed over flavors, 5 >= 4, it would be admitted)."""
    spot = TAS_NODE.named("spot-1").label("pool", "spot")
    found = workloads(spot, *two_flavor_queue(2, 3), job_of("j", 1).limits({GPU: "4"}))
    (job,) = found.values()
    assert job["verdict"] == "waiting"
    assert job["reasons"] == [
        "waiting for quota in queue ClusterQueue/cq flavor spot (needs 4 nvidia.com/gpu, "
        "free 2); flavor on-demand (needs 4 nvidia.com/gpu, free 3)"
    ]


def test_it_admits_a_kueue_pod_set_on_the_next_flavor_when_the_first_is_used():
    """flavorassigner.go findFlavorForPodSetResource / shouldTryNextFlavor: spot (2 GPUs
    of quota, no cohort to borrow from) does not fit 4 GPUs, so Kueue tries on-demand (8):
    it fits without borrowing and is taken; the pods get pool=on-demand and run on the
    on-demand node."""
    on_demand = TAS_NODE.named("od-1").label("pool", "on-demand")
    found = workloads(on_demand, *two_flavor_queue(2, 8), job_of("j", 1).limits({GPU: "4"}))
    (job,) = found.values()
    assert job["verdict"] == "runs_now"
    assert job["reasons"][0].startswith(
        "Kueue admits it on flavor on-demand (flavor spot (needs 4 nvidia.com/gpu, free 2)"
    )


def test_it_borrows_on_the_first_flavor_or_tries_the_next_as_when_can_borrow_says():
    """shouldTryNextFlavor: spot fits 4 GPUs only by borrowing (2 own, 8 unused in
    cq-b's spot quota); on-demand fits without. whenCanBorrow Borrow (the default):
    spot is taken; TryNextFlavor: on-demand."""
    from recommender.engine.scheduler.workloads import pending_workloads
    from topology.kube.kueue.quotas import quota_waiting

    lender = cluster_queue_object(
        "cq-b",
        {
            "coveredResources": ["nvidia.com/gpu"],
            "flavors": [{"name": "spot", "resources": [{"name": GPU, "nominalQuota": 8}]}],
        },
    ).spec(cohort="org")

    def moved_to(fungibility: dict[str, str]) -> str | None:
        flavors, queue = two_flavor_queue(2, 8)[:2], two_flavor_queue(2, 8)[2]
        queue = queue.spec(cohort="org", flavorFungibility=fungibility)
        cluster = parse(*flavors, queue, TAS_USER_QUEUE, lender, job_of("j", 1).limits({GPU: "4"}))
        waits = quota_waiting(cluster.cluster, pending_workloads(cluster.cluster))
        return next((w.flavor.name for w in waits.values() if w.flavor), None)

    assert moved_to({}) is None  # Borrow: stays on spot, admitted there
    assert moved_to({"whenCanBorrow": "TryNextFlavor"}) == "on-demand"


def test_it_refuses_a_resource_slice_of_more_than_128_devices():
    """resource.k8s.io/v1 ResourceSliceMaxDevices = 128: the API server refuses a
    larger slice; here it is an input error naming it, not unbounded work."""
    devices = amd_gpus(*(f"gpu-{i}" for i in range(129)))
    snapshot = parse(DRA_NODE, WORKER_SLICE.spec(devices=devices))
    (error,) = snapshot.errors
    assert (error.field, error.reason) == ("spec.devices", "must have at most 128 items, got 129")


def test_it_says_on_a_trainjobs_pods_that_its_runtime_is_not_read():
    """The TrainJob's runtime (its pod template) is not read: said on each pod it
    builds, not only in the evaluation's global notes."""
    train = TRAIN_JOB.spec(trainer={"numNodes": 1})
    (said,) = parse(NODE.named("a"), train).cluster.unsupported
    assert (said.object, said.blocking) == ("Pod/ml/llm-node-0-0", False)
    assert "ClusterTrainingRuntime/torch-distributed is not read" in said.reason


def test_it_applies_no_flavor_it_has_not_read(shared_data):
    """A ClusterQueue whose ResourceFlavor is not in the snapshot: nothing is applied
    (the export is partial), and the pod says so; the job is read as before."""
    objects = [
        o for o in kueue_objects(shared_data, "sample-queues.yaml") if o["kind"] != "ResourceFlavor"
    ]
    snapshot = parse(UNGROUPED.named("other"), *objects, job_of("j", 1))
    (found,) = snapshot.cluster.pods
    assert (found.node_selector, found.not_ours) == ({}, None)
    assert [u.reason for u in snapshot.cluster.unsupported] == [
        "ResourceFlavor tas-flavor not read: its nodeLabels and tolerations not applied"
    ]


def test_it_names_the_flavor_label_no_node_has_where_no_group_could_add_one(shared_data):
    """podset.Merge: sample-queues.yaml's tas-flavor puts node-group=tas-group in the
    pods' nodeSelector; the only node lacks that label and there is no node group:
    both autoscaler columns name the label no node has, not only the missing group."""
    found = workloads(
        UNGROUPED.named("other"),
        *kueue_objects(shared_data, "sample-queues.yaml"),
        job_of("j", 1),
    )
    said = "no node has label cloud.provider.com/node-group=tas-group"
    assert said in found["default/j"]["reasons"][0]
    assert said in found["default/j"]["naiveReasons"][0]


def test_it_names_the_topology_level_no_node_has(shared_data):
    """sample-job-required.yaml asks for one cloud.provider.com/topology-rack (a level of
    sample-queues.yaml's Topology); the flavor's node carries the block level but no rack
    label, and no group could add one: the reason names the level."""
    block_only = NODE.labels(
        {
            "cloud.provider.com/topology-block": "b1",
            "cloud.provider.com/node-group": "tas-group",
        }
    )
    found = workloads(
        block_only.named("n1"),
        *kueue_objects(shared_data, "sample-queues.yaml"),
        *kueue_objects(shared_data, "sample-job-required.yaml"),
    )
    (job,) = found.values()
    assert "no node has topology level cloud.provider.com/topology-rack" in job["reasons"][0]


# --- a gang only where something enforces all-or-nothing (issue 46) -------------------

EIGHT_GPU_POD_SPEC = {
    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {GPU: "8"}}}]
}


# an LWS of 2 groups x 4 pods, 8 GPUs each
GPU_LWS = kube_object("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "vllm", "ml").spec(
    replicas=2,
    leaderWorkerTemplate={"size": 4, "workerTemplate": {"spec": EIGHT_GPU_POD_SPEC}},
)


def test_it_binds_an_unenforced_leaderworkerset_pod_by_pod_and_says_the_group_cannot_start():
    """kubernetes ``pkg/scheduler/schedule_one.go`` ``ScheduleOne``: kube-scheduler places
    one pod per cycle and binds it once it fits; LWS without a gang scheduler provider
    (lws ``pkg/schedulerprovider``) makes no PodGroup. 2 groups x 4 pods x 8 GPUs on 6
    free 8-GPU nodes: 6 pods bind (one per node), 2 cannot. One group binds whole, the
    other 2 of 4: its 2 bound pods hold 16 GPUs while it cannot start, said on each of
    its pods (it read 4 run and 4 blocked, as two gangs)."""
    found = workloads(*(NODE.named(f"n{i}") for i in range(6)), GPU_LWS)
    assert {w["kind"] for w in found.values()} == {"pod"}
    verdicts = [w["verdict"] for w in found.values()]
    assert (verdicts.count("runs_now"), len(verdicts)) == (6, 8)
    notes = {r for w in found.values() for r in w["reasons"] if "all-or-nothing" in r}
    (note,) = notes
    assert "binds 2 of them, holding 16 GPUs idle, while 2 cannot be placed" in note
    group = note.split()[1]  # "group ml/vllm-<i> needs all 4 pods, ..."
    partial = sorted(k for k, w in found.items() if note in w["reasons"])
    assert partial == [group, *(f"{group}-{j}" for j in (1, 2, 3))]


def test_it_keeps_a_leaderworkerset_group_a_gang_under_a_gang_scheduler():
    """LWS with Volcano as its gang scheduler provider (templates' schedulerName volcano,
    lws ``pkg/schedulerprovider``: one PodGroup per group of minMember size): each
    group is all-or-nothing. On 6 free 8-GPU nodes one group of 4 runs, the other
    (needs 4 nodes, 2 left) does not start at all."""
    template = ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")
    volcano = GPU_LWS.field(*template, schedulerName="volcano")
    found = workloads(*(NODE.named(f"n{i}") for i in range(6)), volcano)
    assert {k: (w["kind"], w["pods"]) for k, w in found.items()} == {
        "ml/vllm-0": ("gang", 4),
        "ml/vllm-1": ("gang", 4),
    }
    assert sorted(w["verdict"] for w in found.values()) == ["blocked", "runs_now"]


def test_it_reads_a_pytorchjob_without_a_gang_scheduler_as_separate_pods():
    """training-operator ``pkg/controller.v1/common/pod.go``: the operator makes a
    PodGroup only when started with ``--gang-scheduler-name`` (the pods then name that
    scheduler); a job with no queue and default-scheduler templates is 3 pods
    kube-scheduler binds one by one."""
    gpu = {"containers": [{"name": "c", "resources": {"limits": {GPU: "8"}}}]}
    job = kube_object("kubeflow.org/v1", "PyTorchJob", "mnist", "ml").spec(
        pytorchReplicaSpecs={
            "Master": {"replicas": 1, "template": {"spec": gpu}},
            "Worker": {"replicas": 2, "template": {"spec": gpu}},
        }
    )
    snapshot = parse(NODE.named("a"), job)
    assert snapshot.cluster.gangs == ()
    assert {p.app_group for p in snapshot.cluster.pods} == {"ml/mnist"}
