"""DefaultPreemption, checked against kube-scheduler's own test tables.

Cases from kubernetes/kubernetes ``TestPickOneNodeForPreemption`` and
``TestPreempt`` (``pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption_test.go``; earlier in ``pkg/scheduler/core/
generic_scheduler_test.go``), named as upstream names them. Upstream's sizes:
a node holds 5 units of cpu (DefaultMilliCPURequest = 100m) and memory
(DefaultMemoryRequest = 200 MiB); small pods take 1 unit, medium 2, large 3,
very large 5. Priorities: neg -100, low 0, mid 100, high 1000, veryHigh 10000.
Start times default to 2019-01-01 01:01:01 UTC (``startTime``).

Then the PodDisruptionBudget rules of ``filterPodsWithPDBViolation`` and
``SelectVictimsOnNode``'s reprieve, worked out by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from recommender.engine.scheduler.filters import FilterContext
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.preemption import find_victims
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_node, make_pod
from topology.kube.core.disruption import split_by_budgets
from topology.model.hardware import (
    Cluster,
    DisruptionBudget,
    LabelRequirement,
    Pod,
    PodSelector,
    Resources,
)

MIB = 2**20
UNIT_CPU, UNIT_MEMORY = 100, 200 * MIB
SMALL, MEDIUM, LARGE, VERY_LARGE = 1, 2, 3, 5
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000


def day(n: int) -> float:
    return datetime(2019, 1, n, 1, 1, 1, tzinfo=UTC).timestamp()


START = day(1)


def units(count: int) -> Resources:
    """``count`` of upstream's test units: 100m cpu and 200Mi each, one pod slot."""
    return Resources(count * UNIT_CPU, count * UNIT_MEMORY, 1)


MACHINE = make_node().resources(Resources(5 * UNIT_CPU, 5 * UNIT_MEMORY, 110))  # 5 units
POD = make_pod()  # bound ones started on day 1 unless said


def running(node_name: str, *specs: tuple[int, int] | tuple[int, int, float]) -> list[Pod]:
    """Pods m<i>.<j> on machine<i>: (units, priority[, start time])."""
    index = node_name.removeprefix("machine")
    return [
        POD.named(f"m{index}.{j}")
        .resources(units(spec[0]))
        .priority(spec[1])
        .on(node_name)
        .started(spec[2] if len(spec) > 2 else START)
        .build()
        for j, spec in enumerate(specs, start=1)
    ]


# (upstream name, incoming pod (units, priority), running pods per node, chosen node)
PICK_CASES = [
    (
        "a pod that fits on both machines when lower priority pods are preempted",
        (LARGE, HIGH),
        {"machine1": [(LARGE, MID)], "machine2": [(LARGE, MID)]},
        {"machine1", "machine2"},
    ),
    (
        "machine with min highest priority pod is picked",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(MEDIUM, MID), (LARGE, MID)],
            "machine2": [(MEDIUM, MID), (MEDIUM, LOW)],
            "machine3": [(MEDIUM, LOW), (MEDIUM, LOW)],
        },
        {"machine3"},
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(MEDIUM, MID), (LARGE, MID)],
            "machine2": [(LARGE, MID), (MEDIUM, LOW)],
            "machine3": [(MEDIUM, MID), (MEDIUM, MID)],
        },
        {"machine2"},
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(SMALL, MID), (SMALL, NEG), (SMALL, MID), (SMALL, NEG)],
            "machine2": [(LARGE, MID), (MEDIUM, NEG)],
            "machine3": [(MEDIUM, MID), (SMALL, NEG), (SMALL, LOW)],
        },
        {"machine2"},
    ),
    (
        "sum of adjusted priorities is considered",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(SMALL, MID), (SMALL, NEG), (SMALL, NEG)],
            "machine2": [(LARGE, MID), (MEDIUM, NEG)],
            "machine3": [(MEDIUM, MID), (SMALL, NEG), (SMALL, LOW)],
        },
        {"machine2"},
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        (VERY_LARGE, VERY_HIGH),
        {
            "machine1": [(SMALL, MID), (SMALL, LOW), (SMALL, LOW)],
            "machine2": [(LARGE, HIGH)],
            "machine3": [(MEDIUM, MID), (SMALL, LOW), (SMALL, LOW), (MEDIUM, LOW)],
            "machine4": [(MEDIUM, MID), (SMALL, MID), (SMALL, MID), (SMALL, NEG)],
        },
        {"machine1"},
    ),
    (
        "same priority, same number of victims, different start time for each machine's pod",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(MEDIUM, MID, day(3)), (MEDIUM, MID, day(3))],
            "machine2": [(MEDIUM, MID, day(4)), (MEDIUM, MID, day(4))],
            "machine3": [(MEDIUM, MID, day(2)), (MEDIUM, MID, day(2))],
        },
        {"machine2"},
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(MEDIUM, MID, day(5)), (MEDIUM, MID, day(3))],
            "machine2": [(MEDIUM, MID, day(6)), (MEDIUM, MID, day(2))],
            "machine3": [(MEDIUM, MID, day(4)), (MEDIUM, MID, day(7))],
        },
        {"machine3"},
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        (VERY_LARGE, HIGH),
        {
            "machine1": [(MEDIUM, LOW, day(5)), (MEDIUM, MID, day(3))],
            "machine2": [(MEDIUM, MID, day(7)), (MEDIUM, LOW, day(2))],
            "machine3": [(MEDIUM, LOW, day(4)), (MEDIUM, MID, day(6))],
        },
        {"machine2"},
    ),
]


def victims_for(incoming: Pod, nodes: list[str], pods: list[Pod], budgets=()):  # type: ignore[no-untyped-def]
    cluster = Cluster(
        "c",
        nodes=tuple(MACHINE.named(n).build() for n in nodes),
        pods=(*pods, incoming),
        disruption_budgets=tuple(budgets),
    )
    state = ClusterState.from_cluster(cluster)
    return find_victims(cluster, state, incoming, FilterContext())


@pytest.mark.parametrize(
    ("name", "incoming", "running_pods", "expected"), PICK_CASES, ids=[c[0] for c in PICK_CASES]
)
def test_it_picks_the_node_upstream_picks(
    name: str,
    incoming: tuple[int, int],
    running_pods: dict[str, list[tuple[int, ...]]],
    expected: set[str],
) -> None:
    pods = [p for n, specs in running_pods.items() for p in running(n, *specs)]  # type: ignore[arg-type]
    found = victims_for(
        POD.named("p").resources(units(incoming[0])).priority(incoming[1]).build(),
        list(running_pods),
        pods,
    )
    assert found is not None and found.node in expected


def test_it_evicts_what_upstream_basic_preemption_logic_evicts() -> None:
    """TestPreempt "basic preemption logic": machine2's pod has the preemptor's own
    priority (not lower: no victim there); machine1's two low pods beat machine3's mid."""
    pods = [
        *running("machine1", (SMALL, LOW), (SMALL, LOW)),
        *running("machine2", (LARGE, HIGH)),
        *running("machine3", (MEDIUM, MID)),
    ]
    found = victims_for(
        POD.named("pod1").resources(units(VERY_LARGE)).priority(HIGH).build(),
        ["machine1", "machine2", "machine3"],
        pods,
    )
    assert found is not None
    assert (found.node, [p.name for p in found.pods]) == ("machine1", ["m1.1", "m1.2"])


def test_it_never_preempts_for_a_pod_whose_policy_is_never() -> None:
    """TestPreempt with PreemptionPolicy Never: no candidate at all."""
    pods = running("machine1", (SMALL, LOW), (SMALL, LOW))
    incoming = (
        POD.named("pod1")
        .resources(units(VERY_LARGE))
        .priority(HIGH)
        .preemption_policy("Never")
        .build()
    )
    assert victims_for(incoming, ["machine1"], pods) is None


def test_it_places_without_preemption_where_a_node_has_room() -> None:
    """ "a pod that fits on a machine with no preemption": machine3 is empty."""
    pods = [*running("machine1", (LARGE, MID)), *running("machine2", (LARGE, MID))]
    nodes = tuple(MACHINE.named(f"machine{i}").build() for i in (1, 2, 3))
    cluster = Cluster(
        "c",
        nodes=nodes,
        pods=(*pods, POD.named("p").resources(units(LARGE)).priority(HIGH).build()),
    )
    (outcome,) = place(cluster, pending_workloads(cluster)).outcomes
    assert outcome.placed and outcome.preempted == ()
    assert [b.node for b in outcome.bindings] == ["machine3"]


def test_it_evicts_nothing_for_a_pod_no_eviction_would_seat() -> None:
    pods = running("machine1", (SMALL, LOW))
    too_big = POD.named("p").resources(units(6)).priority(HIGH).build()  # the node has 5
    assert victims_for(too_big, ["machine1"], pods) is None


# --- reprieve and PodDisruptionBudgets (worked out by hand) ----------------------------

WEB = PodSelector((LabelRequirement("app", "In", ("web",)),))


def reprieve_pods() -> list[Pod]:
    """machine1 full: a (1 unit, mid, oldest), b (2, low, labelled web), c (2, mid)."""
    return [
        POD.named("a").resources(units(SMALL)).priority(MID).on("machine1").started(day(1)).build(),
        POD.named("b")
        .resources(units(MEDIUM))
        .priority(LOW)
        .on("machine1")
        .started(day(2))
        .labels({"app": "web"})
        .build(),
        POD.named("c")
        .resources(units(MEDIUM))
        .priority(MID)
        .on("machine1")
        .started(day(3))
        .build(),
    ]


def test_it_reprieves_the_most_important_victims_first() -> None:
    """All three removed, the large pod (3) fits; a back: 1+3 fits, kept; c back:
    1+2+3 = 6 > 5, evicted; b back: 6 > 5, evicted. Victims c then b."""
    found = victims_for(
        POD.named("p").resources(units(LARGE)).priority(HIGH).build(), ["machine1"], reprieve_pods()
    )
    assert found is not None
    assert ([p.name for p in found.pods], found.pdb_violations) == (["c", "b"], 0)


def test_it_reprieves_pdb_violating_victims_before_the_others() -> None:
    """A budget allowing no disruption selects b: b is reprieved first (2+3 fits, kept),
    then a (1+2+3 > 5) and c (> 5) go. No budget is broken."""
    budget = DisruptionBudget("default", "web", WEB, disruptions_allowed=0)
    found = victims_for(
        POD.named("p").resources(units(LARGE)).priority(HIGH).build(),
        ["machine1"],
        reprieve_pods(),
        [budget],
    )
    assert found is not None
    assert ([p.name for p in found.pods], found.pdb_violations) == (["a", "c"], 0)


def test_it_counts_a_violation_when_the_protected_pod_must_go() -> None:
    budget = DisruptionBudget("default", "web", WEB, disruptions_allowed=0)
    found = victims_for(
        POD.named("p").resources(units(VERY_LARGE)).priority(HIGH).build(),
        ["machine1"],
        reprieve_pods(),
        [budget],
    )
    assert found is not None
    assert (sorted(p.name for p in found.pods), found.pdb_violations) == (["a", "b", "c"], 1)


def test_it_prefers_a_node_without_pdb_violations_over_a_lower_priority_victim() -> None:
    budget = DisruptionBudget("default", "web", WEB, disruptions_allowed=0)
    pods = [
        POD.named("web-0")
        .resources(units(VERY_LARGE))
        .priority(LOW)
        .on("machine1")
        .started(START)
        .labels({"app": "web"})
        .build(),
        POD.named("sim-0")
        .resources(units(VERY_LARGE))
        .priority(MID)
        .on("machine2")
        .started(START)
        .build(),
    ]
    found = victims_for(
        POD.named("p").resources(units(VERY_LARGE)).priority(HIGH).build(),
        ["machine1", "machine2"],
        pods,
        [budget],
    )
    assert found is not None and (found.node, found.pods[0].name) == ("machine2", "sim-0")


def test_it_spends_a_budget_once_per_pod_and_skips_pods_already_disrupted() -> None:
    """filterPodsWithPDBViolation: allowed 1, three selected pods: the first uses it,
    the next two break it; a pod listed in disruptedPods uses nothing."""
    budget = DisruptionBudget(
        "default", "web", WEB, disruptions_allowed=1, disrupted_pods=frozenset({"w0"})
    )
    pods = [
        POD.named(f"w{i}")
        .resources(units(SMALL))
        .priority(LOW)
        .on("machine1")
        .started(START)
        .labels({"app": "web"})
        .build()
        for i in range(4)
    ]
    violating, safe = split_by_budgets(pods, [budget], {budget.key: 1})
    assert ([p.name for p in violating], [p.name for p in safe]) == (["w2", "w3"], ["w0", "w1"])


def test_it_lets_an_empty_selector_or_an_unlabelled_pod_match_no_budget() -> None:
    """A PDB with an empty selector matches nothing, nor does a pod without labels."""
    empty = DisruptionBudget("default", "all", PodSelector(), disruptions_allowed=0)
    web = DisruptionBudget("default", "web", WEB, disruptions_allowed=0)
    pods = [
        POD.named("w")
        .resources(units(SMALL))
        .priority(LOW)
        .on("machine1")
        .started(START)
        .labels({"app": "web"})
        .build(),
        POD.named("bare").resources(units(SMALL)).priority(LOW).on("m").started(START).build(),
    ]
    violating, _ = split_by_budgets(pods, [empty, web], {empty.key: 0, web.key: 0})
    assert [p.name for p in violating] == ["w"]


def test_it_reprieves_by_priority_not_by_the_order_pods_run_in() -> None:
    """x (2, low, started first), y (2, mid), z (1, low): y is the most important and
    is put back first (2+3 fits); then x (2+2+3 > 5) and z (2+1+3 > 5) go."""
    pods = [
        POD.named("x")
        .resources(units(MEDIUM))
        .priority(LOW)
        .on("machine1")
        .started(day(1))
        .build(),
        POD.named("y")
        .resources(units(MEDIUM))
        .priority(MID)
        .on("machine1")
        .started(day(2))
        .build(),
        POD.named("z").resources(units(SMALL)).priority(LOW).on("machine1").started(day(3)).build(),
    ]
    found = victims_for(
        POD.named("p").resources(units(LARGE)).priority(HIGH).build(), ["machine1"], pods
    )
    assert found is not None and [p.name for p in found.pods] == ["x", "z"]
