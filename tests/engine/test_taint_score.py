"""TaintToleration's Score in the kube-default profile: PreferNoSchedule taints repel.

Worked by hand from kubernetes/kubernetes ``pkg/scheduler/framework/plugins/
tainttoleration/taint_toleration.go`` (``Score``: intolerable PreferNoSchedule taints
counted; ``NormalizeScore``: ``DefaultNormalizeScore(100, reverse=true)``), the weight 3
of ``pkg/scheduler/apis/config/v1/default_plugins.go``, and ``noderesources/
least_allocated.go`` / ``balanced_allocation.go`` for the resource scores.
"""

from __future__ import annotations

from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.taint_score import normalized
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import KubeObject, as_dicts, node_object, pod_object
from topology.kube.parse import parse_objects

SOFT = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}


CPU_NODE = node_object("").hostname().allocatable(cpu="8", memory="32Gi", pods="110")
ML_POD = pod_object("ml", "").requests(memory="4Gi")


def placed_on(*objects: KubeObject) -> str:
    snapshot = parse_objects((("t.yaml", o) for o in as_dicts(*objects)), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    cluster = snapshot.cluster
    outcome = place(cluster, pending_workloads(cluster)).outcomes[0]
    return outcome.bindings[0].node


def test_it_keeps_a_pod_off_a_node_whose_prefer_no_schedule_taint_it_does_not_tolerate() -> None:
    # web (1 cpu, 4 GiB). spot: empty, PreferNoSchedule. busy: guest holds 4 cpu, 4 GiB.
    # LeastAllocated: spot (7/8 → 87, 28/32 → 87) = 87; busy (3/8 → 37, 24/32 → 75) = 56.
    # BalancedAllocation: spot 1/8 and 4/32, std 0 → 100; busy 5/8 and 8/32, std 0.1875 → 81.
    # TaintToleration: counts spot 1, busy 0 → normalised spot 0, busy 100, weight 3.
    # spot 87 + 100 + 0 = 187 < busy 56 + 81 + 300 = 437: busy (without it, spot).
    assert (
        placed_on(
            CPU_NODE.named("spot").taints(SOFT),
            CPU_NODE.named("busy").taints(),
            ML_POD.named("guest").requests(cpu="4").on("busy"),
            ML_POD.named("web").requests(cpu="1"),
        )
        == "busy"
    )


def test_it_lets_a_pod_that_tolerates_the_taint_take_the_emptier_node() -> None:
    toleration = {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}
    assert (
        placed_on(
            CPU_NODE.named("spot").taints(SOFT),
            CPU_NODE.named("busy").taints(),
            ML_POD.named("guest").requests(cpu="4").on("busy"),
            ML_POD.named("web").requests(cpu="1").pod_spec(tolerations=[toleration]),
        )
        == "spot"
    )


def test_it_normalises_the_counts_over_the_feasible_nodes_only() -> None:
    # DefaultNormalizeScore(100, reverse): max count 2 → 100 − 100·c/2
    assert normalized({"a": 2, "b": 1}, ["a", "b", "c"]) == {"a": 0, "b": 50, "c": 100}
    assert normalized({"a": 2}, ["c"]) == {"c": 100}
