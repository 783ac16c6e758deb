"""cluster-autoscaler on the long tail (issue 46 item 5): another scheduler's pods and
options without a price. Each expectation is worked out by hand from the upstream
kubernetes/autoscaler function named in the test's docstring."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.evaluate.evaluation import evaluate
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 5, tzinfo=UTC)
POOL = "cloud.google.com/gke-nodepool"
GPU_ALLOCATABLE = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}


def gpu_node(name: str, pool: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {POOL: pool, "kubernetes.io/hostname": name}},
        "status": {"allocatable": GPU_ALLOCATABLE, "capacity": GPU_ALLOCATABLE},
    }


def gpu_pod(name: str, node_name: str | None = None, **spec: Any) -> dict[str, Any]:
    status = spec.pop("status", {"phase": "Running" if node_name else "Pending"})
    container = {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    body = {"containers": [container], **spec}
    if node_name:
        body["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": body,
        "status": status,
    }


def group(name: str, price: float | None = 10.0) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeSelector": {POOL: name},
        "minSize": 0,
        "maxSize": 4,
        "template": {"labels": {POOL: name}, "allocatable": GPU_ALLOCATABLE},
    }
    if price is not None:
        spec["pricePerNodeHour"] = price
    return {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": name},
        "spec": spec,
    }


def evaluated(*objects: dict[str, Any], **options: Any) -> dict[str, dict[str, Any]]:
    snapshot = parse_objects([("t.yaml", o) for o in objects], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    result = evaluate(snapshot.cluster, at=AT, **options).to_json()
    return {w["name"]: w for w in result["workloads"]}


UNSCHEDULABLE = {
    "phase": "Pending",
    "conditions": [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "lastTransitionTime": "2026-12-04T23:00:00Z",
        }
    ],
}


def test_it_scales_up_for_another_schedulers_pod_marked_unschedulable():
    """``cluster-autoscaler/utils/kubernetes/listers.go`` ``isUnschedulable``: a pod not
    bound, not deleted, with PodScheduled False/Unschedulable is listed whatever its
    schedulerName. A my-scheduler pod of 8 GPUs so marked, the one 8-GPU node busy:
    cluster-autoscaler adds one node of the group; kube-scheduler never places it
    (waiting)."""
    found = evaluated(
        gpu_node("n1", "gpu"),
        gpu_pod("busy", "n1"),
        gpu_pod("other", schedulerName="my-scheduler", status=UNSCHEDULABLE),
        group("gpu"),
    )
    other = found["ml/other"]
    assert other["verdict"] == "waiting"
    assert other["naive"]["addNodes"] == {"gpu": 1}


def test_it_leaves_another_schedulers_pod_without_the_condition_out_of_scale_up():
    """``isUnschedulable``: no PodScheduled=False/Unschedulable condition, not listed:
    the same pod with no condition makes cluster-autoscaler add nothing."""
    found = evaluated(
        gpu_node("n1", "gpu"),
        gpu_pod("busy", "n1"),
        gpu_pod("other", schedulerName="my-scheduler"),
        group("gpu"),
    )
    assert found["ml/other"]["naive"]["addNodes"] == {}


def test_it_skips_a_group_without_a_price_under_the_price_expander():
    """``cluster-autoscaler/expander/price/price.go`` ``BestOption``: an option whose
    ``NodePrice`` fails is skipped (``continue``). Groups a-unpriced (no price) and
    b-priced (10/h) both take the 8-GPU pod, one node each: the price expander picks
    b-priced, though a-unpriced comes first by name and would count 0/h."""
    found = evaluated(
        gpu_node("n1", "b-priced"),
        gpu_pod("busy", "n1"),
        gpu_pod("train"),
        group("a-unpriced", price=None),
        group("b-priced"),
        ca_flags=parse_flags(["--expander=price"]),
    )
    assert found["ml/train"]["naive"]["addNodes"] == {"b-priced": 1}


def test_it_adds_nothing_when_the_price_expander_has_no_priced_option():
    """``price.go`` ``BestOption`` skips every unpriced option and returns none;
    ``expander/factory/chain.go`` then has no option: no scale-up, and the reason names
    the skipped group."""
    found = evaluated(
        gpu_node("n1", "a-unpriced"),
        gpu_pod("busy", "n1"),
        gpu_pod("train"),
        group("a-unpriced", price=None),
        ca_flags=parse_flags(["--expander=price"]),
    )
    train = found["ml/train"]
    assert train["naive"]["addNodes"] == {}
    assert train["naiveReasons"] == [
        "no price is known for group a-unpriced: the price expander skips it "
        "(expander/price/price.go BestOption)"
    ]
