"""The joint plan and the scheduler simulation agree on what runs now.

The evaluation's scheduler pass is what kube-scheduler does with the pending work; the
joint plan starts from the same state and must not claim "runs now" for a workload the
pass found no room for, nor name other victims than the pass preempted (the page shows
the verdict beside the diagnosis). kube-default breaks score ties at random
(``selectHost``): one seeded draw, the scheduler pass's, serves both.
"""

from bench.synth import AT, synthetic_cluster
from recommender.engine.autoscaler.plan import PREEMPTS, RUNS_NOW
from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads


def test_what_runs_now_in_the_joint_plan_is_what_the_scheduler_pass_placed() -> None:
    cluster = synthetic_cluster(500, seed=1, issue_shape=True)
    evaluation = evaluate(cluster, at=AT)
    verdicts = {w.key: w.joint for w in evaluation.workloads}
    scheduled = {
        o.workload: o
        for o in place(
            cluster, pending_workloads(cluster), state=ClusterState.from_cluster(cluster)
        ).outcomes
    }
    runs_now = [k for k, plan in verdicts.items() if plan.verdict in (RUNS_NOW, PREEMPTS)]
    assert len(runs_now) >= 10  # the check has something to bite on
    for key in runs_now:
        assert scheduled[key].placed, (
            f"{key}: joint says it runs now, the scheduler pass did not place it"
        )
        assert verdicts[key].preempts == scheduled[key].preempted, key
