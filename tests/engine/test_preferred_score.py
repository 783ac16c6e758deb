"""The kube-default profile's preferred scores: NodeAffinity, InterPodAffinity,
PodTopologySpread (ScheduleAnyway), weight 2 each.

Worked by hand from kubernetes/kubernetes ``pkg/scheduler/framework/plugins/``:
``nodeaffinity/node_affinity.go`` (``Score``: weights of the matched preferred terms;
``NormalizeScore``: ``DefaultNormalizeScore(100, false)``), ``interpodaffinity/
scoring.go`` (``processExistingPod``, ``Score``, min-max ``NormalizeScore``; the
``hardPodAffinityWeight`` 1 of ``apis/config/v1/defaults.go``), ``podtopologyspread/
scoring.go`` (``scoreForCount``: ``count·log(size + 2) + maxSkew − 1``; ``NormalizeScore``:
``100·(max + min − s)/max``), the weights of ``apis/config/v1/default_plugins.go``, and
``noderesources/least_allocated.go`` / ``balanced_allocation.go`` for the resource scores.

In the placement tests the pod ``web`` (1 cpu, 4 GiB) chooses between two 8-cpu, 32-GiB
nodes. Resource scores (LeastAllocated + BalancedAllocation):
- a node holding a 1-cpu, 4-GiB pod: cpu 2/8 and memory 8/32 → 75 + 100 = 175;
- a node holding a 4-cpu, 4-GiB pod: cpu 5/8 → 37, memory 8/32 → 75, (37+75)//2 = 56;
  balanced std (0.625 − 0.25)/2 = 0.1875 → 81; 137;
- an empty node: 87 + 100 = 187.
So without a preferred score ``web`` takes the emptier node; each test's preferred score
(normalised 0 vs 100, × 2 = 200) takes it to the other one.
"""

from __future__ import annotations

import json
from typing import Any

from recommender.engine.scheduler.placement import place, place_unindexed
from recommender.engine.scheduler.preferred_score import (
    inter_pod_affinity,
    node_affinity,
    topology_spread,
)
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import KubeObject, as_dicts, node_object, pod_object
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster
from topology.model.serialize import cluster_from_json, cluster_to_json

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


CPU_NODE = node_object("").hostname().allocatable(cpu="8", memory="32Gi", pods="110")
ML_POD = pod_object("ml", "").requests(memory="4Gi")


def cluster_of(*objects: KubeObject) -> Cluster:
    snapshot = parse_objects((("t.yaml", o) for o in as_dicts(*objects)), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def placed_on(*objects: KubeObject) -> str:
    cluster = cluster_of(*objects)
    return place(cluster, pending_workloads(cluster)).outcomes[0].bindings[0].node


def pod_term(weight: int, app: str, key: str = HOST) -> dict[str, Any]:
    return {
        "weight": weight,
        "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key},
    }


def anyway(key: str, max_skew: int, app: str) -> dict[str, Any]:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": app}},
    }


def prefers_zone(weight: int, zone: str) -> dict[str, Any]:
    expression = {"key": ZONE, "operator": "In", "values": [zone]}
    return {"weight": weight, "preference": {"matchExpressions": [expression]}}


def test_it_reads_preferred_terms_and_schedule_anyway_constraints_into_the_pod() -> None:
    cluster = cluster_of(
        ML_POD.named("web")
        .requests(cpu="1")
        .pod_spec(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [prefers_zone(7, "b")]
                },
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [pod_term(40, "db")]
                },
            },
            topologySpreadConstraints=[anyway(ZONE, 2, "web")],
        )
    )
    preferred = cluster.pods[0].preferred
    assert (
        [w.weight for w in preferred.node],
        [(w.weight, w.term.topology_key, w.term.namespaces) for w in preferred.anti_affinity],
        [(c.topology_key, c.max_skew) for c in preferred.spread],
        cluster.pods[0].pod_terms.spread,
    ) == ([7], [(40, HOST, ("ml",))], [(ZONE, 2)], ())


def test_it_takes_the_node_a_preferred_node_affinity_term_matches() -> None:
    # NodeAffinity: b matches (10) → 100, a 0; × 2: b 137 + 200 = 337 > a 187
    affinity = {
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [prefers_zone(10, "b")]}
    }
    assert (
        placed_on(
            CPU_NODE.named("a").labels({ZONE: "a"}),
            CPU_NODE.named("b").labels({ZONE: "b"}),
            ML_POD.named("guest").requests(cpu="4").on("b"),
            ML_POD.named("web").requests(cpu="1").pod_spec(affinity=affinity),
        )
        == "b"
    )


def test_it_normalises_node_affinity_by_the_highest_sum() -> None:
    # terms 30 (zone b) and 10 (disk ssd): both 40 → 100, one 10 → 100·10//40 = 25, none 0
    ssd = {
        "weight": 10,
        "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
    }
    cluster = cluster_of(
        CPU_NODE.named("both").label("disk", "ssd").labels({ZONE: "b"}),
        CPU_NODE.named("one").label("disk", "ssd"),
        CPU_NODE.named("none"),
        ML_POD.named("web")
        .requests(cpu="1")
        .pod_spec(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [prefers_zone(30, "b"), ssd]
                }
            }
        ),
    )
    scores = node_affinity(cluster.pods[0], cluster.nodes)
    assert scores == {"both": 100, "one": 25, "none": 0}


def test_it_takes_the_node_of_a_pod_it_prefers_to_run_beside() -> None:
    # InterPodAffinity: (hostname, busy) +50 → busy 100, idle 0; × 2: 337 > 187
    affinity = {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [pod_term(50, "db")]}
    }
    assert (
        placed_on(
            CPU_NODE.named("idle"),
            CPU_NODE.named("busy"),
            ML_POD.named("db").requests(cpu="4").on("busy").labels({"app": "db"}),
            ML_POD.named("web").requests(cpu="1").pod_spec(affinity=affinity),
        )
        == "busy"
    )


def test_it_keeps_off_the_node_of_a_running_pod_whose_preferred_anti_affinity_matches_it() -> None:
    # the existing pod's own term: (hostname, quiet) −100 → min-max quiet 0, busy 100;
    # × 2: busy 137 + 200 = 337 > quiet 175
    anti = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [pod_term(100, "web")]
        }
    }
    assert (
        placed_on(
            CPU_NODE.named("quiet"),
            CPU_NODE.named("busy"),
            ML_POD.named("db")
            .requests(cpu="1")
            .on("quiet")
            .labels({"app": "db"})
            .pod_spec(affinity=anti),
            ML_POD.named("guest").requests(cpu="4").on("busy"),
            ML_POD.named("web").requests(cpu="1").labels({"app": "web"}),
        )
        == "busy"
    )


def test_it_counts_a_running_pods_required_affinity_with_the_hard_weight() -> None:
    # db requires affinity to app=web: web matching it adds hardPodAffinityWeight 1 to
    # (hostname, here) → here 1, there 0 → min-max 100 and 0
    required = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}
            ]
        }
    }
    cluster = cluster_of(
        CPU_NODE.named("here"),
        CPU_NODE.named("there"),
        ML_POD.named("db")
        .requests(cpu="1")
        .on("here")
        .labels({"app": "db"})
        .pod_spec(affinity=required),
        ML_POD.named("web").requests(cpu="1").labels({"app": "web"}),
    )
    web = next(p for p in cluster.pods if p.name == "web")
    placed = [(n, tuple(p for p in cluster.pods if p.node_name == n.name)) for n in cluster.nodes]
    assert inter_pod_affinity(web, cluster.nodes, placed, {}) == {"here": 100, "there": 0}


def test_it_spreads_a_schedule_anyway_pod_away_from_its_matching_pods() -> None:
    # hostname, 2 feasible nodes: weight log(4) = 1.386; quiet 1 match → round(1.386) = 1,
    # busy 0 → 0; normalised quiet 100·(1+0−1)/1 = 0, busy 100; × 2: 337 > 175
    spread = [anyway(HOST, 1, "web")]
    assert (
        placed_on(
            CPU_NODE.named("quiet"),
            CPU_NODE.named("busy"),
            ML_POD.named("w1").requests(cpu="1").on("quiet").labels({"app": "web"}),
            ML_POD.named("guest").requests(cpu="4").on("busy"),
            ML_POD.named("web")
            .requests(cpu="1")
            .labels({"app": "web"})
            .pod_spec(topologySpreadConstraints=spread),
        )
        == "busy"
    )


def test_it_scores_zone_spread_by_domain_counts_and_ignores_nodes_without_the_key() -> None:
    # zone maxSkew 2, domains a and b (size 2, log 4 = 1.386): a holds 3 matching pods
    # → round(3·1.386 + 1) = 5 on a1 and a2; b: round(0 + 1) = 1; c1 lacks the key: 0.
    # normalised 100·(5 + 1 − s)/5: a 20, b 100
    running = [
        ML_POD.named(f"w{i}").requests(cpu="0.1").on("a1").labels({"app": "web"}) for i in range(3)
    ]
    cluster = cluster_of(
        CPU_NODE.named("a1").labels({ZONE: "a"}),
        CPU_NODE.named("a2").labels({ZONE: "a"}),
        CPU_NODE.named("b1").labels({ZONE: "b"}),
        CPU_NODE.named("c1"),
        *running,
        ML_POD.named("web")
        .requests(cpu="1")
        .labels({"app": "web"})
        .pod_spec(topologySpreadConstraints=[anyway(ZONE, 2, "web")]),
    )
    web = next(p for p in cluster.pods if p.name == "web")
    placed = [(n, tuple(p for p in cluster.pods if p.node_name == n.name)) for n in cluster.nodes]
    assert topology_spread(web, cluster.nodes, placed) == {"a1": 20, "a2": 20, "b1": 100, "c1": 0}


def test_it_places_as_the_unindexed_reference_does_with_preferred_scores() -> None:
    affinity = {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [pod_term(50, "db")]}
    }
    cluster = cluster_of(
        CPU_NODE.named("idle"),
        CPU_NODE.named("busy"),
        ML_POD.named("db").requests(cpu="4").on("busy").labels({"app": "db"}),
        *[
            ML_POD.named(f"web-{i}")
            .requests(cpu="1")
            .labels({"app": "web"})
            .pod_spec(affinity=affinity)
            for i in range(4)
        ],
    )
    workloads = pending_workloads(cluster)
    fast = place(cluster, workloads).outcomes
    reference = place_unindexed(cluster, workloads).outcomes
    assert [o.bindings for o in fast] == [o.bindings for o in reference]
    assert {b.node for o in fast for b in o.bindings} == {"busy"}


def test_it_keeps_preferred_terms_through_a_stored_snapshot() -> None:
    affinity = {
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [prefers_zone(7, "b")]},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [pod_term(5, "db")]},
    }
    cluster = cluster_of(
        ML_POD.named("web")
        .requests(cpu="1")
        .pod_spec(affinity=affinity, topologySpreadConstraints=[anyway(ZONE, 2, "web")])
    )
    restored = cluster_from_json(json.loads(json.dumps(cluster_to_json(cluster))))
    assert restored.pods[0].preferred == cluster.pods[0].preferred
