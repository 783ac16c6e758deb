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
from tests.builders import make_group, make_node, make_pod
from topology.kube.dra.slices import plugin_gpus
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 2, tzinfo=UTC)


# two device-plugin GPUs, built as the parser builds them, in pool a; ml pods of one GPU
PLUGIN_GPUS, PLUGIN_DEVICES = plugin_gpus({}, 2)
TWO_GPUS = (
    make_node()
    .label("pool", "a")
    .allocatable(8, "64Gi", 110)
    .gpu(*PLUGIN_GPUS)
    .device(*PLUGIN_DEVICES)
)
ONE_GPU = make_pod(namespace="ml").requests(1, "1Gi").gpus(1)


@pytest.mark.parametrize(
    ("gates", "placed", "summary"),
    [
        ((), True, None),  # "pod does not carry scheduling gates": nil status
        (("foo", "bar"), False, "waiting for scheduling gates: [foo bar]"),
    ],
    ids=["pod does not carry scheduling gates", "pod carries scheduling gates"],
)
def test_pre_enqueue_table(gates: tuple[str, ...], placed: bool, summary: str | None) -> None:
    cluster = Cluster(
        "c", nodes=(TWO_GPUS.named("n1").build(),), pods=(ONE_GPU.named("p").gates(*gates).build(),)
    )
    (outcome,) = place(cluster, pending_workloads(cluster), options=PlacementOptions()).outcomes
    assert outcome.placed is placed
    assert (outcome.diagnosis.summary if outcome.diagnosis else None) == summary


def test_it_holds_a_whole_gang_when_one_member_is_gated() -> None:
    pods = (
        ONE_GPU.named("w-0").gang("ml/g").build(),
        ONE_GPU.named("w-1").gates(*("quota",)).gang("ml/g").build(),
    )
    cluster = Cluster("c", nodes=(TWO_GPUS.named("n1").build(),), pods=pods)
    result = place(cluster, pending_workloads(cluster), options=PlacementOptions())
    (outcome,) = result.outcomes
    assert not outcome.placed and outcome.bindings == ()
    # nothing bound: both GPUs of n1 are still free
    assert result.state.alloc("n1").free_gpu_milli == 2000


def test_it_never_buys_for_a_gated_pod_and_calls_it_waiting_not_a_disagreement() -> None:
    template = TWO_GPUS.named("g-template").group("g").build()
    group = make_group("g", template).selector({"pool": "a"}).size(0, 4).price(10.0).build()
    busy = ONE_GPU.named("busy").gpus(2).on("n1").build()
    waiting = ONE_GPU.named("p").gates(*("kueue.x-k8s.io/admission",)).build()
    cluster = Cluster(
        "c",
        nodes=(TWO_GPUS.named("n1").group("g").build(),),
        pods=(busy, waiting),
        node_groups=(group,),
    )
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
