"""The victim search's per-node work kept on the node records and shared by plans.

``preemption.Evicted`` (a node with every pod below a priority given back, and what
that frees) and the GPU rule's status per request are kept on a node's record
(``NodeAlloc.preemption_memo``); the relaxations' "priority + 1" plans, each a copy
of one state, share the records and so that work. Upstream's search does it afresh
each time (kubernetes ``pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption.go`` ``SelectVictimsOnNode``): these check the kept work gives its
answers, and is never used for a node that changed. Clusters worked out by hand.
"""

from dataclasses import replace
from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import critical_pass, relaxation_part
from recommender.engine.evaluate.relaxations import Relaxation, relaxations
from recommender.engine.scheduler.bindings import allocation_of
from recommender.engine.scheduler.filters import FilterContext
from recommender.engine.scheduler.preemption import Evicted, find_victims
from recommender.engine.scheduler.state import ClusterState
from tests.engine.test_placement import H100, TEAM_A_POD
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 1, tzinfo=UTC)
PRIORITY_TEXT = "give it priority {} (lower-priority pods may then be evicted)"


def _three_levels() -> Cluster:
    """n1's 8 GPUs: ``low`` (4, priority 1) and ``mid`` (4, priority 3); n2's: ``holder``
    (8, priority 5). Pending, priority 0: p (8 GPUs), q and r (4 GPUs, r asking 2 cpu:
    not alike). By hand: q and r run once ``low`` is evicted (priority 2, n1; n2's
    holder is above 2); p needs n1 emptied (priority 4: priority 2 frees 4 GPUs only)."""
    return Cluster(
        "c",
        nodes=(H100.named("n1").build(), H100.named("n2").build()),
        pods=(
            TEAM_A_POD.named("low").gpus(4).on("n1").priority(1).build(),
            TEAM_A_POD.named("mid").gpus(4).on("n1").priority(3).build(),
            TEAM_A_POD.named("holder").gpus(8).on("n2").priority(5).build(),
            TEAM_A_POD.named("p").gpus(8).build(),
            TEAM_A_POD.named("q").gpus(4).build(),
            TEAM_A_POD.named("r").requests(2, "1Gi").gpus(4).build(),
        ),
    )


def _answers(found: dict[str, tuple[Relaxation, ...]]) -> dict[str, list[tuple[object, ...]]]:
    return {key: [(r.text, r.verdict, r.reasons) for r in rs] for key, rs in found.items()}


def test_plans_sharing_the_snapshot_records_answer_as_fresh_searches() -> None:
    """p is searched first: its priority-2 plan keeps n1 with ``low`` given back, its
    priority-4 plan n1 with both given back. q and r then find the first kept: had the
    kept node been taken for another priority's (the second), q would read n1 empty
    and p's search, reading the first, would stop at priority 2."""
    critical = critical_pass(_three_levels(), at=AT)
    shared = _answers(relaxation_part(critical))
    b = critical.basis
    fresh = {}
    for key in ("team-a/p", "team-a/q", "team-a/r"):  # each on a state of its own
        state = ClusterState.from_cluster(b.cluster)
        found = relaxations(b.cluster, state, b.pending, [key], at=b.at, policy=b.policy)
        fresh.update(_answers(found))
    assert shared == fresh
    assert shared == {
        "team-a/p": [
            (PRIORITY_TEXT.format(4), "preempts", _preempting("mid", "low"))
        ],  # most important first
        "team-a/q": [(PRIORITY_TEXT.format(2), "preempts", _preempting("low"))],
        "team-a/r": [(PRIORITY_TEXT.format(2), "preempts", _preempting("low"))],
    }
    # once the answers are in, nothing is left on the snapshot's records
    memo = b.state.alloc("n1").preemption_memo
    assert not [v for v in memo.values() if isinstance(v, Evicted)]


def test_copies_of_a_state_share_the_node_a_search_emptied() -> None:
    """A plan's search on a copy keeps n1 with ``low`` given back on the record the
    copies share: another copy's search of that priority finds it (that is the
    sharing), and its 4-GPU preemptor the same victims."""
    cluster = _three_levels()
    state, context = ClusterState.from_cluster(cluster), FilterContext()
    q = next(p for p in cluster.pods if p.name == "q")
    first = find_victims(cluster, state.copy(), replace(q, priority=2), context)
    assert first is not None and (first.node, [p.name for p in first.pods]) == ("n1", ["low"])
    low = next(p for p in state.alloc("n1").placed if p.name == "low")
    memo = state.alloc("n1").preemption_memo
    kept = [v for v in memo.values() if isinstance(v, Evicted)]
    assert [e.lower for e in kept] == [(low,)]
    other = state.copy()
    assert Evicted.of(other, "n1", (low,)) is kept[0]
    r = next(p for p in cluster.pods if p.name == "r")
    again = find_victims(cluster, other, replace(r, priority=2), context)
    assert again is not None and (again.node, [p.name for p in again.pods]) == ("n1", ["low"])


def _preempting(*names: str) -> tuple[str, ...]:
    return (f"runs after preempting {', '.join(f'team-a/{n}' for n in names)}",)


def test_a_node_written_since_is_searched_afresh() -> None:
    """n1 runs ``a`` (4 GPUs, priority 0) and ``b`` (4 GPUs, priority 5); x (8 GPUs,
    priority 1) may evict ``a`` only: 4 GPUs free, no candidate. On a copy where ``b``
    has left, the same lower pods (``a``) give 8 GPUs: n1, evicting ``a``. A search
    reading the first state's kept node would still say none."""
    a = TEAM_A_POD.named("a").gpus(4).on("n1").build()
    b = TEAM_A_POD.named("b").gpus(4).on("n1").priority(5).build()
    x = TEAM_A_POD.named("x").gpus(8).priority(1).build()
    cluster = Cluster("c", nodes=(H100.named("n1").build(),), pods=(a, b, x))
    state, context = ClusterState.from_cluster(cluster), FilterContext()
    assert find_victims(cluster, state, x, context) is None
    after = state.copy()
    taken = allocation_of(after, b.key)
    assert taken is not None
    after.release("n1", b.key, taken, b)
    found = find_victims(cluster, after, x, context)
    assert found is not None and (found.node, [p.name for p in found.pods]) == ("n1", ["a"])
    assert find_victims(cluster, state, x, context) is None  # the first state as it was


def test_other_pods_under_the_same_names_are_given_back_afresh() -> None:
    """A kept node is the one for the very pods given back: a running pod of the same
    name but another request (an edited one) gets its own, freeing what it takes."""
    a = TEAM_A_POD.named("a").gpus(4).on("n1").build()
    cluster = Cluster("c", nodes=(H100.named("n1").build(),), pods=(a,))
    state = ClusterState.from_cluster(cluster)
    first = Evicted.of(state, "n1", (a,))
    assert Evicted.of(state, "n1", (a,)) is first
    other = replace(a, requests=replace(a.requests, cpu_milli=a.requests.cpu_milli + 1))
    again = Evicted.of(state, "n1", (other,))
    assert again is not first and again.lower == (other,)


def test_the_gpu_status_kept_on_a_node_is_per_request() -> None:
    """n1 runs ``a`` (6 GPUs, priority 0): 2 free. y (4 GPUs, priority 1) fits once ``a``
    is given back and not with it back: n1, evicting ``a``. z (2 GPUs) fits with ``a``
    back, so nothing is evicted (``SelectVictimsOnNode`` reprieves ``a``); read after
    y's on the same node, y's "4 GPUs do not fit" must not answer for z."""
    a = TEAM_A_POD.named("a").gpus(6).on("n1").build()
    y = TEAM_A_POD.named("y").gpus(4).priority(1).build()
    z = TEAM_A_POD.named("z").gpus(2).priority(1).build()
    cluster = Cluster("c", nodes=(H100.named("n1").build(),), pods=(a, y, z))
    state, context = ClusterState.from_cluster(cluster), FilterContext()
    first = find_victims(cluster, state, y, context)
    assert first is not None and [p.name for p in first.pods] == ["a"]
    second = find_victims(cluster, state, z, context)
    assert second is not None and (second.node, second.pods) == ("n1", ())
