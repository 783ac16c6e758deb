"""NodeResourcesBalancedAllocation as each kube-scheduler release scores it.

kubernetes/kubernetes ``pkg/scheduler/framework/plugins/noderesources/
balanced_allocation.go``, ``balancedResourceScorer``: up to 1.35 ``int64((1 - std) *
MaxNodeScore)`` of the cpu and memory fractions after placing the pod; from 1.36
(#135573, no feature gate) ``MaxNodeScore/2 + (MaxNodeScore/2 + withPod - withoutPod)
/ 2``, how much the pod improves the node's balance. The cases are the rows of
upstream's ``balanced_allocation_test.go`` ``TestNodeResourcesBalancedAllocation``
(cpu in millicores, memory in bytes, as there): its expected 1.35 scores, and the 1.36
scores worked out by hand from the same rows.
"""

import random

import pytest

from recommender.engine.scheduler.profiles import (
    balanced_allocation,
    balanced_allocation_1_36,
    profile_named,
    scheduler_version,
    versioned,
)
from recommender.engine.scheduler.scores import Candidate, ScoreContext, policy_named
from recommender.engine.scheduler.state import ClusterState
from tests.builders import make_node, make_pod
from topology.model.hardware import Cluster, Resources

CTX = ScoreContext(rng=random.Random(0))
# upstream's pod specs: cpuOnly 1000m + 2000m, memory 0; cpuAndMemory 3000m, 5000 bytes
CPU_ONLY = Resources(3_000, 0)
CPU_AND_MEMORY = Resources(3_000, 5_000)


def _score(rule: object, node: tuple[int, int], held: Resources | None, pod: Resources) -> float:
    n = make_node("n").resources(Resources(node[0], node[1], pods=110)).build()
    pods = (make_pod("held", "t").resources(held).on("n").build(),) if held else ()
    state = ClusterState.from_cluster(Cluster("c", nodes=(n,), pods=pods))
    new = make_pod("new", "t").resources(pod).build()
    return rule(Candidate(state.info("n"), state.alloc("n"), new, (), 0), CTX)  # type: ignore[operator]


ROWS = [
    # (upstream row, node cpu/memory, pod held there, the pod, 1.35 score, 1.36 score)
    # "nothing scheduled, resources requested, differently sized nodes", node1:
    # 1.35 fractions 0.75, 0.5 → std 0.125 → 87; 1.36 before 0, 0 → 100: 50 + (50+87-100)//2 = 68
    ("empty node1", (4_000, 10_000), None, CPU_AND_MEMORY, 87, 68),
    # node2: 0.5, 0.5 → 100; 1.36 no change in balance (100 → 100): 75
    ("empty node2", (6_000, 10_000), None, CPU_AND_MEMORY, 100, 75),
    # "resources requested, pods scheduled with resources", node1 (cpuOnly held):
    # 0.6, 0.25 → std 0.175 → 82; before 0.3, 0 → std 0.15 → 85: 50 + (50+82-85)//2 = 73
    ("held cpu only", (10_000, 20_000), CPU_ONLY, CPU_AND_MEMORY, 82, 73),
    # node2 (cpuAndMemory held): 0.6, 0.5 → 95; before 0.3, 0.25 → std 0.025 → 97: 74
    ("held cpu and memory", (10_000, 20_000), CPU_AND_MEMORY, CPU_AND_MEMORY, 95, 74),
    # "... differently sized nodes", node2 10000m/50000: 0.6, 0.2 → 80; before 0.3, 0.1 → 90: 70
    ("bigger memory", (10_000, 50_000), CPU_AND_MEMORY, CPU_AND_MEMORY, 80, 70),
    # "requested resources at node capacity", pod cpuOnly: node1 (cpuOnly held) 1, 0 → 50;
    # before 0.5, 0 → 75: 50 + (50+50-75)//2 = 62
    ("at capacity, node1", (6_000, 10_000), CPU_ONLY, CPU_ONLY, 50, 62),
    # node2 (cpuAndMemory held) 1, 0.5 → 75; before 0.5, 0.5 → 100: 50 + (50+75-100)//2 = 62
    ("at capacity, node2", (6_000, 10_000), CPU_AND_MEMORY, CPU_ONLY, 75, 62),
]


@pytest.mark.parametrize(("row", "node", "held", "pod", "score", "_"), ROWS)
def test_it_scores_the_balance_after_placing_up_to_1_35(
    row: str, node: tuple[int, int], held: Resources | None, pod: Resources, score: int, _: int
) -> None:
    assert _score(balanced_allocation, node, held, pod) == score


@pytest.mark.parametrize(("row", "node", "held", "pod", "_", "score"), ROWS)
def test_it_scores_how_much_the_pod_improves_the_balance_from_1_36(
    row: str, node: tuple[int, int], held: Resources | None, pod: Resources, _: int, score: int
) -> None:
    assert _score(balanced_allocation_1_36, node, held, pod) == score


def test_it_skips_a_best_effort_pod_in_both_releases() -> None:
    # "nothing scheduled, nothing requested, skip in PreScore": no score at all (0 here)
    for rule in (balanced_allocation, balanced_allocation_1_36):
        assert _score(rule, (4_000, 10_000), CPU_ONLY, Resources(0, 0)) == 0


def test_it_reads_the_release_from_a_version_string() -> None:
    assert scheduler_version("v1.36.2 (vendored k8s.io/kubernetes)") == "1.36"
    assert scheduler_version("v1.35.4") == "1.35"
    assert scheduler_version("1.31") == "1.35"  # the 1.35 formula is the older one
    assert scheduler_version("v1.37.0-alpha.1") == "1.36"  # newest modelled
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        scheduler_version("latest")


def test_it_names_a_profile_per_release_and_keeps_1_35_unversioned() -> None:
    assert versioned("kube-default", "v1.36.2") == "kube-default:1.36"
    assert versioned("fgd", "v1.36.2") == "fgd"  # FGD has no BalancedAllocation term
    assert profile_named("most-allocated:1.36") == "most-allocated:1.36"
    with pytest.raises(ValueError, match="kube-default:1.35, kube-default:1.36"):
        profile_named("kube-default:1.34")
    weights = dict(policy_named("kube-default:1.36").weights)
    assert "balanced_allocation_1_36" in weights
    assert policy_named("kube-default").weights == policy_named("kube-default:1.35").weights
