"""Placement: Filter → Score → Bind on small hand-built clusters (no Django)."""

from recommender.engine.scheduler.placement import PlacementOptions, place, place_one
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import (
    Cluster,
    Device,
    Gang,
    Gpu,
    GpuRequest,
    Node,
    Pod,
    Resources,
    Topology,
    TopologyLevel,
)

GIB = 1024**3
BLOCK = "cloud.google.com/gce-topology-block"
TOPOLOGY = Topology(
    (TopologyLevel(BLOCK, "block"), TopologyLevel("kubernetes.io/hostname", "host"))
)


def gpu_node(name: str, gpus: int = 8, model: str = "H100", block: str = "b1") -> Node:
    gpu_list = tuple(Gpu(f"gpu-{i}", model=model) for i in range(gpus))
    devices = tuple(
        Device(
            f"gpu-{i}", gpu=f"gpu-{i}", model=model, capacity={"gpu_milli": 1000}, shareable=True
        )
        for i in range(gpus)
    )
    return Node(
        name=name,
        labels={BLOCK: block, "kubernetes.io/hostname": name},
        allocatable=Resources(cpu_milli=64_000, memory_bytes=512 * GIB, pods=110),
        gpus=gpu_list,
        devices=devices,
    )


def gpu_pod(name: str, gpus: int = 1, milli: int = 1000, **extra: object) -> Pod:
    return Pod(
        namespace="team-a",
        name=name,
        requests=Resources(cpu_milli=1000, memory_bytes=GIB, pods=1),
        gpu=GpuRequest(count=gpus, milli_per_gpu=milli),
        **extra,  # type: ignore[arg-type]
    )


def gang_cluster(members: int, gpus_each: int, free_b1: int = 8, free_b2: int = 8) -> Cluster:
    nodes = (gpu_node("n1", free_b1, block="b1"), gpu_node("n2", free_b2, block="b2"))
    pods = tuple(
        gpu_pod(f"w-{i}", gpus_each, gang="team-a/job", required_topology=BLOCK)
        for i in range(members)
    )
    gang = Gang("team-a", "job", min_member=members, required_topology=BLOCK)
    return Cluster("c", topology=TOPOLOGY, nodes=nodes, pods=pods, gangs=(gang,))


def test_it_places_a_whole_gpu_pod_on_untouched_gpus() -> None:
    cluster = Cluster("c", nodes=(gpu_node("n1"),), pods=(gpu_pod("p", gpus=2),))
    result = place(cluster, pending_workloads(cluster))
    binding = result.outcomes[0].bindings[0]
    assert (binding.node, binding.devices, binding.gpu_milli) == ("n1", ("gpu-0", "gpu-1"), 2000)
    assert result.state.free_gpus("n1") == 6


def test_it_shares_one_gpu_between_two_fractional_pods() -> None:
    pods = (gpu_pod("a", milli=500), gpu_pod("b", milli=500))
    cluster = Cluster("c", nodes=(gpu_node("n1", gpus=1),), pods=pods)
    result = place(cluster, pending_workloads(cluster))
    assert all(o.placed for o in result.outcomes)
    assert result.state.gpu_cells("n1")[0].allocated_milli == 1000


def test_it_never_mutates_the_state_passed_in() -> None:
    cluster = Cluster("c", nodes=(gpu_node("n1"),), pods=(gpu_pod("p", gpus=8),))
    state = ClusterState.from_cluster(cluster)
    result = place(cluster, pending_workloads(cluster), state=state)
    assert (state.free_gpus("n1"), result.state.free_gpus("n1")) == (8, 0)


def test_it_isolates_copies_from_each_other() -> None:
    cluster = Cluster("c", nodes=(gpu_node("n1"),), pods=(gpu_pod("p", gpus=3),))
    state = ClusterState.from_cluster(cluster)
    copy = state.copy()
    place_one(cluster, pending_workloads(cluster)[0], copy, PlacementOptions())
    assert (state.free_gpus("n1"), copy.free_gpus("n1")) == (8, 5)


def test_it_puts_a_topology_required_gang_inside_one_block() -> None:
    cluster = gang_cluster(members=3, gpus_each=4, free_b1=8, free_b2=8)
    cluster = Cluster(
        "c",
        topology=TOPOLOGY,
        nodes=(*cluster.nodes, gpu_node("n3", 8, block="b2")),
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
    nodes = tuple(gpu_node(f"n{i}", gpus=2) for i in range(6))
    pods = tuple(gpu_pod(f"p{i}", milli=300 + 50 * i) for i in range(10))
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
        nodes=(*gang.nodes, gpu_node("n3", 8, block="b2")),
        pods=gang.pods,
        gangs=gang.gangs,
    )
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.placed
    assert {b.node for b in outcome.bindings} <= {"n2", "n3"}


def test_it_pulls_members_of_a_gang_without_topology_constraint_together() -> None:
    # node order interleaves the blocks: a1 (b1), c1 (b2), a2 (b1), c2 (b2)
    nodes = tuple(
        gpu_node(name, block=block)
        for name, block in (("a1", "b1"), ("c1", "b2"), ("a2", "b1"), ("c2", "b2"))
    )
    pods = tuple(gpu_pod(f"w-{i}", 8, gang="team-a/job") for i in range(2))
    gang = Gang("team-a", "job", min_member=2)
    cluster = Cluster("c", topology=TOPOLOGY, nodes=nodes, pods=pods, gangs=(gang,))
    options = PlacementOptions(policy="most_allocated")
    result = place(cluster, pending_workloads(cluster), options=options)
    assert [b.node for b in result.outcomes[0].bindings] == ["a1", "a2"]
