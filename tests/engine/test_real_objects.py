"""Real clusters' objects read as upstream defines them (issue 29): partly running
gangs, other schedulers' pods, terminating pods, admission, requests, DRA
allocations. Each expectation is worked out by hand from the upstream code named
in the test's docstring."""

from datetime import UTC, datetime
from typing import Any

from recommender.engine.evaluate.evaluation import evaluate
from topology.kube import parse_objects

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
