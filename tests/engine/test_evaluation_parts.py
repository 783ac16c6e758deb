"""The critical pass and the deferred parts: apart, then combined into the whole answer.

The cluster: n1's 8 GPUs and 4 of n2's run priority-5 pods; a pending 8-GPU pod is
blocked (no node group), a pending 1-GPU pod runs on n2. Its relaxation (priority 6), the
fragmentation and the fgd what-if are deferred; its verdict is not. cluster-autoscaler's
other outcomes (the naive range) are deferred too: ``order_decides`` from
test_ca_outcome_range, where the pod order decides which group it adds.
"""

from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import (
    DEFERRED,
    NAIVE_RANGE,
    RELAXATIONS,
    WHAT_IF,
    combined,
    critical_pass,
    evaluate,
    fragmentation_part,
    naive_range_part,
    relaxation_part,
    score_tie_part,
    what_if_part,
)
from tests.engine.test_ca_outcome_range import order_decides
from tests.engine.test_placement import H100, TEAM_A_POD
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 1, tzinfo=UTC)
CLUSTER = Cluster(
    "c",
    nodes=(H100.named("n1").build(), H100.named("n2").build()),
    pods=(
        TEAM_A_POD.named("holder").gpus(8).on("n1").priority(5).build(),
        TEAM_A_POD.named("half").gpus(4).on("n2").priority(5).build(),
        TEAM_A_POD.named("big").gpus(8).build(),
        TEAM_A_POD.named("small").gpus(1).build(),
    ),
)


def test_it_gives_the_whole_answer_from_the_critical_pass_and_every_deferred_part() -> None:
    critical = critical_pass(CLUSTER, at=AT)
    whole = combined(
        critical,
        fragmentation=fragmentation_part(critical),
        score_ties=score_tie_part(critical),
        what_if=what_if_part(critical),
        naive_range=naive_range_part(critical),
        relaxations=relaxation_part(critical),
    )
    assert whole.to_json() == evaluate(CLUSTER, at=AT).to_json()
    assert whole.missing == frozenset()


def test_it_leaves_cluster_autoscalers_other_outcomes_to_the_naive_range_part() -> None:
    critical = critical_pass(order_decides(), at=AT)
    assert critical.evaluation.naive_plan.other_outcomes == ()
    found = combined(critical, naive_range=naive_range_part(critical))
    assert [o.add_nodes for o in found.naive_plan.other_outcomes] == [{"one": 1}]
    assert found.missing == frozenset(DEFERRED) - {NAIVE_RANGE}


def test_it_gives_the_naive_range_evaluate_gives() -> None:
    critical = critical_pass(order_decides(), at=AT)
    found = combined(critical, naive_range=naive_range_part(critical))
    whole = evaluate(order_decides(), at=AT)
    assert found.to_json()["naiveRange"] == whole.to_json()["naiveRange"]


def test_it_gives_the_verdicts_in_the_critical_pass() -> None:
    evaluation = critical_pass(CLUSTER, at=AT).evaluation
    assert {w.key: w.joint.verdict for w in evaluation.workloads} == {
        "team-a/big": "blocked",
        "team-a/small": "runs_now",
    }


def test_it_names_every_deferred_part_the_critical_pass_leaves_out() -> None:
    evaluation = critical_pass(CLUSTER, at=AT).evaluation
    assert evaluation.missing == frozenset(DEFERRED)
    assert [w.relaxations for w in evaluation.workloads] == [(), ()]


def test_it_keeps_missing_only_the_parts_not_given() -> None:
    critical = critical_pass(CLUSTER, at=AT)
    partial = combined(critical, relaxations=relaxation_part(critical))
    assert partial.missing == frozenset(DEFERRED) - {RELAXATIONS}
    big = next(w for w in partial.workloads if w.key == "team-a/big")
    assert [r.edit.amount for r in big.relaxations if r.edit] == [6]


def test_it_takes_no_what_if_given_as_worked_out() -> None:
    # None is a what-if's answer (fgd is the chosen profile), not "not given"
    critical = critical_pass(CLUSTER, at=AT, policy="fgd")
    assert WHAT_IF not in combined(critical, what_if=what_if_part(critical)).missing
