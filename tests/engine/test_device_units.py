"""Device-plugin counting: MIG-single instances and time-slicing/MPS replicas are
units of ``nvidia.com/gpu`` that kube-scheduler only counts, drawn on their
physical GPUs; GPU arithmetic weighs demand by the least physical GPU it takes.

Expectations are worked out from the counts (NodeResourcesFit compares
requested with allocatable) and from the NVIDIA device plugin's own allocation
tests (``internal/rm/allocate_test.go``, TestDistributedAlloc), not from what
the engine prints.
"""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.evaluate.fragmentation import node_fragmentation, task_mix
from recommender.engine.evaluate.heatmap import heatmap_cells
from recommender.engine.scheduler.demand import GpuDemandFloor, advertised_gpus
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_pod
from topology.charts import hover_text
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import (
    GPU_RESOURCE,
    Cluster,
    Gang,
    Node,
    NodeGroup,
    NodePlacement,
    Topology,
    TopologyLevel,
)

AT = datetime(2026, 12, 2, tzinfo=UTC)
BLOCK = "cloud.google.com/gce-topology-block"
T4_SHARED = {
    "nvidia.com/gpu.product": "Tesla-T4-SHARED",
    "nvidia.com/gpu.sharing-strategy": "time-slicing",
}


def plugin_node(name: str, labels: dict[str, str], advertised: int) -> Node:
    """A node as the kube parser builds it from GFD labels and allocatable."""
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {
            "allocatable": {
                "cpu": "64",
                "memory": "256Gi",
                "pods": "110",
                GPU_RESOURCE: str(advertised),
            }
        },
    }
    (node,) = parse_objects([("test", obj)], cluster_name="t").cluster.nodes
    return node


def time_sliced(name: str, physical: int, replicas: int, **labels: str) -> Node:
    gfd = {**T4_SHARED, "nvidia.com/gpu.replicas": str(replicas), **labels}
    return plugin_node(name, gfd, physical * replicas)


ONE_GPU = make_pod(namespace="ns").requests("100m").gpus(1)


def per_gpu_units(state: ClusterState, node: str) -> dict[str, int]:
    return {cell.gpu: len(cell.pods) for cell in state.gpu_cells(node)}


def test_it_runs_as_many_one_gpu_pods_as_the_node_advertises_replicas() -> None:
    # issue 18: 2 physical T4, replicas 4, allocatable 8 -> all 8 one-GPU pods run
    node = time_sliced("t4", physical=2, replicas=4)
    pods = tuple(ONE_GPU.named(f"p{i}").build() for i in range(9))
    cluster = Cluster("c", nodes=(node,), pods=pods)
    result = place(cluster, pending_workloads(cluster))
    placed = [o.workload for o in result.outcomes if o.placed]
    assert placed == [f"ns/p{i}" for i in range(8)]
    last = result.outcomes[-1].diagnosis
    assert last is not None and "Insufficient nvidia.com/gpu" in last.summary


def test_it_draws_time_sliced_pods_as_shares_of_the_two_physical_gpus() -> None:
    node = time_sliced("t4", physical=2, replicas=4)
    cluster = Cluster(
        "c", nodes=(node,), pods=tuple(ONE_GPU.named(f"p{i}").build() for i in range(8))
    )
    state = place(cluster, pending_workloads(cluster)).state
    cells = state.gpu_cells("t4")
    assert [c.gpu for c in cells] == ["gpu-0", "gpu-1"]
    assert [c.allocated_milli for c in cells] == [1000, 1000]  # 4 replicas x 250 each
    assert [len(c.pods) for c in cells] == [4, 4]


@pytest.mark.parametrize(
    ("physical", "replicas", "size", "per_gpu"),
    [
        # TestDistributedAlloc cases (k8s-device-plugin internal/rm/allocate_test.go)
        (2, 4, 2, {"gpu-0": 1, "gpu-1": 1}),  # "2 GPUs, 4 replicas each, allocate 2"
        (3, 2, 3, {"gpu-0": 1, "gpu-1": 1, "gpu-2": 1}),  # "3 GPUs, 2 replicas, allocate 3"
        (2, 4, 4, {"gpu-0": 2, "gpu-1": 2}),  # "2 GPUs, 4 replicas each, allocate 4"
        (1, 4, 1, {"gpu-0": 1}),  # "allocate 1 from single GPU"
    ],
)
def test_it_spreads_one_pods_replicas_over_gpus_as_the_distributed_policy_does(
    physical: int, replicas: int, size: int, per_gpu: dict[str, int]
) -> None:
    node = time_sliced("n", physical=physical, replicas=replicas)
    cluster = Cluster("c", nodes=(node,), pods=(ONE_GPU.named("p").gpus(size).build(),))
    state = place(cluster, pending_workloads(cluster)).state
    taken = {g: n for g, n in per_gpu_units(state, "n").items() if n}
    assert taken == per_gpu


def test_it_refuses_more_replicas_than_advertised() -> None:
    # TestDistributedAlloc "not enough devices": 1 GPU x 2 replicas, allocate 5
    node = time_sliced("n", physical=1, replicas=2)
    cluster = Cluster("c", nodes=(node,), pods=(ONE_GPU.named("p").gpus(5).build(),))
    (outcome,) = place(cluster, pending_workloads(cluster)).outcomes
    assert not outcome.placed


def test_it_puts_the_next_replicas_on_the_gpu_with_fewer_taken() -> None:
    # TestDistributedAlloc_PartiallyAllocated: one GPU already holds a replica; a
    # 2-replica pod takes one from the other GPU first, then one from each in turn
    node = time_sliced("n", physical=2, replicas=2)
    cluster = Cluster(
        "c",
        nodes=(node,),
        pods=(ONE_GPU.named("running").on("n").build(), ONE_GPU.named("p").gpus(2).build()),
    )
    state = ClusterState.from_cluster(cluster)
    assert per_gpu_units(state, "n") == {"gpu-0": 1, "gpu-1": 0}
    after = place(cluster, pending_workloads(cluster), state=state).state
    assert per_gpu_units(after, "n") == {"gpu-0": 2, "gpu-1": 1}


def test_it_counts_mig_single_instances_as_nvidia_gpu() -> None:
    # issue 18: nvidia.com/gpu 7 of product ...-MIG-1g.5gb; one pod asking 1 runs
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb",
    }
    node = plugin_node("mig", labels, 7)
    pods = tuple(ONE_GPU.named(f"p{i}").build() for i in range(8))
    cluster = Cluster("c", nodes=(node,), pods=pods)
    result = place(cluster, pending_workloads(cluster))
    assert [o.placed for o in result.outcomes] == [True] * 7 + [False]
    (cell,) = result.state.gpu_cells("mig")  # one physical A100, seven instances on it
    assert cell.profiles == ("1g.5gb",) * 7
    assert cell.allocated_milli == 1000
    diagnosis = result.outcomes[-1].diagnosis
    assert diagnosis is not None and "Insufficient nvidia.com/gpu" in diagnosis.summary


def test_it_holds_a_mig_single_instance_as_a_slice_not_a_whole_gpu() -> None:
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-3g.20gb",
    }
    node = plugin_node("mig", labels, 4)  # 2 instances per A100 -> 2 GPUs
    cluster = Cluster("c", nodes=(node,), pods=(ONE_GPU.named("p").build(),))
    state = place(cluster, pending_workloads(cluster)).state
    assert [c.allocated_milli for c in state.gpu_cells("mig")] == [500, 0]
    # a pod wanting 30 GB of GPU memory does not fit a 20 GB slice
    big = ONE_GPU.named("big").gpus(1, memory=30 * 2**30).build()
    cluster = Cluster("c", nodes=(node,), pods=(big,))
    (outcome,) = place(cluster, pending_workloads(cluster)).outcomes
    assert not outcome.placed


def test_the_naive_autoscaler_counts_the_advertised_replicas_of_a_template() -> None:
    # cluster-autoscaler's binpacking reads the template's allocatable nvidia.com/gpu
    template = time_sliced("tpl", physical=2, replicas=4)
    assert template.gpu_count == 2
    assert advertised_gpus(template) == 8


def test_it_weighs_a_gpu_request_by_the_smallest_unit_a_node_it_may_use_offers() -> None:
    whole = plugin_node("whole", {"nvidia.com/gpu.product": "A100", "pool": "a100"}, 2)
    assert (
        GpuDemandFloor(Cluster("c", nodes=(whole,))).pod_milli(ONE_GPU.named("p").gpus(2).build())
        == 2000
    )
    shared = time_sliced("t4", physical=1, replicas=4, pool="t4")
    floor = GpuDemandFloor(Cluster("c", nodes=(whole, shared)))
    assert floor.pod_milli(ONE_GPU.named("any").gpus(2).build()) == 500  # may land on the replicas
    pinned = ONE_GPU.named("pinned").gpus(2).node_selector({"pool": "a100"}).build()
    assert floor.pod_milli(pinned) == 2000  # only whole A100s admit it


def test_it_weighs_a_dra_partition_by_the_counters_it_consumes() -> None:
    # the H100 of tests/scenarios/sharing-dra-partitions-gang: a 1g.10gb takes
    # compute 1 of 7 and 1 of 8 memory slices -> 1/7 of the GPU, rounded down
    path = Path(__file__).parents[1] / "scenarios" / "sharing-dra-partitions-gang.yaml"
    cluster = parse_objects(read_objects(path), cluster_name="t").cluster
    (gang, _extra) = pending_workloads(cluster)
    assert gang.floor_gpu_milli == 7 * 142
    assert gang.gpus == 7  # reported: the devices requested


def test_it_places_a_time_sliced_gang_in_a_block_with_fewer_gpus_than_members() -> None:
    # 8 one-GPU members, required block; block b1 has one node of 2 T4 x 4 replicas.
    # By count (8 <= 8) the gang fits; counting each member as a whole GPU would
    # prune the block ("needs 8 GPUs in one block; the best block has 2 free").
    node = time_sliced("t4", physical=2, replicas=4, **{BLOCK: "b1"})
    gang = Gang("ns", "g", min_member=8, required_topology=BLOCK)
    pods = tuple(ONE_GPU.named(f"m{i}").gang("ns/g").build() for i in range(8))
    cluster = Cluster("c", topology=_blocks(), nodes=(node,), pods=pods, gangs=(gang,))
    (outcome,) = place(cluster, pending_workloads(cluster)).outcomes
    assert outcome.placed and len(outcome.bindings) == 8


def test_it_buys_one_time_sliced_node_for_eight_one_gpu_pods() -> None:
    # a new node advertises 8 replicas: one node, not 8 / 2 physical GPUs = 4
    template = time_sliced("tpl", physical=2, replicas=4, pool="t4")
    group = NodeGroup(
        name="t4",
        node_selector={"pool": "t4"},
        min_size=0,
        max_size=8,
        price_per_node_hour=1.0,
        template=template,
        placements=(NodePlacement(labels={}, max_new_nodes=8),),
    )
    gang = Gang("ns", "g", min_member=8)
    pods = tuple(ONE_GPU.named(f"m{i}").gang("ns/g").build() for i in range(8))
    cluster = Cluster("c", pods=pods, gangs=(gang,), node_groups=(group,))
    (workload,) = evaluate(cluster, at=AT).to_json()["workloads"]
    assert workload["verdict"] == "runs_after_scale_up"
    assert workload["joint"]["addNodes"] == {"t4": 1}
    assert workload["naive"]["addNodes"] == {"t4": 1}


def _blocks() -> Topology:
    return Topology(
        (TopologyLevel(BLOCK, "block"), TopologyLevel("kubernetes.io/hostname", "host"))
    )


def _pod_object(name: str, resource: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {resource: "1"}}}]},
        "status": {"phase": "Pending"},
    }


def _node_object(name: str, labels: dict[str, str], allocatable: dict[str, str]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110", **allocatable}},
    }


def test_it_counts_renamed_replicas_as_nvidia_gpu_shared_units() -> None:
    # sharing.timeSlicing.renameByDefault: the replicas are advertised as
    # nvidia.com/gpu.shared (2 T4 x 4 = 8) and the product keeps its plain name;
    # pods asking nvidia.com/gpu.shared run there 8 at a time, and only there
    shared = _node_object(
        "t4",
        {"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.replicas": "4"},
        {"nvidia.com/gpu.shared": "8"},
    )
    plain = _node_object("a100", {"nvidia.com/gpu.product": "A100"}, {GPU_RESOURCE: "8"})
    pods = [_pod_object(f"p{i}", "nvidia.com/gpu.shared") for i in range(9)]
    snapshot = parse_objects([("test", o) for o in (shared, plain, *pods)], cluster_name="t")
    cluster = snapshot.cluster
    assert [n.gpu_count for n in cluster.nodes] == [2, 8]
    result = place(cluster, pending_workloads(cluster))
    assert {b.node for o in result.outcomes for b in o.bindings} == {"t4"}
    assert [o.placed for o in result.outcomes] == [True] * 8 + [False]
    diagnosis = result.outcomes[-1].diagnosis
    assert diagnosis is not None
    # t4 has 8 of 8 requested, a100 advertises none: both short of the resource
    assert diagnosis.summary == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.shared."
    assert [c.allocated_milli for c in result.state.gpu_cells("t4")] == [1000, 1000]


def test_the_heatmap_draws_physical_gpus_with_their_replicas_in_use() -> None:
    node = time_sliced("t4", physical=2, replicas=4)
    pods = tuple(ONE_GPU.named(f"p{i}").build() for i in range(3))
    cluster = Cluster("c", nodes=(node,), pods=pods)
    state = place(cluster, pending_workloads(cluster)).state
    cells = heatmap_cells(cluster, state)
    # 3 pods spread gpu-0, gpu-1, gpu-0: 2 and 1 of each GPU's 4 replicas
    assert [(c.gpu, c.units, c.allocated_milli) for c in cells] == [
        ("gpu-0", "2/4 replicas", 500),
        ("gpu-1", "1/4 replicas", 250),
    ]
    assert "2/4 replicas" in hover_text(cells[0].to_json(), 0.5)


def test_the_heatmap_adds_no_units_key_for_whole_gpus() -> None:
    node = plugin_node("a100", {"nvidia.com/gpu.product": "A100"}, 2)
    cluster = Cluster("c", nodes=(node,))
    cells = heatmap_cells(cluster, ClusterState.from_cluster(cluster))
    assert all("units" not in c.to_json() for c in cells)


@pytest.mark.parametrize(("gpus_asked", "unusable"), [(1, 0), (7, 0), (8, 1750)])
def test_free_replicas_of_a_partly_used_gpu_are_not_fragmentation(
    gpus_asked: int, unusable: int
) -> None:
    # 2 T4 x 4 replicas, one replica of gpu-0 taken: 7 units free (750 + 1000
    # milli). A task of 1 or 7 GPUs can use them all; one of 8 none of them.
    node = time_sliced("t4", physical=2, replicas=4)
    running = ONE_GPU.named("running").on("t4").build()
    state = ClusterState.from_cluster(Cluster("c", nodes=(node,), pods=(running,)))
    mix = task_mix(
        pending_workloads(Cluster("c", pods=(ONE_GPU.named("p").gpus(gpus_asked).build(),)))
    )
    assert node_fragmentation(state, ["t4"], mix) == {"t4": unusable}


NODE_SHAPES = st.tuples(
    st.integers(min_value=1, max_value=4),  # physical GPUs
    st.sampled_from([1, 2, 3, 4, 7]),  # replicas
)


@settings(max_examples=60, deadline=None)
@given(
    shapes=st.lists(NODE_SHAPES, min_size=1, max_size=3),
    asks=st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=12),
)
def test_placements_on_replica_nodes_always_pass_the_count_from_scratch(
    shapes: list[tuple[int, int]], asks: list[int]
) -> None:
    """Re-checked from scratch as kube-scheduler counts: on every node the GPUs asked
    by the pods placed there stay within what it advertises, each pod's units lie
    on that node, no unit is taken twice, and no physical GPU is drawn over full."""
    nodes = tuple(time_sliced(f"n{i}", p, r) for i, (p, r) in enumerate(shapes))
    pods = tuple(ONE_GPU.named(f"p{i:02d}").gpus(n).build() for i, n in enumerate(asks))
    cluster = Cluster("c", nodes=nodes, pods=pods)
    result = place(cluster, pending_workloads(cluster))
    asked = {p.key: p.gpu_count for p in pods}
    advertised = {n.name: len(n.devices) for n in nodes}
    per_node: dict[str, int] = {}
    taken: list[tuple[str, str]] = []
    for outcome in result.outcomes:
        for binding in outcome.bindings:
            per_node[binding.node] = per_node.get(binding.node, 0) + asked[binding.pod]
            assert len(binding.devices) == asked[binding.pod]
            taken += [(binding.node, d) for d in binding.devices]
    assert all(per_node[n] <= advertised[n] for n in per_node)
    assert len(taken) == len(set(taken))
    for node in nodes:
        names = {d.name for d in node.devices}
        assert {d for n, d in taken if n == node.name} <= names
        assert all(c.allocated_milli <= 1000 for c in result.state.gpu_cells(node.name))
    # and nothing fits that the count would have refused: an unplaced pod asks more
    # than any node had left when its turn came
    left = dict(advertised)
    for outcome, pod in zip(result.outcomes, sorted(pods, key=lambda p: p.key), strict=True):
        if outcome.placed:
            left[outcome.bindings[0].node] -= asked[pod.key]
        else:
            assert all(asked[pod.key] > free for free in left.values())
