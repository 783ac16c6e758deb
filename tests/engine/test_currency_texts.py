"""Every money figure the engine writes is in the evaluation's currency, in the one
format of topology.model.money (``80.00 CHF/h``; ``$80.00/h`` in USD): the joint plan's
reasons, the relaxations' and the what-if's plans, the search's bound, the other
outcomes of cluster-autoscaler and the text report (issue 43 item 8).

CHF has no symbol in the table, so a figure that missed the currency would read
``$…`` (the default) or a bare ``…/h``: each test would see it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from recommender.engine.autoscaler.joint import JointPlanner
from recommender.engine.evaluate.edit_answer import answer_edit
from recommender.engine.evaluate.edits import RAISE_MAX, Edit
from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.evaluate.report import render_text
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.engine.test_ca_outcome_range import REVERSED, order_decides
from tests.engine.test_edit_answer import _cluster as two_pods_one_pool
from tests.engine.test_joint_search import scenario
from tests.engine.test_relaxations import _partial_gang

AT = datetime(2026, 12, 2, tzinfo=UTC)
# joint-two-gangs-one-node: gb runs after one new h100 node in block b1 (80/h)
B1 = "cloud.google.com/gce-topology-block=b1"


def test_the_joint_reasons_write_money_in_the_evaluations_currency() -> None:
    evaluation = evaluate(scenario("joint-two-gangs-one-node"), at=AT, currency="CHF")
    gb = next(w for w in evaluation.workloads if w.key == "ml/gb")
    assert f"add 1 node(s) of group h100 in {B1} for 80.00 CHF/h" in gb.joint.reasons
    assert evaluation.currency == "CHF"


def test_the_default_currency_is_the_price_tables_dollars() -> None:
    evaluation = evaluate(scenario("joint-two-gangs-one-node"), at=AT)
    gb = next(w for w in evaluation.workloads if w.key == "ml/gb")
    assert f"add 1 node(s) of group h100 in {B1} for $80.00/h" in gb.joint.reasons


def test_the_text_report_writes_every_figure_in_the_evaluations_currency() -> None:
    cluster = scenario("joint-two-gangs-one-node")
    text = render_text(evaluate(cluster, at=AT, currency="CHF"), cluster.node_groups)
    # one h100 node at 80/h is the whole joint plan
    assert "== What to do instead (80.00 CHF/h) ==" in text
    assert f"* add 1 x h100 in {B1} for ml/gb (80.00 CHF/h)" in text
    assert "$" not in text


def test_the_search_bound_is_in_the_currency_given() -> None:
    cluster = scenario("joint-two-gangs-one-node")
    planner = JointPlanner(cluster, ClusterState.from_cluster(cluster), AT, "default")
    planner.node_budget = 0  # the greedy plan alone: not a proof, so the bound is said
    plan = planner.plan(pending_workloads(cluster))
    assert plan.search is not None
    assert plan.search.text("CHF") == (
        "best found in 0 search nodes (budget 0); bound: at least 0 blocked, at least 0.00 CHF/h"
    )


def test_cluster_autoscalers_other_outcomes_are_in_the_currency() -> None:
    cluster = order_decides()
    text = render_text(evaluate(cluster, at=AT, currency="CHF"), cluster.node_groups)
    # test_ca_outcome_range: the opposite order adds one node of group "one" (1/h);
    # the dearest outcome costs 3/h
    assert f"cluster-autoscaler may also add 1 x one (1.00 CHF/h), with {REVERSED}" in text
    assert "worst case of these outcomes 3.00 CHF/h" in text


def test_a_relaxations_plan_is_in_the_currency() -> None:
    evaluation = evaluate(_partial_gang(), at=AT, currency="CHF")
    (relaxation,) = next(w for w in evaluation.workloads if w.key == "team-a/job").relaxations
    # max size raised to 3: three 8-GPU nodes of pool at 10/h each
    assert "add 3 node(s) of group pool for 30.00 CHF/h" in relaxation.reasons


def test_a_what_if_answer_is_in_the_currency() -> None:
    answer = answer_edit(
        two_pods_one_pool(),
        "team-a/b",
        Edit(RAISE_MAX, "pool", 1),
        at=AT,
        policy="default",
        currency="CHF",
    )
    # its own node of pool, 10/h (test_edit_answer)
    assert "add 1 node(s) of group pool for 10.00 CHF/h" in answer.after.reasons
