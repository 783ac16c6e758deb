"""What waiting costs: GPU-hours waited and GPUs a gang's running members hold idle."""

from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import idle_member_gpus, waiting_gpu_hours
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import Cluster, Gang, GpuRequest, Pod

AT = datetime(2026, 12, 2, tzinfo=UTC)
TWO_HOURS_EARLIER = AT.timestamp() - 2 * 3600


def _gang_cluster(arrival: float) -> Cluster:
    gang = Gang("ml", "train", min_member=3)
    running = Pod("ml", "train-0", gpu=GpuRequest(8), gang=gang.key, node_name="a1")
    waiting = [
        Pod("ml", f"train-{i}", gpu=GpuRequest(8), gang=gang.key, arrival=arrival) for i in (1, 2)
    ]
    return Cluster("c", pods=(running, *waiting), gangs=(gang,))


def test_it_counts_gpu_hours_waited_by_the_pending_members_only() -> None:
    cluster = _gang_cluster(TWO_HOURS_EARLIER)
    (workload,) = pending_workloads(cluster)
    # two pending members x 8 GPUs x 2 h; the running member is not waiting
    assert waiting_gpu_hours(workload, AT) == 32.0


def test_it_says_unknown_not_zero_when_a_creation_time_is_missing() -> None:
    (workload,) = pending_workloads(_gang_cluster(arrival=0.0))
    assert waiting_gpu_hours(workload, AT) is None


def test_it_counts_the_gpus_running_members_hold_while_the_gang_waits() -> None:
    cluster = _gang_cluster(TWO_HOURS_EARLIER)
    (workload,) = pending_workloads(cluster)
    assert idle_member_gpus(cluster, workload) == 8


def test_it_counts_no_idle_members_for_a_lone_pod() -> None:
    cluster = Cluster("c", pods=(Pod("ml", "solo", gpu=GpuRequest(1), arrival=1.0),))
    (workload,) = pending_workloads(cluster)
    assert idle_member_gpus(cluster, workload) == 0
