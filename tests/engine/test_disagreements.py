"""Disagreement classes are raised only where naive and joint really differ."""

from datetime import UTC, datetime

from recommender.engine.autoscaler.plan import RUNS_AFTER_SCALE_UP, WorkloadPlan
from recommender.engine.evaluate.classes import disagreements
from recommender.engine.scheduler.workloads import pod_workload
from topology.hardware import Cluster, GpuRequest, Pod

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
    assert _classes(naive, joint) == ("sharing",)
