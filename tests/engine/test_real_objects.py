"""Real clusters' objects read as upstream defines them (issue 29): partly running
gangs, other schedulers' pods, terminating pods, admission, requests, DRA
allocations. Each expectation is worked out by hand from the upstream code named
in the test's docstring."""

from datetime import UTC, datetime
from typing import Any

from recommender.engine.evaluate.evaluation import evaluate
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 5, tzinfo=UTC)


def node(name: str, gpus: int = 8, **labels: str) -> dict[str, Any]:
    allocatable = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def pod(name: str, gpus: int = 0, node_name: str | None = None, **spec: Any) -> dict[str, Any]:
    meta = spec.pop("metadata", {})
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    container = {"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": limits}}
    body = {"containers": [container], **spec}
    if node_name:
        body["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", **meta},
        "spec": body,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def parse(*objects: dict[str, Any]):  # type: ignore[no-untyped-def]
    return parse_objects([("real.yaml", o) for o in objects], cluster_name="t")


def workloads(*objects: dict[str, Any]) -> dict[str, dict[str, Any]]:
    snapshot = parse(*objects)
    assert [str(e) for e in snapshot.errors] == []
    result = evaluate(snapshot.cluster, at=AT).to_json()
    return {w["name"]: w for w in result["workloads"]}


def member(name: str, node_name: str | None = None) -> dict[str, Any]:
    labels = {"scheduling.x-k8s.io/pod-group": "train"}
    return pod(name, gpus=8, node_name=node_name, metadata={"labels": labels})


POD_GROUP = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"minMember": 4},
}


def test_it_needs_min_member_minus_the_running_members_of_a_gang():
    """scheduler-plugins pkg/coscheduling (README, core.go Permit): a member binds once
    running + waiting members reach minMember. minMember 4 with 2 members running on
    the two 8-GPU nodes: both pending members (8 GPUs each) are needed together; one
    free 8-GPU node holds one, so the gang does not run now (4 -> 2 needed, not 1)."""
    found = workloads(
        node("a"),
        node("b"),
        node("c"),
        POD_GROUP,
        member("m0", "a"),
        member("m1", "b"),
        member("m2"),
        member("m3"),
    )
    assert found["ml/train"]["verdict"] != "runs_now"
    assert found["ml/train"]["pods"] == 2


def test_it_schedules_the_rest_of_a_gang_one_by_one_once_running_members_reach_min_member():
    """scheduler-plugins pkg/coscheduling Permit: with minMember already running, a
    pending member is allowed at once, alone. minMember 2, both running, 2 pending
    and one free node: one member runs now, the other is a pod of its own."""
    group = {**POD_GROUP, "spec": {"minMember": 2}}
    found = workloads(
        node("a"),
        node("b"),
        node("c"),
        group,
        member("m0", "a"),
        member("m1", "b"),
        member("m2"),
        member("m3"),
    )
    verdicts = sorted(found[k]["verdict"] for k in ("ml/m2", "ml/m3"))
    assert "runs_now" in verdicts and verdicts != ["runs_now", "runs_now"]


VOLCANO_GROUP = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"minMember": 3, "queue": "default"},
}


def volcano_member(name: str, node_name: str | None = None) -> dict[str, Any]:
    annotations = {"scheduling.k8s.io/group-name": "train"}
    meta = {"annotations": annotations}
    return pod(name, gpus=8, node_name=node_name, schedulerName="volcano", metadata=meta)


def test_it_makes_a_volcano_gang_ready_once_running_and_new_members_reach_min_member():
    """volcano ``pkg/scheduler/plugins/gang/gang.go`` ``JobReadyFn`` and
    ``pkg/scheduler/api/job_info.go`` ``ReadyTaskNum`` (Bound, Binding, Running and
    Allocated tasks): minMember 3 with 2 members running, 2 pending 8-GPU members and
    one free 8-GPU node. Allocating one member makes 3 ready: the job is ready, that
    member binds; the other finds no node and stays pending. One runs, one does not
    (both "ran now" before, on one 8-GPU node)."""
    found = workloads(
        node("a"),
        node("b"),
        node("c"),
        VOLCANO_GROUP,
        volcano_member("m0", "a"),
        volcano_member("m1", "b"),
        volcano_member("m2"),
        volcano_member("m3"),
    )
    running = sum(w["pods"] for w in found.values() if w["verdict"] == "runs_now")
    assert (running, sum(w["pods"] for w in found.values())) == (1, 2)
    assert found["ml/train"]["verdict"] == "runs_now"


def test_it_lists_another_schedulers_pending_pod_as_not_ours():
    """pkg/scheduler/eventhandlers.go responsibleForPod: kube-scheduler only takes pods
    whose spec.schedulerName names one of its profiles (default-scheduler). A pod for
    my-scheduler on an empty 8-GPU node is not ours: never "runs now"."""
    found = workloads(node("a"), pod("p", gpus=1, schedulerName="my-scheduler"))
    assert found["ml/p"]["verdict"] == "waiting"
    assert found["ml/p"]["reasons"] == [
        "other scheduler's pod, not ours: spec.schedulerName is my-scheduler"
    ]


def test_it_lists_a_pending_pod_being_deleted_as_terminating():
    """kube-scheduler skipPodSchedule (pkg/scheduler/schedule_one.go): a pod with
    metadata.deletionTimestamp is never scheduled. On an empty node it does not run."""
    deleted = {"deletionTimestamp": "2026-12-04T23:59:00Z"}
    found = workloads(node("a"), pod("p", gpus=1, metadata=deleted))
    assert found["ml/p"]["verdict"] == "waiting"
    assert found["ml/p"]["reasons"][0].startswith("terminating: metadata.deletionTimestamp")


def spread_pod(name: str, node_name: str | None = None, **meta: Any) -> dict[str, Any]:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    metadata = {"labels": {"app": "web"}, **meta}
    return pod(name, node_name=node_name, metadata=metadata, topologySpreadConstraints=[constraint])


def test_it_leaves_terminating_pods_out_of_topology_spread_counts():
    """podtopologyspread/common.go countPodsMatchSelector: "Bypass terminating Pod".
    Node a (8 GPUs) runs web-0, terminating; node b has no GPU, so the new 1-GPU pod
    fits only a. Counts a=0, b=0: skew on a is 0+1-0 = 1 <= maxSkew 1, it fits. Were
    web-0 counted, 1+1-0 = 2 > 1: refused."""
    deleted = {"deletionTimestamp": "2026-12-04T23:59:00Z"}
    web_1 = spread_pod("web-1")
    web_1["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    found = workloads(node("a"), node("b", gpus=0), spread_pod("web-0", "a", **deleted), web_1)
    assert found["ml/web-1"]["verdict"] == "runs_now"


# --- DRA: allocated claims, shared claims, admin access, pool generations ----------

WORKER = "k8s-gpu-dra-driver-cluster-worker"  # the node of the ROCm demo's allocation
AMD = "gpu.amd.com"


def allocation_status(shared_data) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The ROCm driver demo's real ResourceClaim status (data/k8s-examples/dra)."""
    import yaml

    path = shared_data / "k8s-examples/dra/rocm-amd-resourceclaim-status-allocation-fragment.yaml"
    return yaml.safe_load(path.read_text())["status"]


def dra_node(name: str = WORKER, cpu: str = "64") -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "512Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def amd_slice(
    node_name: str, devices: list[str], generation: int = 0, count: int = 1, suffix: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{AMD}{suffix}"},
        "spec": {
            "driver": AMD,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": count},
            "devices": [{"name": d, "attributes": {"type": {"string": "amdgpu"}}} for d in devices],
        },
    }


AMD_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": AMD},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{AMD}"'}}]},
}


def amd_claim(name: str, status: dict[str, Any] | None = None, **request: Any) -> dict[str, Any]:
    body = {"name": "gpu", "exactly": {"deviceClassName": AMD, **request}}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [body]}},
    }
    if status is not None:
        claim["status"] = status
    return claim


def claim_pod(
    name: str, claim: str, node_name: str | None = None, cpu: str = "1"
) -> dict[str, Any]:
    found = pod(
        name, node_name=node_name, resourceClaims=[{"name": "gpu", "resourceClaimName": claim}]
    )
    found["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    return found


def evaluated(*objects: dict[str, Any]) -> dict[str, Any]:
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
        dra_node(),
        amd_slice(WORKER, ["gpu-48-176", "gpu-0-128"]),
        AMD_CLASS,
        amd_claim("gpu-claim", status),
        claim_pod("pod1", "gpu-claim", WORKER),
        amd_claim("two", count=2),
        claim_pod("pod2", "two"),
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
        dra_node(cpu="1"),
        dra_node("other"),
        amd_slice(WORKER, ["gpu-48-176"]),
        amd_slice("other", ["gpu-1"]),
        AMD_CLASS,
        amd_claim("gpu-claim", status),
        claim_pod("pod1", "gpu-claim", cpu="2"),
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
        dra_node(),
        amd_slice(WORKER, ["gpu-48-176", "gpu-0-128"]),
        AMD_CLASS,
        amd_claim("gpu-claim", status),
        claim_pod("pod1", "gpu-claim", WORKER),
        claim_pod("pod3", "gpu-claim", WORKER),
    )
    assert result["cluster"]["gpusAllocated"] == 1


def test_it_counts_an_unexported_claim_shared_by_two_running_pods_once():
    """Without status in the snapshot a running pod's claim is taken on its node
    (first fitting device); two running pods sharing the claim take it once."""
    result = evaluated(
        dra_node(),
        amd_slice(WORKER, ["gpu-48-176", "gpu-0-128"]),
        AMD_CLASS,
        amd_claim("gpu-claim"),
        claim_pod("pod1", "gpu-claim", WORKER),
        claim_pod("pod3", "gpu-claim", WORKER),
    )
    assert result["cluster"]["gpusAllocated"] == 1


def test_it_takes_no_device_for_an_admin_access_allocation(shared_data):
    """structured/internal/allocatedstate.go: results with adminAccess are left out
    of the allocated devices. The demo's claim plus a second result, gpu-0-128 with
    adminAccess: of the two devices allocated, 1 is counted."""
    status = allocation_status(shared_data)
    results = status["allocation"]["devices"]["results"]
    results.append({**results[0], "device": "gpu-0-128", "request": "admin", "adminAccess": True})
    claim = amd_claim("gpu-claim", status)
    admin = {"name": "admin", "exactly": {"deviceClassName": AMD, "adminAccess": True}}
    claim["spec"]["devices"]["requests"].append(admin)
    result = evaluated(
        dra_node(),
        amd_slice(WORKER, ["gpu-48-176", "gpu-0-128"]),
        AMD_CLASS,
        claim,
        claim_pod("pod1", "gpu-claim", WORKER),
    )
    assert result["cluster"]["gpusAllocated"] == 1


def test_it_reads_only_the_newest_generation_of_a_pool():
    """pools_stable.go addSlice: a slice of an older pool.generation is out-dated and
    ignored. Generation 1 offers 2 devices, generation 2 one: the node has 1 GPU."""
    snapshot = parse(
        dra_node(),
        amd_slice(WORKER, ["gpu-a", "gpu-b"], generation=1, suffix="-old"),
        amd_slice(WORKER, ["gpu-a"], generation=2),
    )
    (node_read,) = snapshot.cluster.nodes
    assert [d.name for d in node_read.devices] == ["gpu-a"]


def test_it_refuses_all_devices_from_an_incomplete_pool():
    """allocator_stable.go validateDeviceRequest: allocationMode All over a pool whose
    newest generation has fewer slices than resourceSliceCount fails ("asks for all
    devices, but resource pool … is currently being updated")."""
    result = evaluated(
        dra_node(),
        amd_slice(WORKER, ["gpu-a"], count=2),
        AMD_CLASS,
        amd_claim("all", allocationMode="All"),
        claim_pod("p", "all"),
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
        dra_node(),
        amd_slice(WORKER, ["gpu-a"], count=2),
        AMD_CLASS,
        amd_claim("one", count=1),
        claim_pod("p", "one"),
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
        dra_node(),
        amd_slice(WORKER, ["gpu-a"]),
        AMD_CLASS,
        amd_claim("shared"),
        claim_pod("p1", "shared"),
        claim_pod("p2", "shared"),
    )
    assert {w["name"]: w["verdict"] for w in result["workloads"]} == {
        "ml/p1": "runs_now",
        "ml/p2": "runs_now",
    }


# --- requests: KEP-753 order, pod-level resources, the API server's validation ----


def container(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": {"cpu": cpu}}, **extra}


def one_pod(spec: dict[str, Any]):  # type: ignore[no-untyped-def]
    snapshot = parse(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml"},
            "spec": spec,
        }
    )
    assert [str(e) for e in snapshot.errors] == []
    (found,) = snapshot.cluster.pods
    return found


def test_it_adds_the_sidecars_started_before_an_init_container_to_its_need():
    """component-helpers resource/helpers.go AggregateContainerRequests (KEP-753):
    init container i needs itself + restartable init containers before it. Sidecar
    1 CPU, then init 3 CPU, app 1 CPU: init phase 1+3 = 4, run phase 1+1 = 2;
    the pod requests max(2, 4) = 4 CPU (not max(2, 3) = 3)."""
    spec = {
        "initContainers": [container("side", "1", restartPolicy="Always"), container("init", "3")],
        "containers": [container("app", "1")],
    }
    assert one_pod(spec).requests.cpu_milli == 4000


def test_it_does_not_add_sidecars_started_after_an_init_container():
    """Same rule: init 3 CPU first, then sidecar 1 CPU, app 1 CPU: init phase 3,
    run phase 1+1 = 2; the pod requests 3 CPU."""
    spec = {
        "initContainers": [container("init", "3"), container("side", "1", restartPolicy="Always")],
        "containers": [container("app", "1")],
    }
    assert one_pod(spec).requests.cpu_milli == 3000


def test_it_takes_pod_level_requests_instead_of_the_containers_sum():
    """PodRequests (KEP-2837): pod-level spec.resources.requests of cpu and memory
    replace the aggregate of the containers. Containers 1+1 CPU, pod-level 5 CPU."""
    spec = {
        "resources": {"requests": {"cpu": "5"}},
        "containers": [container("a", "1"), container("b", "1")],
    }
    assert one_pod(spec).requests.cpu_milli == 5000


def invalid(limits: dict[str, Any], requests: dict[str, Any] | None = None) -> tuple[str, str]:
    resources = {"limits": limits, "requests": requests or {}}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}}
    body["spec"] = {"containers": [{"name": "c", "resources": resources}]}
    snapshot = parse(body)
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
    snapshot = parse(node("huge", gpus=65536))
    assert snapshot.cluster.nodes == ()
    (error,) = snapshot.errors
    assert (error.object, error.field) == ("Node/huge", "status.allocatable.nvidia.com/gpu")
    assert "more than 1024" in error.reason


# --- admission: Priority, ExtendedResourceToleration ------------------------------


def priority_class(name: str, value: int, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def manifest(name: str, **spec: Any) -> dict[str, Any]:
    """A pod as written by hand or built from a template: no status, no priority."""
    body = {"containers": [container("c", "1")], **spec}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": body,
    }


def priorities(*objects: dict[str, Any]) -> dict[str, int]:
    return {p.name: p.priority for p in parse(*objects).cluster.pods}


def test_it_gives_a_pod_its_priority_class_value():
    """plugin/pkg/admission/priority/admission.go: a pod's priorityClassName sets
    spec.priority to the class's value (1000), not 0."""
    found = priorities(priority_class("high", 1000), manifest("p", priorityClassName="high"))
    assert found == {"p": 1000}


def test_it_gives_a_pod_without_a_class_the_lowest_global_default():
    """admission.go getDefaultPriorityClass: with two globalDefault classes (100 and
    50) the one of lowest value is used: 50."""
    found = priorities(
        priority_class("a", 100, default=True), priority_class("b", 50, default=True), manifest("p")
    )
    assert found == {"p": 50}


def test_it_blocks_a_pod_naming_a_priority_class_that_does_not_exist():
    """admission.go: "no PriorityClass with name X was found": the pod is refused."""
    snapshot = parse(priority_class("high", 1000), manifest("p", priorityClassName="nope"))
    (found,) = snapshot.cluster.pods
    assert found.unsupported == (
        "no PriorityClass with name nope was found: admission refuses the pod",
    )


def gke_node(name: str) -> dict[str, Any]:
    allocatable = {
        "cpu": "208",
        "memory": "1800Gi",
        "ephemeral-storage": "2Ti",
        "pods": "110",
        "nvidia.com/gpu": "8",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "cloud.google.com/gke-nodepool": "a3-pool"},
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def test_it_adds_gkes_gpu_toleration_to_pods_built_from_a_template(shared_data):
    """plugin/pkg/admission/extendedresourcetoleration/admission.go (on in GKE): a pod
    requesting nvidia.com/gpu gets an Exists/NoSchedule toleration of it. The LWS
    vLLM example (2 groups x 2 pods x 8 GPUs, no toleration) on 4 tainted GKE 8-GPU
    nodes runs now instead of "untolerated taint"."""
    from topology.ingest.files import read_objects

    lws = shared_data / "upstream-examples/kubernetes-sigs+lws/docs/examples/vllm/GPU/lws.yaml"
    objects = [o for _, o in read_objects(lws) if o.get("kind") == "LeaderWorkerSet"]
    snapshot = parse(*(gke_node(f"n{i}") for i in range(4)), *objects)
    assert [str(e) for e in snapshot.errors] == []
    result = evaluate(snapshot.cluster, at=AT).to_json()
    assert {w["verdict"] for w in result["workloads"]} == {"runs_now"}


# --- GKE sharing labels, KAI fractions, KEP-5004 names --------------------------------


def gke_gpu_node(name: str, gpus: int, **labels: str) -> dict[str, Any]:
    found = node(name, gpus=gpus, **labels)
    found["metadata"]["labels"]["cloud.google.com/gke-nodepool"] = "pool"
    return found


def test_it_reads_a_gke_mig_partitioned_node_as_its_physical_gpus():
    """GKE multi-instance GPUs: gke-gpu-partition-size 1g.5gb on an a2-highgpu-1g
    advertises 7 nvidia.com/gpu, the 7 instances of one A100-40GB (7 x 1g.5gb per
    GPU, NVIDIA MIG user guide): 1 GPU, 7 units."""
    labels = {
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "cloud.google.com/gke-gpu-partition-size": "1g.5gb",
    }
    (found,) = parse(gke_gpu_node("a2", 7, **labels)).cluster.nodes
    assert (found.gpu_count, len(found.devices)) == (1, 7)


def test_it_reads_a_gke_time_shared_node_as_its_physical_gpus():
    """GKE GPU time-sharing: gke-max-shared-clients-per-gpu 2 exposes each physical
    GPU twice; a g2-standard-4 (1 L4) advertises 2: 1 GPU, 2 units of half of it."""
    labels = {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
        "cloud.google.com/gke-max-shared-clients-per-gpu": "2",
    }
    (found,) = parse(gke_gpu_node("g2", 2, **labels)).cluster.nodes
    assert (found.gpu_count, len(found.devices)) == (1, 2)
    assert sorted(d.unit_gpu_milli for d in found.devices) == [500, 500]


def kai_pod(name: str, **annotations: str) -> dict[str, Any]:
    """KAI's upstream gpu-sharing example pod (docs/gpu-sharing/gpu-sharing.yaml)."""
    return pod(name, schedulerName="kai-scheduler", metadata={"annotations": annotations})


def test_it_reads_a_kai_gpu_fraction_as_half_a_gpu():
    """KAI docs/gpu-sharing: gpu-fraction "0.5" asks half of one GPU. On a full
    1-GPU node (a running pod holds it) the pod does not run now; read as 0 GPUs it
    would."""
    found = workloads(
        node("a", gpus=1),
        pod("busy", gpus=1, node_name="a"),
        kai_pod("half", **{"gpu-fraction": "0.5"}),
    )
    assert found["ml/half"]["gpus"] == 0.5
    assert found["ml/half"]["verdict"] != "runs_now"


def test_it_places_two_kai_halves_on_one_gpu():
    """Two gpu-fraction 0.5 pods share the one GPU of a node: both run now."""
    found = workloads(
        node("a", gpus=1),
        kai_pod("h1", **{"gpu-fraction": "0.5"}),
        kai_pod("h2", **{"gpu-fraction": "0.5"}),
    )
    assert {found["ml/h1"]["verdict"], found["ml/h2"]["verdict"]} == {"runs_now"}


def test_it_says_a_kai_gpu_memory_share_is_not_modelled():
    """KAI gpu-memory (MiB instead of a fraction) is not modelled: blocked, said."""
    found = workloads(node("a", gpus=1), kai_pod("m", **{"gpu-memory": "2000"}))
    assert found["ml/m"]["reasons"][0].startswith("unsupported: KAI gpu-memory")


def mig_slice(node_name: str, count: int) -> dict[str, Any]:
    """A DRA driver's MIG devices of profile 1g.12gb on one node."""
    devices = [
        {
            "name": f"gpu-0-mig-1g12gb-{i}",
            "attributes": {"type": {"string": "mig"}, "profile": {"string": "1g.12gb"}},
        }
        for i in range(count)
    ]
    spec = {
        "driver": "gpu.nvidia.com",
        "nodeName": node_name,
        "pool": {"name": node_name},
        "devices": devices,
    }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": node_name},
        "spec": spec,
    }


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
    found = workloads(dra_node("kind-dra-1-worker"), mig_slice("kind-dra-1-worker", 1), *objects)
    assert found["extended-resource-mig-1g12gb/mig-1g12gb-pod"]["verdict"] == "runs_now"


def test_it_maps_the_implicit_deviceclass_resource_name_to_its_class(shared_data):
    """KEP-5004: every class C also maps deviceclass.resource.kubernetes.io/C. A pod
    asking 1 of it, on a node whose DRA slice has one instance of the class: runs now
    (read as an unknown extended resource, nothing would offer it)."""
    device_class = next(o for o in mig_example(shared_data) if o["kind"] == "DeviceClass")
    asking = pod("q")
    limits = {"deviceclass.resource.kubernetes.io/mig-1g-12gb.gpu.nvidia.com": "1"}
    asking["spec"]["containers"][0]["resources"]["limits"] = limits
    found = workloads(dra_node("w"), mig_slice("w", 1), device_class, asking)
    assert found["ml/q"]["verdict"] == "runs_now"


# --- Kueue ResourceFlavors ----------------------------------------------------------

KUEUE_TAS = "upstream-examples/kubernetes-sigs+kueue/site/static/examples/tas"


def kueue_objects(shared_data, name: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    from topology.ingest.files import read_objects

    return [o for _, o in read_objects(shared_data / KUEUE_TAS / name)]


def queued_job(name: str, pods: int, gpus: int = 0, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    """A Job in the TAS examples' LocalQueue (like sample-job-required.yaml)."""
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    resources = {"requests": {"cpu": cpu, "memory": "200Mi"}, "limits": limits}
    template = {
        "spec": {
            "containers": [{"name": "c", "resources": resources}],
            "restartPolicy": "Never",
            **spec,
        }
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"kueue.x-k8s.io/queue-name": "tas-user-queue"},
        },
        "spec": {"parallelism": pods, "completions": pods, "template": template},
    }


def tas_node(
    name: str, cpu: str = "64", gpus: int = 8, group: str | None = "tas-group", taint: bool = False
) -> dict[str, Any]:
    found = node(name, gpus=gpus)
    found["status"]["allocatable"]["cpu"] = cpu
    labels = found["metadata"]["labels"]
    labels |= {"cloud.provider.com/topology-block": "b1", "cloud.provider.com/topology-rack": "r1"}
    if group:
        labels["cloud.provider.com/node-group"] = group
    if taint:
        found["spec"] = {
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        }
    return found


def test_it_gives_a_kueue_pod_set_its_flavors_tolerations(shared_data):
    """kueue flavorassigner / podset.Merge: admission adds the flavor's tolerations.
    sample-gpu-queues.yaml's tas-flavor tolerates nvidia.com/gpu NoSchedule; a 2-pod
    1-GPU job without tolerations on two tainted 8-GPU nodes of the flavor runs now."""
    found = workloads(
        tas_node("n1", taint=True),
        tas_node("n2", taint=True),
        *kueue_objects(shared_data, "sample-gpu-queues.yaml"),
        queued_job("train", 2, gpus=1),
    )
    assert {w["verdict"] for w in found.values()} == {"runs_now"}


def test_it_keeps_a_kueue_pod_set_on_its_flavors_nodes(shared_data):
    """podset.Merge: the flavor's nodeLabels join the pods' nodeSelector.
    sample-queues.yaml's tas-flavor labels node-group tas-group; its only node has
    half a CPU, the unlabelled node 64: a 1-CPU pod does not run now (it would run
    on the unlabelled node without the flavor's labels)."""
    found = workloads(
        tas_node("tas", cpu="500m"),
        tas_node("other", group=None),
        *kueue_objects(shared_data, "sample-queues.yaml"),
        queued_job("j", 1),
    )
    assert {w["verdict"] for w in found.values()} != {"runs_now"}


def test_it_skips_a_flavor_whose_taints_the_pod_set_does_not_tolerate():
    """flavorassigner.go: a flavor whose nodeTaints (NoSchedule) the pods do not
    tolerate is skipped; the next flavor in the ClusterQueue's order is taken:
    spot (tainted) then on-demand: the pods get pool=on-demand."""
    flavors = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ResourceFlavor",
            "metadata": {"name": name},
            "spec": {"nodeLabels": {"pool": name}, **extra},
        }
        for name, extra in (
            ("spot", {"nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}]}),
            ("on-demand", {}),
        )
    ]
    quota = [{"name": "cpu", "nominalQuota": 10}, {"name": "memory", "nominalQuota": "10Gi"}]
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {"name": "spot", "resources": quota},
                        {"name": "on-demand", "resources": quota},
                    ],
                }
            ]
        },
    }
    local = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {"name": "tas-user-queue", "namespace": "default"},
        "spec": {"clusterQueue": "cq"},
    }
    snapshot = parse(*flavors, queue, local, queued_job("j", 1))
    assert [str(e) for e in snapshot.errors] == []
    assert {p.node_selector.get("pool") for p in snapshot.cluster.pods} == {"on-demand"}


# --- training jobs and LeaderWorkerSet: one reading with or without their pods -------

KAI_PYTORCH = "upstream-examples/NVIDIA+KAI-Scheduler/docs/batch/pytorch-job.yaml"
LWS_VLLM = "upstream-examples/kubernetes-sigs+lws/docs/examples/vllm/GPU/lws.yaml"


def example_objects(shared_data, path: str, kind: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    from topology.ingest.files import read_objects

    return [o for _, o in read_objects(shared_data / path) if o.get("kind") == kind]


def test_it_reads_a_pytorchjob_as_one_gang_of_its_replicas(shared_data):
    """training-operator pkg/controller.v1/pytorch: KAI's example PyTorchJob makes
    Master x1 + Worker x2 pods, 1 GPU each; all or nothing: one gang of 3 pods,
    3 GPUs (it was ignored: no demand at all)."""
    found = workloads(node("a", gpus=8), *example_objects(shared_data, KAI_PYTORCH, "PyTorchJob"))
    job = found["default/pytorch-dist-mnist-nccl"]
    assert (job["kind"], job["pods"], job["gpus"]) == ("gang", 3, 3)


def test_it_reads_a_kueue_queued_trainjob_as_one_gang_of_its_nodes():
    """Kubeflow Trainer v2: a TrainJob of numNodes 2, 4 GPUs per node, in a Kueue queue
    (admitted as one Workload): one gang of 2 pods, 8 GPUs."""
    train = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {
            "name": "llm",
            "namespace": "ml",
            "labels": {"kueue.x-k8s.io/queue-name": "q"},
        },
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}},
        },
    }
    found = workloads(node("a", gpus=8), train)
    assert (found["ml/llm"]["kind"], found["ml/llm"]["pods"], found["ml/llm"]["gpus"]) == (
        "gang",
        2,
        8,
    )


def lws_pod(name: str, group: int, leader: bool) -> dict[str, Any]:
    """A pod as the LWS controller creates it (labels, size annotation), pending."""
    found = pod(name, gpus=8)
    found["metadata"] = {
        "name": name,
        "namespace": "default",
        "labels": {
            "leaderworkerset.sigs.k8s.io/name": "vllm",
            "leaderworkerset.sigs.k8s.io/group-index": str(group),
            "leaderworkerset.sigs.k8s.io/worker-index": "0" if leader else "1",
        },
        "annotations": {"leaderworkerset.sigs.k8s.io/size": "2"},
    }
    return found


def test_it_reads_a_leaderworkerset_the_same_with_or_without_its_pods(shared_data):
    """LWS (api/leaderworkerset/v1): 2 groups of size 2, no gang scheduler (the example
    sets no schedulerName, no Kueue queue). Built from the template or read from its
    4 exported pods, the workloads are the same 4 pods kube-scheduler places one by
    one (``pkg/scheduler/schedule_one.go`` ``ScheduleOne``)."""
    lws = example_objects(shared_data, LWS_VLLM, "LeaderWorkerSet")
    nodes = [gke_node(f"n{i}") for i in range(4)]
    built = workloads(*nodes, *lws)
    exported_pods = [
        lws_pod("vllm-0", 0, True),
        lws_pod("vllm-0-1", 0, False),
        lws_pod("vllm-1", 1, True),
        lws_pod("vllm-1-1", 1, False),
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
    deleted = {"deletionTimestamp": "2026-12-04T23:59:00Z"}
    snapshot = parse(
        dra_node(),
        amd_slice(WORKER, ["gpu-48-176"]),
        AMD_CLASS,
        amd_claim("gpu-claim", status),
        claim_pod("pod1", "gpu-claim", WORKER),
        pod("gone", metadata=deleted),
    )
    stored = cluster_to_json(snapshot.cluster)
    assert cluster_from_json(stored) == snapshot.cluster
    assert cluster_to_json(cluster_from_json(stored)) == stored


def two_flavor_queue(spot_gpus: int, on_demand_gpus: int) -> list[dict[str, Any]]:
    """ClusterQueue cq: one resource group, flavors spot then on-demand (nodeLabels
    pool=<flavor>), nvidia.com/gpu quota per flavor; LocalQueue tas-user-queue."""
    flavors = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ResourceFlavor",
            "metadata": {"name": name},
            "spec": {"nodeLabels": {"pool": name}},
        }
        for name in ("spot", "on-demand")
    ]

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
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"resourceGroups": [group]},
    }
    local = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {"name": "tas-user-queue", "namespace": "default"},
        "spec": {"clusterQueue": "cq"},
    }
    return [*flavors, queue, local]


def test_it_admits_a_kueue_pod_set_against_its_own_flavors_quota():
    """flavorassigner.go: quota is per flavor and resource. spot has 2 GPUs of quota,
    on-demand 8; the pod set takes spot (first flavor) and asks 4 GPUs: it waits for
    quota (summed over flavors, 10 >= 4, it would be admitted)."""
    pool = tas_node("spot-1", gpus=8)
    pool["metadata"]["labels"]["pool"] = "spot"
    found = workloads(pool, *two_flavor_queue(2, 8), queued_job("j", 1, gpus=4))
    (job,) = found.values()
    assert job["verdict"] == "waiting"
    assert job["reasons"] == [
        "waiting for quota in queue ClusterQueue/cq flavor spot (needs 4 nvidia.com/gpu, free 2)"
    ]


def test_it_refuses_a_resource_slice_of_more_than_128_devices():
    """resource.k8s.io/v1 ResourceSliceMaxDevices = 128: the API server refuses a
    larger slice; here it is an input error naming it, not unbounded work."""
    snapshot = parse(dra_node(), amd_slice(WORKER, [f"gpu-{i}" for i in range(129)]))
    (error,) = snapshot.errors
    assert (error.field, error.reason) == ("spec.devices", "must have at most 128 items, got 129")


def test_it_says_on_a_trainjobs_pods_that_its_runtime_is_not_read():
    """The TrainJob's runtime (its pod template) is not read: said on each pod it
    builds, not only in the evaluation's global notes."""
    train = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 1}},
    }
    (said,) = parse(node("a"), train).cluster.unsupported
    assert (said.object, said.blocking) == ("Pod/ml/llm-node-0-0", False)
    assert "ClusterTrainingRuntime/torch-distributed is not read" in said.reason


def test_it_applies_no_flavor_it_has_not_read(shared_data):
    """A ClusterQueue whose ResourceFlavor is not in the snapshot: nothing is applied
    (the export is partial), and the pod says so; the job is read as before."""
    objects = [
        o for o in kueue_objects(shared_data, "sample-queues.yaml") if o["kind"] != "ResourceFlavor"
    ]
    snapshot = parse(tas_node("other", group=None), *objects, queued_job("j", 1))
    (found,) = snapshot.cluster.pods
    assert (found.node_selector, found.not_ours) == ({}, None)
    assert [u.reason for u in snapshot.cluster.unsupported] == [
        "ResourceFlavor tas-flavor not read: its nodeLabels and tolerations not applied"
    ]


# --- a gang only where something enforces all-or-nothing (issue 46) -------------------


def gpu_lws(**template_spec: Any) -> dict[str, Any]:
    """An LWS of 2 groups x 4 pods, 8 GPUs each."""
    limits = {"nvidia.com/gpu": "8"}
    container = {"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": limits}}
    spec = {"containers": [container], **template_spec}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "ml"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {"size": 4, "workerTemplate": {"spec": spec}},
        },
    }


def test_it_binds_an_unenforced_leaderworkerset_pod_by_pod_and_says_the_group_cannot_start():
    """kubernetes ``pkg/scheduler/schedule_one.go`` ``ScheduleOne``: kube-scheduler places
    one pod per cycle and binds it once it fits; LWS without a gang scheduler provider
    (lws ``pkg/schedulerprovider``) makes no PodGroup. 2 groups x 4 pods x 8 GPUs on 6
    free 8-GPU nodes: 6 pods bind (one per node), 2 cannot. One group binds whole, the
    other 2 of 4: its 2 bound pods hold 16 GPUs while it cannot start, said on each of
    its pods (it read 4 run and 4 blocked, as two gangs)."""
    found = workloads(*(node(f"n{i}") for i in range(6)), gpu_lws())
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
    found = workloads(*(node(f"n{i}") for i in range(6)), gpu_lws(schedulerName="volcano"))
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
    gpu = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": {"spec": gpu}},
                "Worker": {"replicas": 2, "template": {"spec": gpu}},
            }
        },
    }
    snapshot = parse(node("a"), job)
    assert snapshot.cluster.gangs == ()
    assert {p.app_group for p in snapshot.cluster.pods} == {"ml/mnist"}
