"""Placement: Filter → Score → Bind on small hand-built clusters (no Django)."""

from recommender.engine.scheduler.placement import PlacementOptions, place, place_one
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_gang, make_node, make_pod
from topology.model.hardware import Cluster, Topology, TopologyLevel

BLOCK = "cloud.google.com/gce-topology-block"
TOPOLOGY = Topology(
    (TopologyLevel(BLOCK, "block"), TopologyLevel("kubernetes.io/hostname", "host"))
)


# an 8-GPU H100 node of block b1 whose GPUs take shares; a team-a pod of one GPU
H100 = (
    make_node()
    .allocatable(64, "512Gi", 110)
    .label(BLOCK, "b1")
    .hostname()
    .gpus(8, "H100", shareable=True)
)
TEAM_A_POD = make_pod(namespace="team-a").requests(1, "1Gi").gpus(1)


def gang_cluster(members: int, gpus_each: int, free_b1: int = 8, free_b2: int = 8) -> Cluster:
    nodes = (
        H100.named("n1").gpus(free_b1).build(),
        H100.named("n2").label(BLOCK, "b2").gpus(free_b2).build(),
    )
    pods = tuple(
        TEAM_A_POD.named(f"w-{i}")
        .gpus(gpus_each)
        .gang("team-a/job")
        .required_topology(BLOCK)
        .build()
        for i in range(members)
    )
    gang = make_gang("job", members, "team-a").required(BLOCK).build()
    return Cluster("c", topology=TOPOLOGY, nodes=nodes, pods=pods, gangs=(gang,))


def test_it_places_a_whole_gpu_pod_on_untouched_gpus() -> None:
    cluster = Cluster(
        "c", nodes=(H100.named("n1").build(),), pods=(TEAM_A_POD.named("p").gpus(2).build(),)
    )
    result = place(cluster, pending_workloads(cluster))
    binding = result.outcomes[0].bindings[0]
    assert (binding.node, binding.devices, binding.gpu_milli) == ("n1", ("gpu-0", "gpu-1"), 2000)
    assert result.state.free_gpus("n1") == 6


def test_it_shares_one_gpu_between_two_fractional_pods() -> None:
    pods = (TEAM_A_POD.named("a").gpus(1, 500).build(), TEAM_A_POD.named("b").gpus(1, 500).build())
    cluster = Cluster("c", nodes=(H100.named("n1").gpus(1).build(),), pods=pods)
    result = place(cluster, pending_workloads(cluster))
    assert all(o.placed for o in result.outcomes)
    assert result.state.gpu_cells("n1")[0].allocated_milli == 1000


def test_it_never_mutates_the_state_passed_in() -> None:
    cluster = Cluster(
        "c", nodes=(H100.named("n1").build(),), pods=(TEAM_A_POD.named("p").gpus(8).build(),)
    )
    state = ClusterState.from_cluster(cluster)
    result = place(cluster, pending_workloads(cluster), state=state)
    assert (state.free_gpus("n1"), result.state.free_gpus("n1")) == (8, 0)


def test_it_isolates_copies_from_each_other() -> None:
    cluster = Cluster(
        "c", nodes=(H100.named("n1").build(),), pods=(TEAM_A_POD.named("p").gpus(3).build(),)
    )
    state = ClusterState.from_cluster(cluster)
    copy = state.copy()
    place_one(cluster, pending_workloads(cluster)[0], copy, PlacementOptions())
    assert (state.free_gpus("n1"), copy.free_gpus("n1")) == (8, 5)


def test_it_puts_a_topology_required_gang_inside_one_block() -> None:
    cluster = gang_cluster(members=3, gpus_each=4, free_b1=8, free_b2=8)
    cluster = Cluster(
        "c",
        topology=TOPOLOGY,
        nodes=(*cluster.nodes, H100.named("n3").label(BLOCK, "b2").build()),
        pods=cluster.pods,
        gangs=cluster.gangs,
    )
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.placed
    assert {b.node for b in outcome.bindings} <= {"n2", "n3"}


def test_it_leaves_no_partial_gang_when_the_block_is_too_small() -> None:
    cluster = gang_cluster(members=3, gpus_each=4)
    state = ClusterState.from_cluster(cluster)
    outcome = place_one(cluster, pending_workloads(cluster)[0], state, PlacementOptions())
    assert not outcome.placed
    assert (state.free_gpus("n1"), state.free_gpus("n2")) == (8, 8)


def test_it_explains_a_gang_too_big_for_any_block() -> None:
    cluster = gang_cluster(members=3, gpus_each=4)
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.gang_reason == "needs 12 GPUs in one block; the best block has 8 free"


def test_it_is_deterministic_for_one_seed() -> None:
    nodes = tuple(H100.named(f"n{i}").gpus(2).build() for i in range(6))
    pods = tuple(TEAM_A_POD.named(f"p{i}").gpus(1, 300 + 50 * i).build() for i in range(10))
    cluster = Cluster("c", nodes=nodes, pods=pods)
    runs = [
        place(
            cluster, pending_workloads(cluster), options=PlacementOptions(policy="random", seed=7)
        )
        for _ in range(2)
    ]
    assert runs[0].outcomes == runs[1].outcomes


def test_it_forms_block_domains_on_nodes_that_lack_an_outer_level_label() -> None:
    # The default topology starts at region; these nodes carry only block and hostname
    # labels, as many real clusters do. 3 members × 4 GPUs = 12 GPUs fit only in b2
    # (n2 + n3 = 16 free), never across b1 (8) and b2.
    gang = gang_cluster(members=3, gpus_each=4)
    cluster = Cluster(
        "c",
        topology=Topology.default(),
        nodes=(*gang.nodes, H100.named("n3").label(BLOCK, "b2").build()),
        pods=gang.pods,
        gangs=gang.gangs,
    )
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.placed
    assert {b.node for b in outcome.bindings} <= {"n2", "n3"}


def test_it_pulls_members_of_a_gang_without_topology_constraint_together() -> None:
    # node order interleaves the blocks: a1 (b1), c1 (b2), a2 (b1), c2 (b2)
    nodes = tuple(
        H100.named(name).label(BLOCK, block).build()
        for name, block in (("a1", "b1"), ("c1", "b2"), ("a2", "b1"), ("c2", "b2"))
    )
    pods = tuple(TEAM_A_POD.named(f"w-{i}").gpus(8).gang("team-a/job").build() for i in range(2))
    gang = make_gang("job", 2, "team-a").build()
    cluster = Cluster("c", topology=TOPOLOGY, nodes=nodes, pods=pods, gangs=(gang,))
    options = PlacementOptions(policy="most_allocated")
    result = place(cluster, pending_workloads(cluster), options=options)
    assert [b.node for b in result.outcomes[0].bindings] == ["a1", "a2"]
