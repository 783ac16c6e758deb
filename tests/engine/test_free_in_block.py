"""One definition of "free in a block": whole GPUs nothing holds, in every reason.

Worked by hand: block b1's one 8-GPU node runs a 0.5-GPU pod (7 whole GPUs free,
7.5 GPUs of free share); block b2's runs three 0.6-GPU pods, one per GPU as no two fit
one GPU (5 whole free, 6.2 of free share). A gang of 3 x 4 GPUs needs 12 in one block:
the best block has 7 free GPUs (the workload page's per-block table counts the same 7),
never 7.50. With a group that may add one 8-GPU node to b1, a gang of 3 x 8 GPUs
reaches 7 + 8 = 15 whole GPUs there, never 15.50.
"""

from datetime import UTC, datetime

from recommender.engine.autoscaler.plan import BLOCKED, JOINT
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.scheduler.breakdown import all_breakdowns
from recommender.engine.scheduler.breakdown_summary import summarise
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_gang, make_group, make_reservation
from tests.engine.test_placement import BLOCK, H100, TEAM_A_POD, gang_cluster
from topology.model.hardware import Cluster, NodeGroup

AT = datetime(2026, 12, 1, tzinfo=UTC)


def _cluster_with_shares(gpus_each: int = 4, groups: tuple[NodeGroup, ...] = ()) -> Cluster:
    cluster = gang_cluster(members=3, gpus_each=gpus_each)
    bound = (
        TEAM_A_POD.named("s-0").gpus(1, 500).on("n1").build(),
        *(TEAM_A_POD.named(f"t-{i}").gpus(1, 600).on("n2").build() for i in range(3)),
    )
    return Cluster(
        "c",
        topology=cluster.topology,
        nodes=cluster.nodes,
        pods=(*bound, *cluster.pods),
        gangs=cluster.gangs,
        node_groups=groups,
    )


# may add one 8-GPU node (whole GPUs, never shared) to block b1
B1_GROUP = (
    make_group("h100", H100.named("template").gpus(8, shareable=False).build())
    .selector({"pool": "h100"})
    .size(0, 4)
    .price(10.0)
    .placement({BLOCK: "b1"}, max_new_nodes=1)
    .build()
)


def test_it_says_the_best_block_in_whole_free_gpus() -> None:
    cluster = _cluster_with_shares()
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.gang_reason == "needs 12 GPUs in one block; the best block has 7 free"


def test_it_counts_the_same_free_gpus_as_the_state_per_block() -> None:
    cluster = _cluster_with_shares()
    state = ClusterState.from_cluster(cluster)
    per_block = {
        block: sum(state.free_gpus(n.name) for n in cluster.nodes if n.labels[BLOCK] == block)
        for block in ("b1", "b2")
    }
    assert per_block == {"b1": 7, "b2": 5}


def test_it_says_the_largest_block_at_max_size_in_whole_free_gpus() -> None:
    cluster = _cluster_with_shares(gpus_each=8, groups=(B1_GROUP,))
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    plan = scale_up(cluster, pending, state=state, mode=JOINT, at=AT).outcomes["team-a/job"]
    assert plan.verdict == BLOCKED
    assert plan.reasons == ("needs 24 GPUs in one block; the largest block reaches 15 at max size",)


def _cluster_with_reservation(namespace: str) -> Cluster:
    """b1: n1 (8 free) and n3 (8 idle GPUs team-c reserves); b2: n2 (4 free). A gang of
    ``namespace`` asks 3 x 8 GPUs in one block."""
    cluster = gang_cluster(members=3, gpus_each=8, free_b2=4)
    gang = make_gang("job", 3, namespace).required(BLOCK).build()
    pods = tuple(
        TEAM_A_POD.named(f"w-{i}")
        .namespace(namespace)
        .gpus(8)
        .gang(f"{namespace}/job")
        .required_topology(BLOCK)
        .build()
        for i in range(3)
    )
    reserved = H100.named("n3").gpus(8).build()
    return Cluster(
        "c",
        topology=cluster.topology,
        nodes=(*cluster.nodes, reserved),
        pods=pods,
        gangs=(gang,),
        reservations=(make_reservation("team-c-res", "team-c").nodes("n3").build(),),
    )


def test_it_counts_no_gpu_of_another_teams_reservation_as_free() -> None:
    # the topology chart's b1: 8 free + 8 idle reserved; free to team-a: 8
    cluster = _cluster_with_reservation("team-a")
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.gang_reason == "needs 24 GPUs in one block; the best block has 8 free"
    breakdown = all_breakdowns(cluster, at=AT)["team-a/job"]
    assert {d.name: d.free_gpus for d in summarise(breakdown, 10).domains} == {"b1": 8, "b2": 4}


def test_it_counts_the_owners_own_idle_reservation_as_free_to_them() -> None:
    cluster = _cluster_with_reservation("team-c")
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.gang_reason == "needs 24 GPUs in one block; the best block has 16 free"
