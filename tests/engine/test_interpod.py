"""InterPodAffinity and PodTopologySpread in the placement: pods placed during the
simulation count for later pods, gang members included; a pod without terms is
held back by a placed pod's anti-affinity; parsing follows the API's defaults.

Expectations worked out by hand from kube-scheduler's
``interpodaffinity/filtering.go`` and ``podtopologyspread/filtering.go``.
"""

from __future__ import annotations

from typing import Any

from recommender.engine.scheduler.interpod import (
    ANTI_AFFINITY_RULES_NOT_MATCH,
    EXISTING_ANTI_AFFINITY_NOT_MATCH,
)
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import KubeObject, as_dicts, kube_object, node_object, pod_object
from topology.kube.parse import parse_objects

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


ZONE_NODE = node_object("").hostname().allocatable(cpu="8", memory="64Gi", pods="110")
ML_POD = pod_object("ml", "").requests(cpu="1")


def anti(app: str, key: str = HOST, **extra: Any) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key, **extra}
    return {
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    }


def parsed(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects((("t.yaml", o) for o in as_dicts(*objects)), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def bound_nodes(cluster) -> dict[str, str]:  # type: ignore[no-untyped-def]
    result = place(cluster, pending_workloads(cluster))
    return {b.pod: b.node for o in result.outcomes for b in o.bindings}


def test_it_spreads_gang_members_with_hostname_anti_affinity_one_per_node() -> None:
    # 3 members, each anti-affine to app=w on hostname, 3 nodes with room for all on one:
    # member 2 sees member 1 (placed in this very gang) and so on -> 3 distinct nodes.
    member = ML_POD.labels({"app": "w", "scheduling.x-k8s.io/pod-group": "g"}).pod_spec(**anti("w"))
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1"),
        ZONE_NODE.named("n2").label(ZONE, "z1"),
        ZONE_NODE.named("n3").label(ZONE, "z2"),
        *(member.named(f"w{i}") for i in range(3)),
    )
    placed = bound_nodes(cluster)
    assert sorted(placed.values()) == ["n1", "n2", "n3"]


def test_it_fails_the_gang_when_members_outnumber_the_nodes_and_says_why() -> None:
    member = ML_POD.labels({"app": "w", "scheduling.x-k8s.io/pod-group": "g"}).pod_spec(**anti("w"))
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1"),
        ZONE_NODE.named("n2").label(ZONE, "z1"),
        *(member.named(f"w{i}") for i in range(3)),
    )
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert not outcome.placed
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.node_reasons == {ANTI_AFFINITY_RULES_NOT_MATCH: 2}
    assert outcome.diagnosis.gang_reason == "only 2 of 3 members fit"


def test_it_keeps_a_pod_without_terms_off_a_node_whose_placed_pod_repels_it() -> None:
    # "guard" (older) is placed on the only node during the simulation and repels
    # app=noisy on its host; "noisy" carries no term itself, so only the existing-pods
    # rule, reading the pod placed a moment before, keeps it off n1.
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1"),
        ML_POD.named("guard")
        .label("app", "guard")
        .pod_spec(**anti("noisy"))
        .created("2026-12-01T00:00:00Z"),
        ML_POD.named("noisy").label("app", "noisy").created("2026-12-01T00:00:01Z"),
    )
    guard, noisy = place(cluster, pending_workloads(cluster)).outcomes
    assert guard.placed and not noisy.placed
    assert noisy.diagnosis is not None
    assert noisy.diagnosis.node_reasons == {EXISTING_ANTI_AFFINITY_NOT_MATCH: 1}


def test_it_reports_existing_anti_affinity_for_a_running_pod() -> None:
    running = ML_POD.named("guard").label("app", "guard").pod_spec(**anti("noisy")).on("n1")
    noisy = ML_POD.named("noisy").label("app", "noisy")
    cluster = parsed(ZONE_NODE.named("n1").label(ZONE, "z1"), running, noisy)
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.node_reasons == {EXISTING_ANTI_AFFINITY_NOT_MATCH: 1}


def test_it_matches_namespaces_by_selector_when_namespace_objects_are_read() -> None:
    # the term selects app=db pods in namespaces labelled team=data; the db pod runs in
    # "warehouse" (team=data) on n1 -> n1 is refused, n2 taken.
    db = pod_object("warehouse", "db").requests(cpu="1").label("app", "db").on("n1")
    namespace = kube_object("v1", "Namespace", "warehouse").label("team", "data")
    term = anti("db", namespaceSelector={"matchLabels": {"team": "data"}})
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1"),
        ZONE_NODE.named("n2").label(ZONE, "z1"),
        namespace,
        db,
        ML_POD.named("etl").pod_spec(**term),
    )
    assert bound_nodes(cluster) == {"ml/etl": "n2"}


def test_it_calls_a_namespace_selector_unsupported_without_namespace_objects() -> None:
    term = anti("db", namespaceSelector={"matchLabels": {"team": "data"}})
    cluster = parsed(ZONE_NODE.named("n1").label(ZONE, "z1"), ML_POD.named("etl").pod_spec(**term))
    (etl,) = cluster.pods
    assert etl.unsupported == (
        "podAffinity namespaceSelector needs the Namespace objects (none were read)",
    )
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert not outcome.placed and outcome.diagnosis is not None
    assert outcome.diagnosis.summary.startswith("unsupported: ")


def test_it_keeps_preferred_terms_and_schedule_anyway_out_of_the_required_terms() -> None:
    spec = {
        "affinity": {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": {"topologyKey": ZONE}}
                ]
            }
        },
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}
        ],
    }
    (parsed_pod,) = parsed(ML_POD.named("p").pod_spec(**spec)).pods
    assert not parsed_pod.pod_terms


def test_it_merges_match_label_keys_into_the_spread_selector() -> None:
    # matchLabelKeys [rev]: only pods of the same revision count (podtopologyspread/common.go)
    spec = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "w"}},
                "matchLabelKeys": ["rev"],
            }
        ]
    }
    (parsed_pod,) = parsed(ML_POD.named("p").labels({"app": "w", "rev": "2"}).pod_spec(**spec)).pods
    (constraint,) = parsed_pod.pod_terms.spread
    assert constraint.selector.matches({"app": "w", "rev": "2"})
    assert not constraint.selector.matches({"app": "w", "rev": "1"})
    assert (
        constraint.min_domains,
        constraint.honor_node_affinity,
        constraint.honor_node_taints,
    ) == (
        1,
        True,
        False,
    )


def test_it_rejects_a_spread_constraint_without_max_skew() -> None:
    spec = {
        "topologySpreadConstraints": [{"topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]
    }
    snapshot = parse_objects(
        [("t.yaml", ML_POD.named("p").pod_spec(**spec).dict())], cluster_name="t"
    )
    assert [str(e) for e in snapshot.errors] == [
        "t.yaml: Pod/ml/p: spec.topologySpreadConstraints[0].maxSkew: required"
    ]
