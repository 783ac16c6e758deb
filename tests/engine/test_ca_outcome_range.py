"""cluster-autoscaler has no single answer: the naive plan says what else it may add.

Worked by hand from kubernetes/autoscaler: ``core/podlistprocessor/
filter_out_schedulable.go`` (pending pods from the lister, in its map order, then a
stable sort by priority: equal-priority pods come in any order), ``simulator/
clustersnapshot/predicate/plugin_runner.go`` (``RunFiltersUntilPassingNode``: the first
node that passes) and ``expander/waste/waste.go`` (least-waste: the smallest
(allocatable − requested) / allocatable of cpu plus that of memory).
"""

from __future__ import annotations

from datetime import UTC, datetime

from recommender.engine.autoscaler.cluster_autoscaler import naive_scale_up
from recommender.engine.autoscaler.outcome_range import MAX_NODES, REVERSED, OtherOutcome
from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.evaluate.report import render_text
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import (
    GPU,
    KubeObject,
    NodeGroupObjectBuilder,
    NodeObjectBuilder,
    PodObjectBuilder,
    as_dicts,
    node_group_object,
    node_object,
    pod_object,
)
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 5, tzinfo=UTC)
POOL = "cloud.google.com/gke-nodepool"
PRODUCT = {"nvidia.com/gpu.product": "NVIDIA-L4"}


L4_NODE = node_object("").labels(PRODUCT).allocatable(cpu="16", memory="64Gi", pods="110")
ML_POD = pod_object("ml", "")


def l4_node(name: str, pool: str) -> NodeObjectBuilder:
    return L4_NODE.named(name).label(POOL, pool).gpus(2)


def gpu_pod(name: str, gpus: str, cpu: str, memory: str) -> PodObjectBuilder:
    return ML_POD.named(name).requests({GPU: gpus}, cpu=cpu, memory=memory).limits({GPU: gpus})


def l4_group(name: str, price: float, cpu: str, memory: str, gpus: str) -> NodeGroupObjectBuilder:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", GPU: gpus}
    return (
        node_group_object(name)
        .selector({POOL: name})
        .size(0, 3)
        .price(price)
        .template(PRODUCT, allocatable)
    )


def cluster_of(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects((("t.yaml", o) for o in as_dicts(*objects)), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def order_decides():  # type: ignore[no-untyped-def]
    """n1 has 2 free GPUs; a-small asks 1, b-big 2, both priority 0. Whichever comes first
    takes n1. b-big left over: only group "two" (2 GPUs) accepts it → {"two": 1}.
    a-small left over: "one" and "two" both accept it; least-waste: one (4 cpu, 16 GiB)
    wastes (4−2)/4 + (16−8)/16 = 1.0, two (16 cpu, 64 GiB) wastes 14/16 + 56/64 = 1.75
    → {"one": 1}."""
    return cluster_of(
        l4_node("n1", "existing"),
        gpu_pod("a-small", "1", "2", "8Gi"),
        gpu_pod("b-big", "2", "2", "8Gi"),
        l4_group("one", 1.0, "4", "16Gi", "1"),
        l4_group("two", 3.0, "16", "64Gi", "2"),
    )


def test_it_names_the_other_scale_up_a_different_pod_order_gives() -> None:
    # the plan's own order is by name: a-small takes n1 and b-big needs group "two";
    # the opposite order gives b-big n1 and a-small a node of group "one"
    cluster = order_decides()
    state = ClusterState.from_cluster(cluster)
    plan = naive_scale_up(cluster, pending_workloads(cluster), state=state, at=AT, nominated={})
    assert [(a.node_group, a.count) for a in plan.additions] == [("two", 1)]
    assert plan.other_outcomes == (OtherOutcome({"one": 1}, 1.0, REVERSED),)


def test_it_prices_the_worst_case_of_the_outcomes() -> None:
    naive_range = evaluate(order_decides(), at=AT).to_json()["naiveRange"]
    assert naive_range["worstCasePerHour"] == 3.0
    assert naive_range["skipped"] is None


def test_it_says_cluster_autoscaler_may_also_add_in_the_text_report() -> None:
    cluster = order_decides()
    text = render_text(evaluate(cluster, at=AT), cluster.node_groups)
    assert f"cluster-autoscaler may also add 1 x one ($1.00/h), with {REVERSED}" in text


def test_it_says_the_range_was_not_worked_out_above_the_node_limit() -> None:
    nodes = [l4_node(f"n{i}", "existing") for i in range(MAX_NODES + 1)]
    cluster = cluster_of(
        *nodes, gpu_pod("a", "4", "2", "8Gi"), l4_group("two", 3.0, "16", "64Gi", "4")
    )
    state = ClusterState.from_cluster(cluster)
    plan = naive_scale_up(cluster, pending_workloads(cluster), state=state, at=AT, nominated={})
    assert plan.other_outcomes == ()
    assert plan.range_skipped is not None and f"above {MAX_NODES} nodes" in plan.range_skipped
