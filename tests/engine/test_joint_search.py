"""The joint plan searched for the whole pending set (issue 19, item 3).

Hand-worked on the two scenarios built for it (see their comments): the
greedy plan alone, with the search given no budget, blocks the second gang;
the search finds the plan under which both run, and says when it stopped
short of a proof.
"""

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from recommender.engine.autoscaler.joint import JointPlanner
from recommender.engine.autoscaler.plan import ScaleUpPlan
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
AT = datetime(2026, 12, 2, tzinfo=UTC)


def scenario(name: str) -> Cluster:
    snapshot = parse_objects(read_objects(SCENARIOS / f"{name}.yaml"), cluster_name=name)
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def joint(cluster: Cluster, budget: int | None = None) -> ScaleUpPlan:
    planner = JointPlanner(cluster, ClusterState.from_cluster(cluster), AT, "default")
    if budget is not None:
        planner.node_budget = budget
    return planner.plan(pending_workloads(cluster))


def verdicts(plan: ScaleUpPlan) -> dict[str, str]:
    return {key: outcome.verdict for key, outcome in plan.outcomes.items()}


def test_without_budget_the_greedy_plan_blocks_the_second_gang_and_says_it_is_no_proof() -> None:
    plan = joint(scenario("joint-two-gangs-one-node"), budget=0)
    # greedy: ga in b1 (tightest), gb finds 12 in b2 and 0 + 8 new in b1
    assert verdicts(plan) == {"ml/ga": "runs_now", "ml/gb": "blocked"}
    assert plan.additions == ()
    assert plan.search is not None
    assert plan.search.optimal is False
    # no call past the greedy plan; the pinned branch of ga is left with nothing
    # blocked and nothing spent before ga: that is the bound
    assert plan.search.explored == 0
    assert (plan.search.bound_blocked, plan.search.bound_cost_per_hour) == (0, 0.0)
    assert plan.search.text("USD") == (
        "best found in 0 search nodes (budget 0); bound: at least 0 blocked, at least $0.00/h"
    )


def test_the_search_runs_both_gangs_with_one_node_in_b1() -> None:
    plan = joint(scenario("joint-two-gangs-one-node"))
    assert verdicts(plan) == {"ml/ga": "runs_now", "ml/gb": "runs_after_scale_up"}
    assert [(a.node_group, a.count, dict(a.placement)) for a in plan.additions] == [
        ("h100", 1, {"cloud.google.com/gce-topology-block": "b1"})
    ]
    assert plan.cost_per_hour == 80.0
    assert plan.outcomes["ml/ga"].changes == (
        "add nodeSelector cloud.google.com/gce-topology-block=b2",
    )
    assert plan.search is not None and plan.search.optimal is True


def test_the_search_is_deterministic() -> None:
    cluster = scenario("joint-two-gangs-one-node")
    assert joint(cluster) == joint(cluster)


def test_with_both_gangs_fitting_now_nothing_is_searched() -> None:
    cluster = scenario("joint-two-gangs-one-node")
    busy = next(p for p in cluster.pods if p.name == "busy")
    # c2 entirely free: b2 has 16, so gb runs there after ga takes b1
    cluster = replace(cluster, pods=tuple(p for p in cluster.pods if p is not busy))
    plan = joint(cluster)
    assert verdicts(plan) == {"ml/ga": "runs_now", "ml/gb": "runs_now"}
    assert plan.search is not None
    assert (plan.search.explored, plan.search.optimal) == (0, True)


def test_paid_room_of_another_team_is_held_for_it() -> None:
    plan = joint(scenario("joint-paid-room-held"))
    assert verdicts(plan) == {"team-b/urgent": "blocked", "team-a/eval": "uses_reservation"}
    assert [(a.node_group, a.count, a.reservation) for a in plan.additions] == [
        ("h100", 1, "team-a-paid")
    ]


def test_without_the_reservation_the_urgent_pod_buys_the_last_node() -> None:
    cluster = scenario("joint-paid-room-held")
    plan = joint(replace(cluster, reservations=()))
    # the group's one node of room is free to buy: urgent (first in order) takes it
    assert verdicts(plan) == {"team-b/urgent": "runs_after_scale_up", "team-a/eval": "blocked"}
    assert plan.cost_per_hour == 80.0
