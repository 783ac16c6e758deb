"""A verdict that rests on an exact score tie says so: kube-scheduler picks at random.

Worked by hand from kubernetes/kubernetes v1.35 ``pkg/scheduler/schedule_one.go``
(``prioritizeNodes``, ``selectHost``: a node of the highest total score, uniformly at
random among those tied) and the default profile's score plugins: two nodes alike but
for their zone label score the same for a pod with no preference (LeastAllocated and
BalancedAllocation on equal free resources, TaintToleration 100 on untainted nodes,
NodeAffinity/InterPodAffinity/PodTopologySpread 0 without preferred terms).
"""

from __future__ import annotations

from datetime import UTC, datetime

from test_placement_retry import ZONE, ZONE_NODE, app_pod, parsed, required

from recommender.engine.evaluate.evaluation import evaluate

AT = datetime(2026, 12, 5, tzinfo=UTC)


def test_it_says_a_later_pods_verdict_rests_on_an_earlier_pods_score_tie() -> None:
    # a (100) ties between n1 (z1) and n2 (z2); b (0) is pinned to z1 and needs an
    # app=a pod in its zone: it runs only when a's tie goes to n1.
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="4"),
        ZONE_NODE.named("n2").label(ZONE, "z2").allocatable(cpu="4"),
        app_pod("a", "a", 100, "2"),
        app_pod("b", "b", 0, "1")
        .node_selector({ZONE: "z1"})
        .pod_spec(affinity=required("podAffinity", "a", ZONE)),
    )
    tie = {w.key: w.score_tie for w in evaluate(cluster, at=AT).workloads}["ml/b"]
    assert tie is not None
    assert (tie.pod, {tie.here, tie.there}) == ("ml/a", {"n1", "n2"})


def test_it_says_nothing_of_a_tie_that_changes_no_verdict() -> None:
    # the same tie for a, but b fits beside it on either node
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="4"),
        ZONE_NODE.named("n2").label(ZONE, "z2").allocatable(cpu="4"),
        app_pod("a", "a", 100, "2"),
        app_pod("b", "b", 0, "1"),
    )
    assert [w.score_tie for w in evaluate(cluster, at=AT).workloads] == [None, None]
