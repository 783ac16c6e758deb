"""cluster-autoscaler on the long tail (issue 46 item 5): another scheduler's pods and
options without a price. Each expectation is worked out by hand from the upstream
kubernetes/autoscaler function named in the test's docstring."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.evaluate.evaluation import evaluate
from tests.builders.objects import (
    GPU,
    KubeObject,
    NodeGroupObjectBuilder,
    as_dicts,
    node_group_object,
    node_object,
    pod_object,
)
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 5, tzinfo=UTC)
POOL = "cloud.google.com/gke-nodepool"
GPU_ALLOCATABLE = {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: "8"}

# an 8-GPU node (a member of a pool once labelled); a pod of ml holding 8 GPUs
GPU_NODE = node_object("").hostname().allocatable(GPU_ALLOCATABLE).capacity()
GPU_POD = pod_object("ml", "").limits({GPU: "8"})


def group(name: str) -> NodeGroupObjectBuilder:
    """The pool ``name`` of 0 to 4 such nodes, selected and labelled by name; unpriced."""
    found = node_group_object(name).selector({POOL: name}).size(0, 4)
    return found.template({POOL: name}, GPU_ALLOCATABLE)


def evaluated(*objects: KubeObject, **options: Any) -> dict[str, dict[str, Any]]:
    snapshot = parse_objects([("t.yaml", o) for o in as_dicts(*objects)], cluster_name="t")
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
        GPU_NODE.named("n1").label(POOL, "gpu"),
        GPU_POD.named("busy").on("n1"),
        GPU_POD.named("other").scheduler("my-scheduler").status(**UNSCHEDULABLE),
        group("gpu").price(10.0),
    )
    other = found["ml/other"]
    assert other["verdict"] == "waiting"
    assert other["naive"]["addNodes"] == {"gpu": 1}


def test_it_leaves_another_schedulers_pod_without_the_condition_out_of_scale_up():
    """``isUnschedulable``: no PodScheduled=False/Unschedulable condition, not listed:
    the same pod with no condition makes cluster-autoscaler add nothing."""
    found = evaluated(
        GPU_NODE.named("n1").label(POOL, "gpu"),
        GPU_POD.named("busy").on("n1"),
        GPU_POD.named("other").scheduler("my-scheduler"),
        group("gpu").price(10.0),
    )
    assert found["ml/other"]["naive"]["addNodes"] == {}


def test_it_skips_a_group_without_a_price_under_the_price_expander():
    """``cluster-autoscaler/expander/price/price.go`` ``BestOption``: an option whose
    ``NodePrice`` fails is skipped (``continue``). Groups a-unpriced (no price) and
    b-priced (10/h) both take the 8-GPU pod, one node each: the price expander picks
    b-priced, though a-unpriced comes first by name and would count 0/h."""
    found = evaluated(
        GPU_NODE.named("n1").label(POOL, "b-priced"),
        GPU_POD.named("busy").on("n1"),
        GPU_POD.named("train"),
        group("a-unpriced"),
        group("b-priced").price(10.0),
        ca_flags=parse_flags(["--expander=price"]),
    )
    assert found["ml/train"]["naive"]["addNodes"] == {"b-priced": 1}


def test_it_adds_nothing_when_the_price_expander_has_no_priced_option():
    """``price.go`` ``BestOption`` skips every unpriced option and returns none;
    ``expander/factory/chain.go`` then has no option: no scale-up, and the reason names
    the skipped group."""
    found = evaluated(
        GPU_NODE.named("n1").label(POOL, "a-unpriced"),
        GPU_POD.named("busy").on("n1"),
        GPU_POD.named("train"),
        group("a-unpriced"),
        ca_flags=parse_flags(["--expander=price"]),
    )
    train = found["ml/train"]
    assert train["naive"]["addNodes"] == {}
    assert train["naiveReasons"] == [
        "no price is known for group a-unpriced: the price expander skips it "
        "(expander/price/price.go BestOption)"
    ]
