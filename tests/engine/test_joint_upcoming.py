"""The joint plan counts the nodes a group is already adding (cluster-autoscaler
``clusterstate/clusterstate.go`` ``GetUpcomingNodes``: target size minus registered;
``processors/customresources/gpu_processor.go``: GPU nodes not yet advertising GPUs),
each expectation worked out by hand."""

from datetime import UTC, datetime

from recommender.engine.autoscaler.plan import BLOCKED, JOINT, RUNS_AFTER_SCALE_UP
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.evaluate.report import planned_size
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_group, make_node, make_pod
from topology.model.hardware import AutoscalerRef, Cluster

AT = datetime(2026, 12, 2, tzinfo=UTC)


# 16Gi machines (L4 GPUs named after the node, when it has some), ml pods of 1Gi
MACHINE = (
    make_node()
    .allocatable(memory="16Gi", pods=110)
    .gpus(0, "L4", gpu_name="{node}-gpu-{i}", device_name="gpu-{i}")
)
ML_POD = make_pod(namespace="ml").requests(memory="1Gi")
GROUP = make_group("g", MACHINE.build()).price(2.0)  # template and max size said by each test


def upcoming(target: int) -> AutoscalerRef:
    """cluster-autoscaler's target size of g: nodes asked for, not yet registered."""
    return AutoscalerRef("cluster-autoscaler", "g", target_size=target)


def joint(cluster: Cluster):  # type: ignore[no-untyped-def]
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    return scale_up(cluster, pending, state=state, mode=JOINT, at=AT)


def test_a_pod_that_fits_a_requested_node_buys_nothing() -> None:
    # g asked for 1 node (target 1, none registered): a 4-cpu template copy is coming;
    # the 2-cpu pod fits it, so nothing is bought, and it runs once that node registers
    cluster = Cluster(
        "c",
        pods=(ML_POD.named("p").requests(2).build(),),
        node_groups=(
            GROUP.template(MACHINE.named("t").allocatable(4).build())
            .max_size(5)
            .autoscaler(upcoming(1))
            .build(),
        ),
    )
    plan = joint(cluster)
    outcome = plan.outcomes["ml/p"]
    assert plan.additions == ()
    assert plan.cost_per_hour == 0
    assert outcome.verdict == RUNS_AFTER_SCALE_UP
    assert outcome.add_nodes == {}
    assert outcome.schedulable_after
    assert outcome.reasons[0] == "runs on the node(s) group g is already adding"


def test_the_group_room_is_max_size_minus_target_size() -> None:
    # max 3, target 2, none registered: 2 upcoming 4-cpu nodes, room 3 - 2 = 1.
    # Pods of 3 cpu, one per node: p0, p1 take the upcoming nodes, p2 gets the one
    # node left to buy (2/h), p3 is blocked. Counting from registered (room 3, no
    # upcoming node) would have bought 3 nodes for p0..p2.
    pods = tuple(ML_POD.named(f"p{i}").requests(3).build() for i in range(4))
    cluster = Cluster(
        "c",
        pods=pods,
        node_groups=(
            GROUP.template(MACHINE.named("t").allocatable(4).build())
            .max_size(3)
            .autoscaler(upcoming(2))
            .build(),
        ),
    )
    plan = joint(cluster)
    assert [(a.node_group, a.count) for a in plan.additions] == [("g", 1)]
    assert plan.cost_per_hour == 2.0
    verdicts = {k: (o.verdict, o.add_nodes) for k, o in plan.outcomes.items()}
    assert verdicts["ml/p0"] == (RUNS_AFTER_SCALE_UP, {})
    assert verdicts["ml/p1"] == (RUNS_AFTER_SCALE_UP, {})
    assert verdicts["ml/p2"] == (RUNS_AFTER_SCALE_UP, {"g": 1})
    assert verdicts["ml/p3"][0] == BLOCKED


def test_a_gpu_member_not_yet_advertising_gpus_is_upcoming() -> None:
    # member m1 of the 1-GPU group advertises no GPU yet (device plugin not up):
    # gpu_processor.go counts it as coming; its template copy takes the 1-GPU pod,
    # so nothing is bought (max 1 is reached by m1 anyway)
    member = MACHINE.named("m1").allocatable(8).group("g").build()
    g = (
        GROUP.template(MACHINE.named("t").allocatable(8).gpus(1).build())
        .max_size(1)
        .current_size(1)
        .build()
    )
    cluster = Cluster(
        "c",
        nodes=(member,),
        pods=(ML_POD.named("p").requests(2).gpus(1).build(),),
        node_groups=(g,),
    )
    plan = joint(cluster)
    assert plan.additions == ()
    assert plan.outcomes["ml/p"].verdict == RUNS_AFTER_SCALE_UP
    assert plan.outcomes["ml/p"].add_nodes == {}


def test_the_size_patch_starts_from_the_target_size() -> None:
    # same cluster as above: g has 0 registered, target 2, and the joint plan buys 1
    # beyond the 2 coming; a patch from the registered count (0 + 1) would lower the
    # wanted size below the nodes already requested: it must say 2 + 1 = 3
    pods = tuple(ML_POD.named(f"p{i}").requests(3).build() for i in range(4))
    cluster = Cluster(
        "c",
        pods=pods,
        node_groups=(
            GROUP.template(MACHINE.named("t").allocatable(4).build())
            .max_size(3)
            .autoscaler(upcoming(2))
            .build(),
        ),
    )
    evaluation = evaluate(cluster, at=AT)
    (rec,) = evaluation.recommendations
    assert planned_size(rec, evaluation) == (2, 3)
    (total,) = evaluation.group_totals
    assert (total.current_size, total.add_nodes) == (2, 1)
    # a cluster-autoscaler group: no capacityweb.io NodeGroup patch (the cluster has none)
    assert total.patch is None
