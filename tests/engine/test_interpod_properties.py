"""Property: every placement the engine makes passes every filter, re-checked from scratch.

Random small clusters (zones, hostnames, cpu) with pods carrying required
podAffinity / podAntiAffinity, DoNotSchedule spread constraints, host ports and
priorities. The engine places the pending pods (preempting running pods of lower
priority where one fits nowhere); then the bindings are replayed in order on the
bound pods alone, each preemption's victims removed first, and before each
binding a brute-force checker written from kube-scheduler's documented rules
(not from ``interpod`` or ``filters``) confirms the pod may go there: cpu, free
host ports, its affinity (or the first-pod exception), its anti-affinity, placed
pods' anti-affinity against it, and every spread constraint's skew; every victim
ran on that node with a strictly lower priority. In the final state no two pods
violate each other's anti-affinity.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings, strategies as st

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


def _why_not(pod: Pod, node: Node, placed: Placed, nodes: Sequence[Node]) -> str:
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
            if n in eligible and p.namespace == pod.namespace and c.selector.matches(p.labels):
                counts[n.labels[c.topology_key]] += 1
        minimum = min(counts.values()) if len(counts) >= c.min_domains else 0
        own = 1 if c.selector.matches(pod.labels) else 0
        if counts.get(node.labels[c.topology_key], 0) + own - minimum > c.max_skew:
            return "spread"
    return ""


@settings(max_examples=80, deadline=None)
@given(clusters())
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
    for outcome in (by_key[key] for key in result.placed_order):  # as bound (retries last)
        for victim in outcome.preempted:
            evicted = [(p, n) for p, n in placed if p.key == victim]
            if not evicted:  # evicted for another nominee meanwhile, or bound by the pass
                bound_then_evicted = victim in by_key and by_key[victim].note is not None
                assert victim in gone or bound_then_evicted, victim
                continue
            gone.add(victim)
            preemptors = [pods[b.pod] for b in outcome.bindings]
            assert any(evicted[0][0].priority < p.priority for p in preemptors), victim
            placed.remove(evicted[0])
        for binding in outcome.bindings:
            pod, node = pods[binding.pod], nodes[binding.node]
            if wasted and _why_not(pod, node, placed, cluster.nodes):
                placed = [(p, n) for p, n in placed if p.key not in wasted]
                gone |= wasted
            reason = _why_not(pod, node, placed, cluster.nodes)
            if reason and transient:
                reason = _why_not(pod, node, placed + transient, cluster.nodes)
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


def test_the_checker_refuses_a_host_port_taken_on_the_node() -> None:
    node = Node("n0", labels={HOSTNAME_LABEL: "n0"}, allocatable=Resources(8000, pods=110))
    taken = Pod("a", "t", host_ports=(HostPort("0.0.0.0", "TCP", 80),))
    wanting = Pod("a", "u", host_ports=(HostPort("10.0.0.1", "TCP", 80),))
    assert _why_not(wanting, node, [(taken, node)], [node]) == "host port"
