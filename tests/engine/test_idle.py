"""Idle reserved accounting: counts at an instant, GPU-hours over a window."""

from datetime import UTC, datetime, timedelta

from recommender.engine.scheduler.state import ClusterState
from reservations.idle import idle_gpu_hours, idle_reserved_gpus
from topology.model.hardware import (
    Cluster,
    Device,
    Gpu,
    GpuRequest,
    Node,
    NodeGroup,
    Pod,
    Reservation,
    ReservedNodeGroupCapacity,
    Resources,
)

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def gpu_node(name: str, gpus: int, labels: dict[str, str] | None = None) -> Node:
    return Node(
        name=name,
        labels=labels or {},
        allocatable=Resources(cpu_milli=64_000, memory_bytes=2**38, pods=110),
        gpus=tuple(Gpu(f"gpu-{i}") for i in range(gpus)),
        devices=tuple(
            Device(f"gpu-{i}", gpu=f"gpu-{i}", capacity={"gpu_milli": 1000}) for i in range(gpus)
        ),
    )


def bound(name: str, node: str, gpus: int) -> Pod:
    return Pod("team-a", name, requests=Resources(pods=1), gpu=GpuRequest(gpus), node_name=node)


def test_it_counts_reserved_gpus_no_pod_holds() -> None:
    reservation = Reservation("r", ("team-a",), node_names=("n1", "n2"), start=T0)
    cluster = Cluster(
        "c",
        nodes=(gpu_node("n1", 8), gpu_node("n2", 8), gpu_node("n3", 8)),
        pods=(bound("p", "n1", 3),),
        reservations=(reservation,),
    )
    state = ClusterState.from_cluster(cluster)
    # reserved: n1 + n2 = 16 GPUs; idle: 16 - 3 held on n1 = 13 (n3 is not reserved)
    assert idle_reserved_gpus(cluster, state, T0) == {"r": (16, 13)}


def test_it_selects_reserved_nodes_by_label() -> None:
    reservation = Reservation("r", ("team-a",), node_selector={"team": "a"})
    cluster = Cluster(
        "c",
        nodes=(gpu_node("n1", 4, {"team": "a"}), gpu_node("n2", 4, {"team": "b"})),
        reservations=(reservation,),
    )
    # only n1 carries team=a: 4 reserved, 4 idle
    assert idle_reserved_gpus(cluster, ClusterState.from_cluster(cluster), T0) == {"r": (4, 4)}


def test_it_counts_paid_unprovisioned_nodes_as_idle() -> None:
    group = NodeGroup("h100", {}, 0, 4, 80.0, template=gpu_node("t", 8))
    reservation = Reservation("paid", ("team-a",), node_group=ReservedNodeGroupCapacity("h100", 2))
    cluster = Cluster("c", node_groups=(group,), reservations=(reservation,))
    # 2 paid nodes x 8 GPUs = 16 reserved, none started: 16 idle
    assert idle_reserved_gpus(cluster, ClusterState.from_cluster(cluster), T0) == {"paid": (16, 16)}


def test_it_skips_reservations_outside_their_window() -> None:
    later = Reservation("r", ("team-a",), node_names=("n1",), start=T0 + timedelta(days=1))
    cluster = Cluster("c", nodes=(gpu_node("n1", 8),), reservations=(later,))
    assert idle_reserved_gpus(cluster, ClusterState.from_cluster(cluster), T0) == {}


def test_it_integrates_idle_gpus_as_a_right_open_step_function() -> None:
    samples = [(T0, 4), (T0 + timedelta(hours=2), 1), (T0 + timedelta(hours=3), 0)]
    # 4 GPUs x 2 h + 1 GPU x 1 h + 0 x 1 h = 9 GPU-hours over [T0, T0+4h)
    assert idle_gpu_hours(samples, T0, T0 + timedelta(hours=4)) == 9.0


def test_it_counts_nothing_before_the_first_sample_and_clips_to_the_window() -> None:
    samples = [(T0 + timedelta(hours=1), 2)]
    # unknown over [T0, T0+1h); then 2 GPUs for 30 min until the window ends = 1 GPU-hour
    assert idle_gpu_hours(samples, T0, T0 + timedelta(minutes=90)) == 1.0


def test_it_gives_zero_for_an_empty_window() -> None:
    assert idle_gpu_hours([(T0, 8)], T0, T0) == 0.0
