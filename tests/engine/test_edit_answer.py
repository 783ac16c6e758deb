"""The interactive what-if answers in the whole evaluation (issue 46 item 8).

Worked by hand: two 8-GPU pods, no node, one group of 8-GPU nodes at max size 1.
The older pod takes the one node the group may add; the younger is blocked by the
max size, though planned alone it would run after a scale-up.
"""

from datetime import UTC, datetime

import pytest

from recommender.engine.evaluate.edit_answer import answer_edit
from recommender.engine.evaluate.edits import RAISE_MAX, Edit, EditError
from recommender.engine.evaluate.evaluation import critical_pass
from tests.engine.test_placement import TEAM_A_POD
from tests.engine.test_relaxations import POOL
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 1, tzinfo=UTC)


def _cluster(max_size: int = 1) -> Cluster:
    older = TEAM_A_POD.named("a").gpus(8).arrival(1.0).build()
    younger = TEAM_A_POD.named("b").gpus(8).arrival(2.0).build()
    return Cluster("c", pods=(older, younger), node_groups=(POOL.max_size(max_size).build(),))


def _page(cluster: Cluster) -> dict[str, str]:
    evaluated = critical_pass(cluster, at=AT, policy="default").evaluation
    return {w.key: w.joint.verdict for w in evaluated.workloads}


def test_as_it_is_is_the_pages_verdict_and_the_raise_counts_the_workload_ahead() -> None:
    cluster = _cluster()
    assert _page(cluster) == {"team-a/a": "runs_after_scale_up", "team-a/b": "blocked"}
    one = answer_edit(cluster, "team-a/b", Edit(RAISE_MAX, "pool", 1), at=AT, policy="default")
    # as it is: blocked, as the page says (alone it would read runs_after_scale_up)
    assert (one.before.verdict, one.after.verdict) == ("blocked", "runs_after_scale_up")
    assert one.after.add_nodes == {"pool": 1}  # its own node; the older pod's is the other


def test_a_raise_the_workload_ahead_takes_leaves_it_blocked() -> None:
    cluster = _cluster(max_size=0)  # both blocked; a raise by 1 goes to the older pod
    assert _page(cluster) == {"team-a/a": "blocked", "team-a/b": "blocked"}
    one = answer_edit(cluster, "team-a/b", Edit(RAISE_MAX, "pool", 1), at=AT, policy="default")
    assert (one.before.verdict, one.after.verdict) == ("blocked", "blocked")
    assert one.after.add_nodes == {}  # the one node the raise allows is the older pod's
    two = answer_edit(cluster, "team-a/b", Edit(RAISE_MAX, "pool", 2), at=AT, policy="default")
    assert two.after.verdict == "runs_after_scale_up"


def test_it_refuses_a_workload_not_pending_before_planning() -> None:
    with pytest.raises(EditError, match="team-a/nope is not pending"):
        answer_edit(_cluster(), "team-a/nope", Edit(RAISE_MAX, "pool", 1), at=AT, policy="default")
