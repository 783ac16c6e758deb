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
from topology.kube.parse import parse_objects

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str, cpu: str = "8") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {ZONE: zone, HOST: name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
    }


def pod(name: str, labels: dict[str, str], spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "labels": labels, **meta},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], **spec},
        "status": {"phase": "Pending"},
    }


def anti(app: str, key: str = HOST, **extra: Any) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key, **extra}
    return {
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    }


def parsed(*objects: dict[str, Any]):  # type: ignore[no-untyped-def]
    snapshot = parse_objects((("t.yaml", o) for o in objects), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def bound_nodes(cluster) -> dict[str, str]:  # type: ignore[no-untyped-def]
    result = place(cluster, pending_workloads(cluster))
    return {b.pod: b.node for o in result.outcomes for b in o.bindings}


def test_it_spreads_gang_members_with_hostname_anti_affinity_one_per_node() -> None:
    # 3 members, each anti-affine to app=w on hostname, 3 nodes with room for all on one:
    # member 2 sees member 1 (placed in this very gang) and so on -> 3 distinct nodes.
    group = {"scheduling.x-k8s.io/pod-group": "g"}
    cluster = parsed(
        node("n1", "z1"),
        node("n2", "z1"),
        node("n3", "z2"),
        *(pod(f"w{i}", {"app": "w", **group}, anti("w")) for i in range(3)),
    )
    placed = bound_nodes(cluster)
    assert sorted(placed.values()) == ["n1", "n2", "n3"]


def test_it_fails_the_gang_when_members_outnumber_the_nodes_and_says_why() -> None:
    group = {"scheduling.x-k8s.io/pod-group": "g"}
    cluster = parsed(
        node("n1", "z1"),
        node("n2", "z1"),
        *(pod(f"w{i}", {"app": "w", **group}, anti("w")) for i in range(3)),
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
        node("n1", "z1"),
        pod("guard", {"app": "guard"}, anti("noisy"), creationTimestamp="2026-12-01T00:00:00Z"),
        pod("noisy", {"app": "noisy"}, {}, creationTimestamp="2026-12-01T00:00:01Z"),
    )
    guard, noisy = place(cluster, pending_workloads(cluster)).outcomes
    assert guard.placed and not noisy.placed
    assert noisy.diagnosis is not None
    assert noisy.diagnosis.node_reasons == {EXISTING_ANTI_AFFINITY_NOT_MATCH: 1}


def test_it_reports_existing_anti_affinity_for_a_running_pod() -> None:
    running = pod("guard", {"app": "guard"}, {**anti("noisy"), "nodeName": "n1"})
    running["status"] = {"phase": "Running"}
    cluster = parsed(node("n1", "z1"), running, pod("noisy", {"app": "noisy"}, {}))
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.node_reasons == {EXISTING_ANTI_AFFINITY_NOT_MATCH: 1}


def test_it_matches_namespaces_by_selector_when_namespace_objects_are_read() -> None:
    # the term selects app=db pods in namespaces labelled team=data; the db pod runs in
    # "warehouse" (team=data) on n1 -> n1 is refused, n2 taken.
    db = pod("db", {"app": "db"}, {"nodeName": "n1"})
    db["metadata"]["namespace"] = "warehouse"
    db["status"] = {"phase": "Running"}
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "warehouse", "labels": {"team": "data"}},
    }
    term = anti("db", namespaceSelector={"matchLabels": {"team": "data"}})
    cluster = parsed(node("n1", "z1"), node("n2", "z1"), namespace, db, pod("etl", {}, term))
    assert bound_nodes(cluster) == {"ml/etl": "n2"}


def test_it_calls_a_namespace_selector_unsupported_without_namespace_objects() -> None:
    term = anti("db", namespaceSelector={"matchLabels": {"team": "data"}})
    cluster = parsed(node("n1", "z1"), pod("etl", {}, term))
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
    (parsed_pod,) = parsed(pod("p", {}, spec)).pods
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
    (parsed_pod,) = parsed(pod("p", {"app": "w", "rev": "2"}, spec)).pods
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
    snapshot = parse_objects([("t.yaml", pod("p", {}, spec))], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == [
        "t.yaml: Pod/ml/p: spec.topologySpreadConstraints[0].maxSkew: required"
    ]
