"""kube-scheduler's own Filter test tables, translated as data.

Cases from kubernetes/kubernetes
``pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go``
(``TestRequiredAffinitySingleNode``) and
``pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go``
(``TestSingleConstraint``, ``TestMultipleConstraints``), each named as upstream
names it. Upstream's status codes become our reasons: Success → "",
Unschedulable(AndUnresolvable) → the plugin's reason text. Each case runs
PreFilter over the snapshot's nodes and pods, then Filter per node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from recommender.engine.scheduler import interpod
from recommender.engine.scheduler.interpod import (
    AFFINITY_RULES_NOT_MATCH,
    ANTI_AFFINITY_RULES_NOT_MATCH,
    EXISTING_ANTI_AFFINITY_NOT_MATCH,
    SPREAD_MISSING_LABEL,
    SPREAD_NOT_MATCH,
)
from tests.builders import make_node, make_pod
from topology.model.hardware import (
    LabelRequirement,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodSelector,
    SpreadConstraint,
)

NS = "default"


def term(key: str, op: str, values: tuple[str, ...], topology_key: str, *more: LabelRequirement):
    return PodAffinityTerm(
        PodSelector((LabelRequirement(key, op, values), *more)), topology_key, (NS,)
    )


POD = make_pod("p", NS)


@dataclass(frozen=True)
class Case:
    name: str
    pod: Pod
    pods: tuple[Pod, ...]
    nodes: tuple[Node, ...]
    want: dict[str, str] = field(default_factory=dict)  # node → reason ("" passes)


def run(case: Case) -> dict[str, str]:
    placed = {n.name: tuple(p for p in case.pods if p.node_name == n.name) for n in case.nodes}
    cycle = interpod.prefilter(case.pod, ((n, placed[n.name]) for n in case.nodes), {})
    return {
        n.name: interpod.spread_reason(n.labels, cycle) or interpod.affinity_reason(n.labels, cycle)
        for n in case.nodes
    }


# --- interpodaffinity: TestRequiredAffinitySingleNode --------------------------------

NODE1 = make_node("node1").labels({"region": "r1", "zone": "z11"}).build()
SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
EXISTING = POD.named("existing").labels(SECURITYSCAN).on("node1").build()

AFFINITY_CASES = [
    Case(
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
        "operator that matches the existing pod",
        POD.labels(S1)
        .pod_terms(affinity=(term("service", "In", ("securityscan", "value2"), "region"),))
        .build(),
        (EXISTING,),
        (NODE1,),
        {"node1": ""},
    ),
    Case(
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
        "using not in operator in labelSelector that matches the existing pod",
        POD.labels(S1)
        .pod_terms(affinity=(term("service", "NotIn", ("securityscan3", "value3"), "region"),))
        .build(),
        (EXISTING,),
        (NODE1,),
        {"node1": ""},
    ),
    Case(
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        POD.labels(S1)
        .pod_terms(
            affinity=(
                PodAffinityTerm(
                    PodSelector((LabelRequirement("service", "In", ("securityscan", "value2")),)),
                    "",
                    ("DiffNameSpace",),
                ),
            )
        )
        .build(),
        (POD.namespace("ns").named("other").labels(SECURITYSCAN).on("node1").build(),),
        (NODE1,),
        {"node1": AFFINITY_RULES_NOT_MATCH},
    ),
    Case(
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        POD.labels(SECURITYSCAN)
        .pod_terms(affinity=(term("service", "In", ("antivirusscan", "value2"), ""),))
        .build(),
        (EXISTING,),
        (NODE1,),
        {"node1": AFFINITY_RULES_NOT_MATCH},
    ),
    Case(
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
        "schedule onto the node because one of the matchExpression item don't match.",
        POD.labels(S1)
        .pod_terms(
            affinity=(
                term(
                    "service", "Exists", (), "region", LabelRequirement("wrongkey", "DoesNotExist")
                ),
                term(
                    "service",
                    "In",
                    ("securityscan2",),
                    "region",
                    LabelRequirement("service", "NotIn", ("WrongValue",)),
                ),
            )
        )
        .build(),
        (EXISTING,),
        (NODE1,),
        {"node1": AFFINITY_RULES_NOT_MATCH},
    ),
    Case(
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        POD.labels(S1)
        .pod_terms(
            affinity=(term("service", "In", ("securityscan", "value2"), "region"),),
            anti_affinity=(term("service", "In", ("securityscan", "value2"), "zone"),),
        )
        .build(),
        (EXISTING,),
        (NODE1,),
        {"node1": ANTI_AFFINITY_RULES_NOT_MATCH},
    ),
    Case(
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
        "symmetry with the existing pod",
        POD.labels(SECURITYSCAN)
        .pod_terms(
            affinity=(term("service", "In", ("securityscan", "value2"), "region"),),
            anti_affinity=(term("service", "In", ("antivirusscan", "value2"), "node"),),
        )
        .build(),
        (
            POD.named("existing")
            .labels(SECURITYSCAN)
            .on("node1")
            .pod_terms(anti_affinity=(term("service", "In", ("securityscan", "value2"), "zone"),))
            .build(),
        ),
        (NODE1,),
        {"node1": EXISTING_ANTI_AFFINITY_NOT_MATCH},
    ),
    Case(
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        POD.labels(SECURITYSCAN)
        .pod_terms(affinity=(term("service", "NotIn", ("securityscan", "value2"), "region"),))
        .build(),
        (
            POD.named("elsewhere").labels(SECURITYSCAN).on("node2").build(),
        ),  # node2 is not in the snapshot
        (NODE1,),
        {"node1": AFFINITY_RULES_NOT_MATCH},
    ),
    Case(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
        "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        POD.labels(SECURITYSCAN).build(),
        (
            POD.named("existing")
            .labels(SECURITYSCAN)
            .on("node1")
            .pod_terms(anti_affinity=(term("service", "In", ("securityscan", "value2"), "zone"),))
            .build(),
        ),
        (NODE1,),
        {"node1": EXISTING_ANTI_AFFINITY_NOT_MATCH},
    ),
    Case(
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each "
        "other on AffinityTerms",
        POD.labels(SECURITYSCAN)
        .pod_terms(
            anti_affinity=(
                term("service", "Exists", (), "zone"),
                term("security", "Exists", (), "zone"),
            )
        )
        .build(),
        (
            POD.named("existing")
            .labels(S1)
            .on("node1")
            .pod_terms(anti_affinity=(term("security", "Exists", (), "zone"),))
            .build(),
        ),
        (NODE1,),
        {"node1": ANTI_AFFINITY_RULES_NOT_MATCH},
    ),
    Case(
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
        "other on AffinityTerms",
        POD.labels(S1).pod_terms(anti_affinity=(term("security", "Exists", (), "zone"),)).build(),
        (
            POD.named("existing")
            .labels(SECURITYSCAN)
            .on("node1")
            .pod_terms(
                anti_affinity=(
                    term("service", "Exists", (), "zone"),
                    term("security", "Exists", (), "zone"),
                )
            )
            .build(),
        ),
        (NODE1,),
        {"node1": EXISTING_ANTI_AFFINITY_NOT_MATCH},
    ),
]


# --- podtopologyspread: TestSingleConstraint, TestMultipleConstraints --------------------


def foo_spread(max_skew: int, key: str, selector_key: str = "foo") -> SpreadConstraint:
    return SpreadConstraint(max_skew, key, PodSelector((LabelRequirement(selector_key, "Exists"),)))


FOUR_NODES = (
    make_node("node-a").labels({"zone": "zone1", "node": "node-a"}).build(),
    make_node("node-b").labels({"zone": "zone1", "node": "node-b"}).build(),
    make_node("node-x").labels({"zone": "zone2", "node": "node-x"}).build(),
    make_node("node-y").labels({"zone": "zone2", "node": "node-y"}).build(),
)


def existing(*where: str, namespace: str = NS) -> tuple[Pod, ...]:
    return tuple(
        POD.namespace(namespace).named(f"p-{i}").labels({"foo": ""}).on(node).build()
        for i, node in enumerate(where)
    )


SPREAD_2_1_0_3 = existing("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")

SPREAD_CASES = [
    Case(
        "no existing pods",
        POD.labels({"foo": ""}).pod_terms(spread=(foo_spread(1, "zone"),)).build(),
        (),
        FOUR_NODES,
        dict.fromkeys(("node-a", "node-b", "node-x", "node-y"), ""),
    ),
    Case(
        "existing pods in a different namespace do not count",
        POD.labels({"foo": ""}).pod_terms(spread=(foo_spread(1, "zone"),)).build(),
        (
            *existing("node-a", namespace="ns1"),
            *existing("node-a", namespace="ns2"),
            *existing("node-x", "node-y"),
        ),
        FOUR_NODES,
        {"node-a": "", "node-b": "", "node-x": SPREAD_NOT_MATCH, "node-y": SPREAD_NOT_MATCH},
    ),
    Case(
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        POD.labels({"foo": ""}).pod_terms(spread=(foo_spread(1, "zone"),)).build(),
        existing("node-a", "node-b", "node-x", "node-y"),
        (
            FOUR_NODES[0],
            make_node("node-b").labels({"zon": "zone1", "node": "node-b"}).build(),
            FOUR_NODES[2],
            FOUR_NODES[3],
        ),
        {
            "node-a": "",
            "node-b": SPREAD_MISSING_LABEL,
            "node-x": SPREAD_NOT_MATCH,
            "node-y": SPREAD_NOT_MATCH,
        },
    ),
    Case(
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        POD.labels({"foo": ""}).pod_terms(spread=(foo_spread(1, "node"),)).build(),
        SPREAD_2_1_0_3,
        FOUR_NODES,
        {
            "node-a": SPREAD_NOT_MATCH,
            "node-b": SPREAD_NOT_MATCH,
            "node-x": "",
            "node-y": SPREAD_NOT_MATCH,
        },
    ),
    Case(
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        POD.labels({"foo": ""}).pod_terms(spread=(foo_spread(2, "node"),)).build(),
        SPREAD_2_1_0_3,
        FOUR_NODES,
        {"node-a": SPREAD_NOT_MATCH, "node-b": "", "node-x": "", "node-y": SPREAD_NOT_MATCH},
    ),
    Case(
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        POD.labels({"bar": ""}).pod_terms(spread=(foo_spread(1, "node"),)).build(),
        SPREAD_2_1_0_3,
        FOUR_NODES,
        {"node-a": SPREAD_NOT_MATCH, "node-b": "", "node-x": "", "node-y": SPREAD_NOT_MATCH},
    ),
    Case(
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        POD.labels({"foo": ""})
        .pod_terms(spread=(foo_spread(1, "node"),))
        .node_affinity(
            *(NodeSelectorTerm((LabelRequirement("node", "In", ("node-a", "node-y")),)),)
        )
        .build(),
        SPREAD_2_1_0_3,
        FOUR_NODES,
        # upstream's Filter alone (NodeAffinity not run): node-b and node-x pass it too
        {"node-a": "", "node-b": "", "node-x": "", "node-y": SPREAD_NOT_MATCH},
    ),
    Case(
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        POD.labels({"foo": ""})
        .pod_terms(spread=(foo_spread(1, "zone"), foo_spread(1, "node")))
        .build(),
        SPREAD_2_1_0_3,
        FOUR_NODES,
        {
            "node-a": SPREAD_NOT_MATCH,
            "node-b": SPREAD_NOT_MATCH,
            "node-x": "",
            "node-y": SPREAD_NOT_MATCH,
        },
    ),
]


@pytest.mark.parametrize("case", AFFINITY_CASES, ids=lambda c: c.name[:80])
def test_it_filters_as_interpodaffinity_upstream_table(case: Case) -> None:
    assert run(case) == case.want


@pytest.mark.parametrize("case", SPREAD_CASES, ids=lambda c: c.name[:80])
def test_it_filters_as_podtopologyspread_upstream_table(case: Case) -> None:
    assert run(case) == case.want
