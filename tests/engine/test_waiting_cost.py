"""What waiting costs: GPU-hours waited and GPUs a gang's running members hold idle."""

from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import idle_member_gpus, waiting_gpu_hours
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_gang, make_pod
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 2, tzinfo=UTC)
TWO_HOURS_EARLIER = AT.timestamp() - 2 * 3600


def _gang_cluster(arrival: float) -> Cluster:
    gang = make_gang("train", 3, "ml").build()
    member = make_pod(namespace="ml").gpus(8).gang(gang.key)
    running = member.named("train-0").on("a1").build()
    waiting = [member.named(f"train-{i}").arrival(arrival).build() for i in (1, 2)]
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
    cluster = Cluster("c", pods=(make_pod("solo", "ml").gpus(1).arrival(1.0).build(),))
    (workload,) = pending_workloads(cluster)
    assert idle_member_gpus(cluster, workload) == 0
