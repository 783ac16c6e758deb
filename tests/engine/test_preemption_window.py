"""A preemptor is nominated while its victims terminate; the queue goes on meanwhile.

Worked by hand from kubernetes/kubernetes v1.35: ``pkg/scheduler/framework/preemption/
preemption.go`` (``Preempt``, ``prepareCandidateAsync``: victims deleted gracefully,
the node nominated; ``pickOneNodeForPreemption``), ``pkg/scheduler/schedule_one.go``
(``handleSchedulingFailure`` → ``AddNominatedPod``; ``findNodesThatFitPod`` →
``evaluateNominatedNode``: the nominated node first on the next try),
``pkg/scheduler/framework/runtime/framework.go`` (``RunFilterPluginsWithNominatedPods``,
``addGlobalNominatedPods``: nominees of equal or higher priority take their requests on
their node), ``framework/plugins/defaultpreemption/default_preemption.go``
(``SelectVictimsOnNode``: every lower-priority pod on the node, terminating or bound a
moment ago) and ``framework/plugins/podtopologyspread/common.go``
(``countPodsMatchSelector``). Victims terminate within the grace period (30 s by
default): every other pod of the pass is tried meanwhile.
"""

from __future__ import annotations

from typing import Any

from test_placement_retry import ZONE, ZONE_NODE, app_pod, parsed, required

from recommender.engine.scheduler.placement import PlacementResult, place
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import KubeObject

HOST = "kubernetes.io/hostname"


def spread(app: str, max_skew: int) -> list[dict[str, Any]]:
    return [
        {
            "maxSkew": max_skew,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }
    ]


def running(name: str, app: str, cpu: str, on: str, started: str, **spec: Any) -> KubeObject:
    return app_pod(name, app, 0, cpu).on(on).pod_spec(**spec).status(startTime=started)


def placed(*objects: KubeObject) -> PlacementResult:
    cluster = parsed(*objects)
    return place(cluster, pending_workloads(cluster))


def spread_window(max_skew: int) -> PlacementResult:
    # p (1000, 4 cpu) fits only n1 (n2 is full of a priority-1000 pod, n3 has 2 cpu):
    # it preempts old on n1 (z1: 0 app=a pods, skew 0 + 1 - 0 = 1) and is nominated.
    # q (0, app=a, 1 cpu) comes next in the queue: n1 holds old (8, terminating) and
    # p's 4, so q lands on n3, in zone z1. Once old is gone p is tried on n1 again:
    # z1 now counts q, z2 none: 1 + 1 - 0 = 2.
    return placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        ZONE_NODE.named("n2").label(ZONE, "z2").allocatable(cpu="8"),
        ZONE_NODE.named("n3").label(ZONE, "z1").allocatable(cpu="2"),
        running("old", "old", "8", "n1", "2026-11-01T01:00:00Z"),
        app_pod("filler", "filler", 1000, "8").on("n2"),
        app_pod("p", "a", 1000, "4").pod_spec(topologySpreadConstraints=spread("a", max_skew)),
        app_pod("q", "a", 0, "1"),
    )


def test_it_leaves_a_preemptor_pending_when_a_pod_placed_meanwhile_breaks_its_spread() -> None:
    # maxSkew 1: p fails on n1 (2 > 1), fits nowhere else (n3: 1 cpu left), and no
    # lower-priority pod left on n1 to evict (q on n3 would not free 4 cpu): pending,
    # with old evicted in vain.
    outcome = {o.workload: o for o in spread_window(max_skew=1).outcomes}["ml/p"]
    assert (outcome.placed, outcome.preempted) == (False, ("ml/old",))


def test_it_warns_that_pods_placed_meanwhile_may_break_a_nominees_spread() -> None:
    # maxSkew 2: 2 <= 2, p binds on n1; q landed in p's zone meanwhile, so with another
    # timing it could have broken the constraint: the weaker reason says so.
    outcome = {o.workload: o for o in spread_window(max_skew=2).outcomes}["ml/p"]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.summary == (
        "runs after preempting ml/old; pods placed while they terminate (ml/q) may break "
        "its spread/affinity: kube-scheduler binds it only once they are gone"
    )


def test_it_has_a_lower_priority_pod_preempt_elsewhere_while_a_nominee_holds_its_room() -> None:
    # p (1000, 4 cpu, pinned to n1) preempts old-1 and is nominated on n1. q (500, 3 cpu)
    # next: n1 holds old-1 (6, terminating) + p's 4 > 8; n2 holds old-2 (7) + 3 > 8.
    # q preempts: n1 without old-1 takes p's 4 + 3 = 7 (victims {old-1}); n2 without
    # old-2 takes 3 (victims {old-2}); same priorities and counts, so the latest start
    # wins: old-2 (02:00) over old-1 (01:00). Binding p at once would have left q room
    # on n1 (8 - 4 = 4 >= 3) and old-2 running.
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        ZONE_NODE.named("n2").label(ZONE, "z1").allocatable(cpu="8"),
        running("old-1", "old", "6", "n1", "2026-11-01T01:00:00Z"),
        running("old-2", "old", "7", "n2", "2026-11-01T02:00:00Z"),
        app_pod("p", "a", 1000, "4").node_selector({HOST: "n1"}),
        app_pod("q", "b", 500, "3"),
    )
    outcomes = {o.workload: (o.bindings[0].node, o.preempted) for o in result.outcomes}
    assert outcomes == {"ml/p": ("n1", ("ml/old-1",)), "ml/q": ("n2", ("ml/old-2",))}


def test_it_evicts_a_pod_bound_while_a_nominee_waited() -> None:
    # old (0) on n1 repels app=a on its host: a (1000) preempts it and is nominated
    # (2 cpu reserved). b (0, app=b, 1 cpu) next: n1 holds 4 + 2 + 1 <= 8, and b has no
    # pod terms (nor does any bound pod's anti-affinity select it), so InterPodAffinity
    # is skipped for b and a's anti-affinity against app=b is not checked: b binds.
    # Once old is gone, a fails on n1 (b is there) and preempts b, bound moments ago.
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        running(
            "old",
            "old",
            "4",
            "n1",
            "2026-11-01T01:00:00Z",
            affinity=required("podAntiAffinity", "a", HOST),
        ),
        app_pod("a", "a", 1000, "2").pod_spec(affinity=required("podAntiAffinity", "b", HOST)),
        app_pod("b", "b", 0, "1"),
    )
    outcomes = {o.workload: (o.placed, o.preempted) for o in result.outcomes}
    assert outcomes == {"ml/a": (True, ("ml/old", "ml/b")), "ml/b": (False, ())}


def test_it_says_a_pod_bound_then_preempted_was_evicted() -> None:
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        running(
            "old",
            "old",
            "4",
            "n1",
            "2026-11-01T01:00:00Z",
            affinity=required("podAntiAffinity", "a", HOST),
        ),
        app_pod("a", "a", 1000, "2").pod_spec(affinity=required("podAntiAffinity", "b", HOST)),
        app_pod("b", "b", 0, "1"),
    )
    outcome = {o.workload: o for o in result.outcomes}["ml/b"]
    assert outcome.note == (
        "bound to n1, then preempted by ml/a (a victim is deleted: its controller, if "
        "any, creates a new pod)"
    )


def test_it_lets_a_higher_priority_pod_take_the_room_a_lower_nominee_waits_for() -> None:
    # h (1000, 3 cpu, pinned to n1) needs an app=db pod in its zone: none yet, so it
    # fails (and evicting old would not help). p (100, 2 cpu, pinned to n1) preempts
    # old and is nominated; db (0) binds on n2, zone z1. Once old is gone h is tried
    # first (PrioritySort): nominees of lower priority are not added for it, so n1 has
    # 4 cpu free and h binds. p, tried next on n1, finds 1 cpu: no lower-priority pod
    # there to evict, it stays pending, old evicted in vain.
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="4"),
        ZONE_NODE.named("n2").label(ZONE, "z1").allocatable(cpu="1"),
        running("old", "old", "4", "n1", "2026-11-01T01:00:00Z"),
        app_pod("h", "h", 1000, "3")
        .node_selector({HOST: "n1"})
        .pod_spec(affinity=required("podAffinity", "db", ZONE)),
        app_pod("p", "p", 100, "2").node_selector({HOST: "n1"}),
        app_pod("db", "db", 0, "1").node_selector({HOST: "n2"}),
    )
    outcomes = {o.workload: (o.placed, o.preempted) for o in result.outcomes}
    assert outcomes == {"ml/h": (True, ()), "ml/p": (False, ("ml/old",)), "ml/db": (True, ())}


def test_it_says_a_nominee_runs_elsewhere_once_its_room_was_taken() -> None:
    # Queue: h (1000), p and r (100, by name), db (0). h needs an app=db pod in its zone
    # and fails. p fits nowhere: evicting old-1 (n1) or old-2 (n2) would do, same
    # priorities and counts, old-1 started later: p is nominated on n1. r (pinned to
    # n2) is nominated on n2, evicting old-2. db binds on n3. Once the victims are
    # gone, h pops first, does not see the lower nominees' room and binds on n1 (3 of
    # 4 cpu). p: n1 has 1 cpu left; afresh, n2 has 4 - r's 2 (r's priority equals p's:
    # it counts) = 2: p binds there, and r after it.
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="4"),
        ZONE_NODE.named("n2").label(ZONE, "z1").allocatable(cpu="4"),
        ZONE_NODE.named("n3").label(ZONE, "z1").allocatable(cpu="1"),
        running("old-1", "old", "4", "n1", "2026-11-01T02:00:00Z"),
        running("old-2", "old", "4", "n2", "2026-11-01T01:00:00Z"),
        app_pod("h", "h", 1000, "3")
        .node_selector({HOST: "n1"})
        .pod_spec(affinity=required("podAffinity", "db", ZONE)),
        app_pod("p", "p", 100, "2"),
        app_pod("r", "r", 100, "2").node_selector({HOST: "n2"}),
        app_pod("db", "db", 0, "1").node_selector({HOST: "n3"}),
    )
    outcome = {o.workload: o for o in result.outcomes}["ml/p"]
    assert outcome.diagnosis is not None
    assert (outcome.bindings[0].node, outcome.diagnosis.summary) == (
        "n2",
        "runs after preempting ml/old-1, but pods placed while they terminated "
        "(ml/db, ml/h) left it no place on n1: runs on n2",
    )


def test_it_leaves_a_terminating_victim_out_of_a_later_pods_spread_count() -> None:
    # p (1000, 4 cpu) fits nowhere (n1 full of old, n2 1 cpu, n3 full of a priority-1000
    # pod) and preempts old on n1. q (0, app=a, 1 cpu, zone spread maxSkew 1) comes next
    # while old terminates: n1 holds old and p's reservation; on n2 (z1) the counts are
    # z1 0 (old, terminating, bypassed by countPodsMatchSelector), z2 0: 0 + 1 - 0 = 1,
    # q binds there. Were old counted: 1 + 1 - 0 = 2 > 1, q would stay pending.
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="4"),
        ZONE_NODE.named("n2").label(ZONE, "z1").allocatable(cpu="1"),
        ZONE_NODE.named("n3").label(ZONE, "z2").allocatable(cpu="1"),
        running("old", "a", "4", "n1", "2026-11-01T01:00:00Z"),
        app_pod("filler", "filler", 1000, "1").on("n3"),
        app_pod("p", "p", 1000, "4"),
        app_pod("q", "a", 0, "1").pod_spec(topologySpreadConstraints=spread("a", 1)),
    )
    bindings = {o.workload: [b.node for b in o.bindings] for o in result.outcomes}
    assert (bindings["ml/p"], bindings["ml/q"]) == (["n1"], ["n2"])
    assert result.placed_order == ("ml/q", "ml/p")


def host_spread(app: str) -> list[dict[str, Any]]:
    return [
        {
            "maxSkew": 1,
            "topologyKey": HOST,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }
    ]


def test_it_moves_a_nominee_whose_spread_breaks_beside_an_equal_priority_nominee() -> None:
    # kube-scheduler v1.36 pkg/scheduler/framework/runtime/framework.go
    # RunFilterPluginsWithNominatedPods / addGlobalNominatedPods: while a pod is filtered
    # on a node, the pods nominated there with an equal or higher priority are added to
    # that node, their labels in PodTopologySpread's counts. old (0) on n1 repels app=a in
    # the whole zone. p (1000, app=a, hostname maxSkew 1) fits nowhere, preempts old on n1
    # (0 + 1 - 0 = 1) and is nominated there. q (1000, app=a, no constraint) fits nowhere
    # either (old terminates, its anti-affinity still counts) and preempts old on n1 too:
    # p is added there, q has no spread, it is nominated on n1. Once old is gone p is tried
    # on n1 first (schedule_one.go evaluateNominatedNode), with q added: n1 counts 1 app=a
    # pod, p makes 2, the emptiest node 0: 2 - 0 > 1, n1 fails; p is scheduled afresh and
    # binds on n2 or n3 (1 - 0). q then binds on n1 (p is bound elsewhere, nothing beside).
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        ZONE_NODE.named("n2").label(ZONE, "z1").allocatable(cpu="8"),
        ZONE_NODE.named("n3").label(ZONE, "z1").allocatable(cpu="8"),
        running(
            "old",
            "old",
            "1",
            "n1",
            "2026-11-01T01:00:00Z",
            affinity=required("podAntiAffinity", "a", ZONE),
        ),
        app_pod("p", "a", 1000, "1").pod_spec(topologySpreadConstraints=host_spread("a")),
        app_pod("q", "a", 1000, "1"),
    )
    nodes = {o.workload: [b.node for b in o.bindings] for o in result.outcomes}
    assert nodes["ml/q"] == ["n1"]
    assert nodes["ml/p"] in (["n2"], ["n3"])


def test_it_finds_no_victims_where_a_nominee_beside_repels_the_preemptor() -> None:
    # The same first pass in the victim search (default_preemption.go SelectVictimsOnNode
    # filters with the nominated pods). old (0, app=b) on n1 keeps a (1000, anti-affinity
    # app=b per host) out: a preempts old and is nominated on n1. b2 (1000, app=b, pinned
    # to n1, with a required term of its own, so InterPodAffinity's PreFilter is not
    # skipped) has room on n1, but a is added there and a's anti-affinity selects b2: n1
    # fails, and without old it still fails (a is still there), so no victim helps and
    # nothing more is evicted. old gone, a binds on n1; b2 stays pending.
    result = placed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        running("old", "b", "2", "n1", "2026-11-01T01:00:00Z"),
        app_pod("a", "a", 1000, "2").pod_spec(affinity=required("podAntiAffinity", "b", HOST)),
        app_pod("b2", "b", 1000, "2")
        .node_selector({HOST: "n1"})
        .pod_spec(affinity=required("podAntiAffinity", "c", HOST)),
    )
    outcomes = {o.workload: (o.placed, o.preempted) for o in result.outcomes}
    assert outcomes == {"ml/a": (True, ("ml/old",)), "ml/b2": (False, ())}
