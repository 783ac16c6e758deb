"""Idle reserved accounting: counts at an instant, GPU-hours over a window."""

from datetime import UTC, datetime, timedelta

from recommender.engine.scheduler.state import ClusterState
from reservations.idle import idle_gpu_hours, idle_reserved_gpus
from tests.builders import make_group, make_node, make_pod, make_reservation
from topology.model.hardware import Cluster

T0 = datetime(2026, 12, 1, tzinfo=UTC)


# 64-cpu nodes of GPUs without a model; team-a pods holding GPUs
GPU_NODE = make_node().allocatable(64, "256Gi", 110)
TEAM_A_POD = make_pod(namespace="team-a")


def test_it_counts_reserved_gpus_no_pod_holds() -> None:
    reservation = make_reservation("r", "team-a").nodes("n1", "n2").start(T0).build()
    cluster = Cluster(
        "c",
        nodes=(
            GPU_NODE.named("n1").gpus(8).build(),
            GPU_NODE.named("n2").gpus(8).build(),
            GPU_NODE.named("n3").gpus(8).build(),
        ),
        pods=(TEAM_A_POD.named("p").gpus(3).on("n1").build(),),
        reservations=(reservation,),
    )
    state = ClusterState.from_cluster(cluster)
    # reserved: n1 + n2 = 16 GPUs; idle: 16 - 3 held on n1 = 13 (n3 is not reserved)
    assert idle_reserved_gpus(cluster, state, T0) == {"r": (16, 13)}


def test_it_selects_reserved_nodes_by_label() -> None:
    reservation = make_reservation("r", "team-a").selector({"team": "a"}).build()
    cluster = Cluster(
        "c",
        nodes=(
            GPU_NODE.named("n1").gpus(4).labels({"team": "a"}).build(),
            GPU_NODE.named("n2").gpus(4).labels({"team": "b"}).build(),
        ),
        reservations=(reservation,),
    )
    # only n1 carries team=a: 4 reserved, 4 idle
    assert idle_reserved_gpus(cluster, ClusterState.from_cluster(cluster), T0) == {"r": (4, 4)}


def test_it_counts_paid_unprovisioned_nodes_as_idle() -> None:
    group = make_group("h100", GPU_NODE.named("t").gpus(8).build()).size(0, 4).price(80.0).build()
    reservation = make_reservation("paid", "team-a").group_capacity("h100", 2).build()
    cluster = Cluster("c", node_groups=(group,), reservations=(reservation,))
    # 2 paid nodes x 8 GPUs = 16 reserved, none started: 16 idle
    assert idle_reserved_gpus(cluster, ClusterState.from_cluster(cluster), T0) == {"paid": (16, 16)}


def test_it_skips_reservations_outside_their_window() -> None:
    later = make_reservation("r", "team-a").nodes("n1").start(T0 + timedelta(days=1)).build()
    cluster = Cluster("c", nodes=(GPU_NODE.named("n1").gpus(8).build(),), reservations=(later,))
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
