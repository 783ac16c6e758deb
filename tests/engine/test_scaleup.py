"""scale_up: naive and joint over small hand-built clusters."""

from datetime import UTC, datetime

from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_group, make_node, make_pod
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 2, tzinfo=UTC)


# a 96-cpu H100 template, an ml pod of one cpu
H100 = (
    make_node().label("nvidia.com/gpu.product", "H100").allocatable(96, "1Ti", 110).gpus(0, "H100")
)
ML_POD = make_pod(namespace="ml").requests(1)
BIG = make_group("big", H100.named("big-t").gpus(8).build()).size(0, 4).price(80.0)
SMALL = make_group("small", H100.named("small-t").gpus(4).build()).size(0, 4).price(30.0)


def plan(cluster: Cluster, mode: str):  # type: ignore[no-untyped-def]
    state = ClusterState.from_cluster(cluster)
    return scale_up(cluster, pending_workloads(cluster), state=state, mode=mode, at=AT)


def test_it_takes_the_cheapest_group_under_which_the_pod_runs() -> None:
    cluster = Cluster(
        "c", pods=(ML_POD.named("p").gpus(4).build(),), node_groups=(BIG.build(), SMALL.build())
    )
    joint = plan(cluster, "joint")
    # small: 1 node x 30 = 30/h < big: 1 x 80
    assert joint.outcomes["ml/p"].add_nodes == {"small": 1}
    assert joint.cost_per_hour == 30.0


def test_it_carries_state_so_the_second_workload_reuses_the_first_ones_node() -> None:
    pods = (
        ML_POD.named("first").gpus(4).priority(10).build(),
        ML_POD.named("second").gpus(4).build(),
    )
    cluster = Cluster("c", pods=pods, node_groups=(BIG.build(),))
    joint = plan(cluster, "joint")
    # first buys one 8-GPU node (4 used), second fits the 4 left on that new node: it runs
    # after the scale-up (not now: the node does not exist yet), buying nothing itself;
    # 1 node in all, serving both
    assert joint.outcomes["ml/first"].add_nodes == {"big": 1}
    assert joint.outcomes["ml/second"].verdict == "runs_after_scale_up"
    assert joint.outcomes["ml/second"].add_nodes == {}
    assert sum(a.count for a in joint.additions) == 1
    assert joint.additions[0].workloads == ("ml/first", "ml/second")


def test_it_never_buys_beyond_max_size_in_naive_mode() -> None:
    pods = tuple(ML_POD.named(f"p{i}").gpus(8).build() for i in range(3))
    cluster = Cluster(
        "c",
        pods=pods,
        node_groups=(
            make_group("big", H100.named("big-t").gpus(8).build()).size(0, 2).price(80.0).build(),
        ),
    )
    naive = plan(cluster, "naive")
    # 3 pods x 8 GPUs, one per node, max 2 nodes: the third gets a reason, not a node
    assert len([a for a in naive.additions]) == 2
    assert naive.outcomes["ml/p2"].reasons == ("pod p2: max size 2 reached for node group big",)


def test_it_leaves_the_given_state_untouched() -> None:
    cluster = Cluster("c", pods=(ML_POD.named("p").gpus(4).build(),), node_groups=(BIG.build(),))
    state = ClusterState.from_cluster(cluster)
    scale_up(cluster, pending_workloads(cluster), state=state, mode="joint", at=AT)
    scale_up(cluster, pending_workloads(cluster), state=state, mode="naive", at=AT)
    assert state.node_names() == ()


def test_it_says_why_nothing_helps_when_no_template_is_big_enough() -> None:
    cluster = Cluster("c", pods=(ML_POD.named("p").gpus(16).build(),), node_groups=(BIG.build(),))
    joint = plan(cluster, "joint")
    outcome = joint.outcomes["ml/p"]
    assert outcome.verdict == "blocked"
    assert outcome.reasons[0].startswith("no node group can host its pods: big: ")
