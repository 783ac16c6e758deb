"""SchedulingGates (PreEnqueue): a gated pod is never tried, never bought for.

The first table is kube-scheduler's own, translated as data: cases and message
from ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go``
(``TestPreEnqueue``): no gates -> Success; gates foo, bar ->
"waiting for scheduling gates: [foo bar]".
"""

from datetime import UTC, datetime

import pytest

from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.workloads import pending_workloads
from topology.kube.dra.slices import plugin_gpus
from topology.model.hardware import (
    Cluster,
    GpuRequest,
    Node,
    NodeGroup,
    Pod,
    Resources,
)

AT = datetime(2026, 12, 2, tzinfo=UTC)
GIB = 1024**3


def gpu_node(name: str, group: str | None = None) -> Node:
    """Two device-plugin GPUs, built as the parser builds them."""
    gpus, devices = plugin_gpus({}, 2)
    return Node(
        name=name,
        labels={"pool": "a"},
        allocatable=Resources(8000, 64 * GIB, 110),
        gpus=gpus,
        devices=devices,
        node_group=group,
    )


def gated_pod(name: str, gates: tuple[str, ...], gang: str | None = None) -> Pod:
    return Pod(
        namespace="ml",
        name=name,
        requests=Resources(1000, GIB, 1),
        gpu=GpuRequest(count=1),
        scheduling_gates=gates,
        gang=gang,
    )


@pytest.mark.parametrize(
    ("gates", "placed", "summary"),
    [
        ((), True, None),  # "pod does not carry scheduling gates": nil status
        (("foo", "bar"), False, "waiting for scheduling gates: [foo bar]"),
    ],
    ids=["pod does not carry scheduling gates", "pod carries scheduling gates"],
)
def test_pre_enqueue_table(gates: tuple[str, ...], placed: bool, summary: str | None) -> None:
    cluster = Cluster("c", nodes=(gpu_node("n1"),), pods=(gated_pod("p", gates),))
    (outcome,) = place(cluster, pending_workloads(cluster), options=PlacementOptions()).outcomes
    assert outcome.placed is placed
    assert (outcome.diagnosis.summary if outcome.diagnosis else None) == summary


def test_it_holds_a_whole_gang_when_one_member_is_gated() -> None:
    pods = (gated_pod("w-0", (), gang="ml/g"), gated_pod("w-1", ("quota",), gang="ml/g"))
    cluster = Cluster("c", nodes=(gpu_node("n1"),), pods=pods)
    result = place(cluster, pending_workloads(cluster), options=PlacementOptions())
    (outcome,) = result.outcomes
    assert not outcome.placed and outcome.bindings == ()
    # nothing bound: both GPUs of n1 are still free
    assert result.state.alloc("n1").free_gpu_milli == 2000


def test_it_never_buys_for_a_gated_pod_and_calls_it_waiting_not_a_disagreement() -> None:
    template = gpu_node("g-template", group="g")
    group = NodeGroup("g", {"pool": "a"}, 0, 4, 10.0, template)
    busy = Pod("ml", "busy", Resources(1000, GIB, 1), GpuRequest(count=2), node_name="n1")
    waiting = gated_pod("p", ("kueue.x-k8s.io/admission",))
    cluster = Cluster("c", nodes=(gpu_node("n1", "g"),), pods=(busy, waiting), node_groups=(group,))
    document = evaluate(cluster, at=AT).to_json()
    (workload,) = document["workloads"]
    assert workload["verdict"] == "waiting"
    assert workload["reasons"] == ["waiting: scheduling gate kueue.x-k8s.io/admission"]
    assert workload["naive"]["addNodes"] == {} and workload["joint"]["addNodes"] == {}
    assert workload["disagreements"] == []
    assert document["recommendations"] == [] and document["cost"]["naivePerHour"] == 0.0
    assert document["diagnoses"]["ml/p"]["summary"] == (
        "waiting for scheduling gates: [kueue.x-k8s.io/admission]"
    )
