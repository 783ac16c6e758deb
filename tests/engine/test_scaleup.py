"""scale_up: naive and joint over small hand-built clusters."""

from datetime import UTC, datetime

from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import (
    Cluster,
    Device,
    Gpu,
    GpuRequest,
    Node,
    NodeGroup,
    Pod,
    Resources,
)

AT = datetime(2026, 12, 2, tzinfo=UTC)


def template(name: str, gpus: int, model: str) -> Node:
    return Node(
        name=name,
        labels={"nvidia.com/gpu.product": model},
        allocatable=Resources(cpu_milli=96_000, memory_bytes=2**40, pods=110),
        gpus=tuple(Gpu(f"gpu-{i}", model=model) for i in range(gpus)),
        devices=tuple(
            Device(f"gpu-{i}", gpu=f"gpu-{i}", model=model, capacity={"gpu_milli": 1000})
            for i in range(gpus)
        ),
    )


def group(name: str, gpus: int, price: float, max_size: int = 4) -> NodeGroup:
    return NodeGroup(name, {}, 0, max_size, price, template=template(f"{name}-t", gpus, "H100"))


def pending(name: str, gpus: int, priority: int = 0) -> Pod:
    requests = Resources(cpu_milli=1000, pods=1)
    return Pod("ml", name, requests=requests, gpu=GpuRequest(gpus), priority=priority)


def plan(cluster: Cluster, mode: str):  # type: ignore[no-untyped-def]
    state = ClusterState.from_cluster(cluster)
    return scale_up(cluster, pending_workloads(cluster), state=state, mode=mode, at=AT)


def test_it_takes_the_cheapest_group_under_which_the_pod_runs() -> None:
    cluster = Cluster(
        "c", pods=(pending("p", 4),), node_groups=(group("big", 8, 80.0), group("small", 4, 30.0))
    )
    joint = plan(cluster, "joint")
    # small: 1 node x 30 = 30/h < big: 1 x 80
    assert joint.outcomes["ml/p"].add_nodes == {"small": 1}
    assert joint.cost_per_hour == 30.0


def test_it_carries_state_so_the_second_workload_reuses_the_first_ones_node() -> None:
    pods = (pending("first", 4, priority=10), pending("second", 4))
    cluster = Cluster("c", pods=pods, node_groups=(group("big", 8, 80.0),))
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
    pods = tuple(pending(f"p{i}", 8) for i in range(3))
    cluster = Cluster("c", pods=pods, node_groups=(group("big", 8, 80.0, max_size=2),))
    naive = plan(cluster, "naive")
    # 3 pods x 8 GPUs, one per node, max 2 nodes: the third gets a reason, not a node
    assert len([a for a in naive.additions]) == 2
    assert naive.outcomes["ml/p2"].reasons == ("pod p2: max size 2 reached for node group big",)


def test_it_leaves_the_given_state_untouched() -> None:
    cluster = Cluster("c", pods=(pending("p", 4),), node_groups=(group("big", 8, 80.0),))
    state = ClusterState.from_cluster(cluster)
    scale_up(cluster, pending_workloads(cluster), state=state, mode="joint", at=AT)
    scale_up(cluster, pending_workloads(cluster), state=state, mode="naive", at=AT)
    assert state.node_names() == ()


def test_it_says_why_nothing_helps_when_no_template_is_big_enough() -> None:
    cluster = Cluster("c", pods=(pending("p", 16),), node_groups=(group("big", 8, 80.0),))
    joint = plan(cluster, "joint")
    outcome = joint.outcomes["ml/p"]
    assert outcome.verdict == "blocked"
    assert outcome.reasons[0].startswith("no node group can host its pods: big: ")
