"""Property: every placement the engine makes passes every filter, re-checked from scratch.

Random small clusters (zones, hostnames, cpu) with pods carrying required
podAffinity / podAntiAffinity, DoNotSchedule spread constraints, host ports and
priorities. The engine places the pending pods (preempting running pods of lower
priority where one fits nowhere); then the bindings are replayed in order on the
bound pods alone, each preemption's victims removed first, and before each
binding a brute-force checker written from kube-scheduler's documented rules
(not from ``interpod`` or ``filters``) confirms the pod may go there: cpu, free
host ports, its affinity (or the first-pod exception), its anti-affinity, placed
pods' anti-affinity against it, and every spread constraint's skew (a victim
terminating meanwhile holds its room but counts for no spread); every victim ran on
that node with a strictly lower priority. In the final state no two pods violate each
other's anti-affinity.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from hypothesis import example, given, settings, strategies as st

from recommender.engine.scheduler.placement import place, place_unindexed
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import (
    HOSTNAME_LABEL,
    Cluster,
    HostPort,
    LabelRequirement,
    Node,
    Pod,
    PodAffinityTerm,
    PodPlacementTerms,
    PodSelector,
    Resources,
    SpreadConstraint,
)

ZONE = "topology.kubernetes.io/zone"
KEYS = (ZONE, HOSTNAME_LABEL)
PORTS = (
    (),
    (HostPort("0.0.0.0", "TCP", 80),),
    (HostPort("10.0.0.1", "TCP", 80),),
    (HostPort("0.0.0.0", "UDP", 80),),
)


def _selector(app: str) -> PodSelector:
    return PodSelector((LabelRequirement("app", "In", (app,)),))


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    node_count = draw(st.integers(2, 5))
    nodes = tuple(
        Node(
            f"n{i}",
            labels={ZONE: f"z{draw(st.integers(0, 2))}", HOSTNAME_LABEL: f"n{i}"},
            allocatable=Resources(cpu_milli=draw(st.integers(2, 8)) * 1000, pods=110),
        )
        for i in range(node_count)
    )
    pods = []
    for i in range(draw(st.integers(2, 9))):
        namespace = draw(st.sampled_from(("a", "b")))
        app = draw(st.sampled_from(("x", "y")))
        key = draw(st.sampled_from(KEYS))
        other = draw(st.sampled_from(("x", "y")))
        kind = draw(st.sampled_from(("none", "anti", "affinity", "spread", "anti+spread")))
        affinity: tuple[PodAffinityTerm, ...] = ()
        anti: tuple[PodAffinityTerm, ...] = ()
        spread: tuple[SpreadConstraint, ...] = ()
        if "anti" in kind:
            anti = (PodAffinityTerm(_selector(other), key, (namespace,)),)
        if kind == "affinity":
            affinity = (PodAffinityTerm(_selector(other), key, (namespace,)),)
        if "spread" in kind:
            skew = draw(st.integers(1, 2))
            spread = (SpreadConstraint(skew, draw(st.sampled_from(KEYS)), _selector(app)),)
        bound = draw(st.booleans()) and kind == "none" and i < 3
        priority = draw(st.sampled_from((-10, 0) if bound else (0, 100)))
        pods.append(
            Pod(
                namespace=namespace,
                name=f"p{i}",
                requests=Resources(cpu_milli=draw(st.integers(1, 3)) * 1000, pods=1),
                labels={"app": app},
                arrival=float(i),
                node_name=nodes[i % node_count].name if bound else None,
                pod_terms=PodPlacementTerms(affinity, anti, spread),
                host_ports=draw(st.sampled_from(PORTS)),
                priority=priority,
            )
        )
    return Cluster("prop", nodes=nodes, pods=tuple(pods))


# --- the brute-force checker ---------------------------------------------------------


Placed = list[tuple[Pod, Node]]


def _term_matches(term: PodAffinityTerm, pod: Pod) -> bool:
    return pod.namespace in term.namespaces and term.selector.matches(pod.labels)


def _same_domain(a: Node, b: Node, key: str) -> bool:
    return key in a.labels and a.labels.get(key) == b.labels.get(key)


def _why_not(
    pod: Pod, node: Node, placed: Placed, nodes: Sequence[Node], terminating: Collection[str] = ()
) -> str:
    """Why ``pod`` may not go to ``node`` ("" when it may); ``terminating``: keys of placed
    pods being deleted (podtopologyspread/common.go ``countPodsMatchSelector`` bypasses
    them: "Bypass terminating Pod"; every other filter still sees them)."""
    used = sum(p.requests.cpu_milli for p, n in placed if n.name == node.name)
    if used + pod.requests.cpu_milli > node.allocatable.cpu_milli:
        return "cpu"
    for p, n in placed:
        for mine in pod.host_ports:
            for theirs in p.host_ports if n.name == node.name else ():
                same = (mine.port, mine.protocol) == (theirs.port, theirs.protocol)
                if same and (mine.ip == theirs.ip or "0.0.0.0" in (mine.ip, theirs.ip)):
                    return "host port"
    terms = pod.pod_terms
    if terms.affinity:
        if any(t.topology_key not in node.labels for t in terms.affinity):
            return "affinity key"
        matching = [(p, n) for p, n in placed if all(_term_matches(t, p) for t in terms.affinity)]
        near = all(
            any(_same_domain(n, node, t.topology_key) for _, n in matching) for t in terms.affinity
        )
        first = not matching and all(_term_matches(t, pod) for t in terms.affinity)
        if not near and not first:
            return "affinity"
    for t in terms.anti_affinity:
        if any(_term_matches(t, p) and _same_domain(n, node, t.topology_key) for p, n in placed):
            return "anti-affinity"
    for p, n in placed:
        for t in p.pod_terms.anti_affinity:
            if _term_matches(t, pod) and _same_domain(n, node, t.topology_key):
                return "existing anti-affinity"
    for c in terms.spread:
        if c.topology_key not in node.labels:
            return "spread key"
        eligible = [n for n in nodes if all(k.topology_key in n.labels for k in terms.spread)]
        counts: dict[str, int] = {n.labels[c.topology_key]: 0 for n in eligible}
        for p, n in placed:
            if n not in eligible or p.key in terminating or p.namespace != pod.namespace:
                continue
            if c.selector.matches(p.labels):
                counts[n.labels[c.topology_key]] += 1
        minimum = min(counts.values()) if len(counts) >= c.min_domains else 0
        own = 1 if c.selector.matches(pod.labels) else 0
        if counts.get(node.labels[c.topology_key], 0) + own - minimum > c.max_skew:
            return "spread"
    return ""


# --- cases the property found, replayed on every run ----------------------------------


def _nodes(*specs: tuple[str, int]) -> tuple[Node, ...]:
    """Nodes n0, n1, ... from (zone, cpu)."""
    return tuple(
        Node(
            f"n{i}",
            labels={ZONE: zone, HOSTNAME_LABEL: f"n{i}"},
            allocatable=Resources(cpu_milli=cpu * 1000, pods=110),
        )
        for i, (zone, cpu) in enumerate(specs)
    )


def _pod(
    i: int,
    app: str,
    priority: int,
    cpu: int = 1,
    namespace: str = "a",
    on: str | None = None,
    host_ports: tuple[HostPort, ...] = (),
    terms: PodPlacementTerms | None = None,
) -> Pod:
    return Pod(
        namespace=namespace,
        name=f"p{i}",
        requests=Resources(cpu_milli=cpu * 1000, pods=1),
        labels={"app": app},
        arrival=float(i),
        node_name=on,
        pod_terms=terms or PodPlacementTerms(),
        host_ports=host_ports,
        priority=priority,
    )


def _spread(max_skew: int, app: str) -> PodPlacementTerms:
    return PodPlacementTerms(spread=(SpreadConstraint(max_skew, ZONE, _selector(app)),))


def _term(app: str, key: str, namespace: str) -> PodAffinityTerm:
    return PodAffinityTerm(_selector(app), key, (namespace,))


def _terminating_victim_case() -> Cluster:
    """a/p6 (100) preempts a/p1 (-10, host port) on n1 and waits (nominated) while p1
    terminates; a/p2 (0, zone spread maxSkew 2 on app=x) binds on n2 (z0) meanwhile: z0
    counts a/p0 only (p1, terminating, is bypassed), z1 none: 1 + 1 - 0 = 2 <= 2. a/p6
    binds last, once p1 is gone."""
    port = (HostPort("0.0.0.0", "TCP", 80),)
    near_y = PodPlacementTerms(affinity=(_term("y", HOSTNAME_LABEL, "a"),))
    pods = (
        _pod(0, "x", 100),
        _pod(1, "x", -10, on="n1", host_ports=port),
        _pod(2, "x", 0, terms=_spread(2, "x")),
        _pod(3, "y", 100),
        _pod(4, "x", 0),
        _pod(5, "x", 0),
        _pod(6, "x", 100, host_ports=port, terms=near_y),
    )
    return Cluster("prop", nodes=_nodes(("z1", 2), ("z0", 4), ("z0", 2), ("z0", 2)), pods=pods)


def _room_freed_case() -> Cluster:
    """a/p3 (zone spread maxSkew 1) preempts a/p0 on n0; a/p5 lands in z0 meanwhile, so
    once p0 is gone n0 breaks p3's spread (z0 2 + 1 - 1 > 1). a/p7 preempted a/p2 on n2 in
    the same round: p3, tried afresh once both are gone, fits on n2 in p2's room (5 cpu:
    a/p4 3, p7's reservation 1, p3 1), before p7 binds there."""
    pods = (
        _pod(0, "x", -10, on="n0"),
        _pod(1, "x", 0, cpu=2),
        _pod(2, "y", -10, cpu=2, on="n2"),
        _pod(3, "x", 0, terms=_spread(1, "x")),
        _pod(4, "x", 100, cpu=3),
        _pod(5, "x", 0),
        _pod(6, "x", 0),
        _pod(7, "x", 0),
    )
    return Cluster("prop", nodes=_nodes(("z0", 2), ("z0", 3), ("z1", 5)), pods=pods)


def _first_pod_case() -> Cluster:
    """b/p6 (100, app=y, zone affinity to app=y) fits nowhere while b/p1 (y) runs in z1
    (n1 full); a/p2 preempts p1 (a/p0's zone anti-affinity keeps p2 out of z0). Once p1
    is gone no pod matches p6's term: the first-pod exception, p6 binds on n3 on the
    retry, before p2 binds in p1's room."""
    anti_x = PodPlacementTerms(anti_affinity=(_term("x", ZONE, "a"),))
    near_y = PodPlacementTerms(affinity=(_term("y", ZONE, "b"),))
    pods = (
        _pod(0, "x", 0, terms=anti_x),
        _pod(1, "y", -10, namespace="b", on="n1"),
        _pod(2, "x", 0),
        _pod(3, "x", 0),
        _pod(4, "x", 0),
        _pod(5, "x", 100, cpu=2, namespace="b", terms=near_y),
        _pod(6, "y", 100, cpu=2, namespace="b", terms=near_y),
    )
    return Cluster("prop", nodes=_nodes(("z0", 2), ("z1", 3), ("z0", 2), ("z0", 2)), pods=pods)


@settings(max_examples=80, deadline=None)
@given(clusters())
@example(_terminating_victim_case())
@example(_room_freed_case())
@example(_first_pod_case())
def test_every_placement_passes_every_filter_rechecked_from_scratch(cluster: Cluster) -> None:
    nodes = {n.name: n for n in cluster.nodes}
    pods = {p.key: p for p in cluster.pods}
    result = place(cluster, pending_workloads(cluster))
    placed: Placed = [(p, nodes[p.node_name]) for p in cluster.bound_pods() if p.node_name]
    by_key = {o.workload: o for o in result.outcomes}
    gone: set[str] = set()
    # a wasted eviction (``window``): a preemptor left pending evicted its victims all the
    # same, at a try placed_order does not record: a binding the checker refuses while
    # they are there is checked again once they are gone (and they stay gone)
    wasted = {v for o in result.outcomes if not o.placed for v in o.preempted}
    # a pod bound earlier in the pass, then preempted (its outcome unplaced, with a note):
    # it stood on its preemptor's node meanwhile, and a binding may have needed it there
    transient = [
        (pods[victim], nodes[o.bindings[0].node])
        for o in result.outcomes
        if o.placed
        for victim in o.preempted
        if victim in by_key and not by_key[victim].placed and by_key[victim].note
    ]
    # a preemptor's victims terminate from its preemption (``window``): they keep their
    # room, but kube-scheduler counts them for no spread (``countPodsMatchSelector``), and
    # are gone at the end of the round, maybe long before their preemptor binds (a pod
    # retried in a later round may bind first: in their room, or thanks to their absence).
    # placed_order records neither time, so a binding the checker refuses is checked
    # again with the victims of the preemptors still to bind terminating, then gone (and
    # they stay so)
    terminating: set[str] = set()
    ordered = [by_key[key] for key in result.placed_order]  # as bound (retries last)
    for index, outcome in enumerate(ordered):
        later = {victim for o in ordered[index + 1 :] for victim in o.preempted}
        preemptors = [pods[b.pod] for b in outcome.bindings]
        for victim in outcome.preempted:
            assert any(pods[victim].priority < p.priority for p in preemptors), victim
            evicted = [(p, n) for p, n in placed if p.key == victim]
            if not evicted:  # evicted for another nominee meanwhile, or bound by the pass
                bound_then_evicted = victim in by_key and by_key[victim].note is not None
                assert victim in gone or bound_then_evicted, victim
                continue
            gone.add(victim)
            placed.remove(evicted[0])
        for binding in outcome.bindings:
            pod, node = pods[binding.pod], nodes[binding.node]
            if wasted and _why_not(pod, node, placed, cluster.nodes, terminating):
                placed = [(p, n) for p, n in placed if p.key not in wasted]
                gone |= wasted
            reason = _why_not(pod, node, placed, cluster.nodes, terminating)
            if reason and not later <= terminating:
                terminating |= later
                reason = _why_not(pod, node, placed, cluster.nodes, terminating)
            if reason and any(p.key in later for p, _ in placed):
                placed = [(p, n) for p, n in placed if p.key not in later]
                gone |= later
                reason = _why_not(pod, node, placed, cluster.nodes, terminating)
            if reason and transient:
                reason = _why_not(pod, node, placed + transient, cluster.nodes, terminating)
            assert reason == "", (pod.key, node.name)
            placed.append((pod, node))
    for pod, node in placed:
        others = [(p, n) for p, n in placed if p.key != pod.key]
        for t in pod.pod_terms.anti_affinity:
            clash = [
                p.key
                for p, n in others
                if _term_matches(t, p) and _same_domain(n, node, t.topology_key)
            ]
            assert clash == [], (pod.key, clash)


def test_the_checker_refuses_a_second_replica_next_to_the_first() -> None:
    """The checker itself can fail: hostname anti-affinity against a placed twin."""
    term = PodAffinityTerm(_selector("x"), HOSTNAME_LABEL, ("a",))
    twin = Pod("a", "t", labels={"app": "x"}, pod_terms=PodPlacementTerms(anti_affinity=(term,)))
    node = Node("n0", labels={HOSTNAME_LABEL: "n0"}, allocatable=Resources(8000, pods=110))
    placed: Placed = [(twin, node)]
    other = Pod("a", "u", labels={"app": "x"}, pod_terms=PodPlacementTerms(anti_affinity=(term,)))
    assert _why_not(other, node, placed, [node]) == "anti-affinity"


@settings(max_examples=40, deadline=None)
@given(clusters())
def test_the_indexed_placement_decides_as_the_unindexed_reference(cluster: Cluster) -> None:
    """Pods whose verdict depends on the pods around a node leave the memo: the score
    index and memo change no decision for them."""
    workloads = pending_workloads(cluster)
    fast = place(cluster, workloads)
    slow = place_unindexed(cluster, workloads)
    assert [o.bindings for o in fast.outcomes] == [o.bindings for o in slow.outcomes]


def test_the_checker_counts_a_pod_for_spread_unless_it_is_terminating() -> None:
    """countPodsMatchSelector: z0 holds one app=x pod, z1 none; a second one in z0 has
    skew 1 + 1 - 0 = 2 > 1, unless the first is terminating (0 + 1 - 0 = 1)."""
    z0 = Node("n0", labels={ZONE: "z0"}, allocatable=Resources(8000, pods=110))
    z1 = Node("n1", labels={ZONE: "z1"}, allocatable=Resources(8000, pods=110))
    first = Pod("a", "t", labels={"app": "x"})
    terms = PodPlacementTerms(spread=(SpreadConstraint(1, ZONE, _selector("x")),))
    second = Pod("a", "u", labels={"app": "x"}, pod_terms=terms)
    placed: Placed = [(first, z0)]
    assert _why_not(second, z0, placed, [z0, z1]) == "spread"
    assert _why_not(second, z0, placed, [z0, z1], terminating={"a/t"}) == ""


def test_the_checker_refuses_a_host_port_taken_on_the_node() -> None:
    node = Node("n0", labels={HOSTNAME_LABEL: "n0"}, allocatable=Resources(8000, pods=110))
    taken = Pod("a", "t", host_ports=(HostPort("0.0.0.0", "TCP", 80),))
    wanting = Pod("a", "u", host_ports=(HostPort("10.0.0.1", "TCP", 80),))
    assert _why_not(wanting, node, [(taken, node)], [node]) == "host port"
