"""Disagreement classes are raised only where naive and joint really differ."""

from datetime import UTC, datetime

from recommender.engine.autoscaler.plan import RUNS_AFTER_SCALE_UP, WorkloadPlan
from recommender.engine.evaluate.classes import disagreements
from recommender.engine.scheduler.workloads import pod_workload
from topology.model.hardware import Cluster, GpuRequest, Pod

AT = datetime(2026, 12, 3, tzinfo=UTC)
SHARE_POD = Pod("serve", "b", gpu=GpuRequest(1, milli_per_gpu=500))


def _classes(naive: WorkloadPlan, joint: WorkloadPlan) -> tuple[str, ...]:
    workload = pod_workload(SHARE_POD)
    return disagreements(Cluster("c"), workload, naive, joint, AT, "default")


def test_it_raises_no_sharing_alarm_for_a_share_riding_on_a_node_naive_bought_earlier() -> None:
    # naive counted room for the share on a node it planned for an earlier pod, and the
    # share does run there; joint puts it on the same added node: they agree
    naive = WorkloadPlan("serve/b", "scale_up", add_nodes={}, schedulable_after=True)
    joint = WorkloadPlan("serve/b", RUNS_AFTER_SCALE_UP, schedulable_after=True)
    assert _classes(naive, joint) == ()


def test_it_raises_sharing_when_the_room_naive_counted_for_a_share_is_not_real() -> None:
    naive = WorkloadPlan("serve/b", "scale_up", add_nodes={}, schedulable_after=False)
    joint = WorkloadPlan("serve/b", RUNS_AFTER_SCALE_UP, add_nodes={"a100": 1})
    # naive adds nothing for it (it rides on a node bought for another) and it never runs
    assert _classes(naive, joint) == ("never-scales", "sharing")


WHOLE_POD = Pod("train", "w", gpu=GpuRequest(8))


def _whole_classes(naive: WorkloadPlan, joint: WorkloadPlan) -> tuple[str, ...]:
    return disagreements(Cluster("c"), pod_workload(WHOLE_POD), naive, joint, AT, "default")


def test_it_raises_never_scales_when_naive_believes_it_fits_and_it_does_not() -> None:
    # cluster-autoscaler's filter-out-schedulable found room, adds nothing; the pod stays
    naive = WorkloadPlan("train/w", "runs_now", schedulable_after=False)
    joint = WorkloadPlan("train/w", RUNS_AFTER_SCALE_UP, add_nodes={"h100": 1})
    assert _whole_classes(naive, joint) == ("never-scales",)


def test_it_raises_never_scales_when_naive_sees_no_help_and_the_joint_plan_finds_one() -> None:
    naive = WorkloadPlan("train/w", "blocked", reasons=("no group fits",))
    joint = WorkloadPlan("train/w", RUNS_AFTER_SCALE_UP, add_nodes={"h100": 1})
    assert _whole_classes(naive, joint) == ("never-scales",)


def test_it_raises_nothing_when_both_say_nothing_can_help() -> None:
    naive = WorkloadPlan("train/w", "blocked", reasons=("no group fits",))
    joint = WorkloadPlan("train/w", "blocked", reasons=("needs 16 GPUs in one block",))
    assert _whole_classes(naive, joint) == ()


def test_it_raises_nothing_when_naive_adds_nothing_and_the_pod_runs() -> None:
    naive = WorkloadPlan("train/w", "runs_now", schedulable_after=True)
    joint = WorkloadPlan("train/w", "runs_now")
    assert _whole_classes(naive, joint) == ()
