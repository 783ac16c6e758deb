"""Scoring profiles kube-default and most-allocated, checked against values worked
out by hand from kube-scheduler's score plugins (``noderesources/least_allocated.go``,
``most_allocated.go``, ``balanced_allocation.go``, ``resource_allocation.go``)."""

import random

import pytest

from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.profiles import (
    PROFILES,
    balanced_allocation,
    least_allocated,
    most_allocated_gpu,
    profile_named,
)
from recommender.engine.scheduler.scores import Candidate, ScoreContext, policy_named
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_node, make_pod
from topology.model.hardware import Cluster, Node, Pod

GIB = 1024**3


# a 16-cpu, 64Gi node of 8 H100s; an ml pod
H100 = make_node().hostname().allocatable(16, "64Gi", 110).gpus(8, "H100")
ML_POD = make_pod(namespace="ml")


def chosen(cluster: Cluster, profile: str, seed: int = 0) -> str:
    result = place(
        cluster, pending_workloads(cluster), options=PlacementOptions(policy=profile, seed=seed)
    )
    (outcome,) = result.outcomes
    assert outcome.placed
    return outcome.bindings[0].node


def candidate(n: Node, p: Pod) -> Candidate:
    state = ClusterState.from_cluster(Cluster("c", nodes=(n,)))
    return Candidate(state.info(n.name), state.alloc(n.name), p, (), 0)


CTX = ScoreContext(rng=random.Random(0))


def test_least_allocated_and_balanced_allocation_on_one_node() -> None:
    # cpu (16000-8000)*100//16000 = 50, memory (64-8)*100//64 = 87 → (50+87)//2 = 68
    # fractions 0.5 and 0.125: std 0.1875 → int(81.25) = 81
    c = candidate(H100.named("n1").build(), ML_POD.named("p").requests(8, "8Gi").build())
    assert least_allocated(c, CTX) == 68
    assert balanced_allocation(c, CTX) == 81


def test_a_pod_requesting_neither_cpu_nor_memory_is_skipped_by_balanced_allocation() -> None:
    assert (
        balanced_allocation(candidate(H100.named("n1").build(), ML_POD.named("p").build()), CTX)
        == 0
    )


def test_kube_default_prefers_the_emptier_node() -> None:
    # n1 holds cpu 8000, 32 GiB, 4 GPUs; the pod asks cpu 1000, 1 GiB, 1 GPU.
    # n1: LA (43+48)//2 = 45, BA fractions 9/16, 33/64 → 97: 142
    # n2: LA (93+98)//2 = 95, BA 1/16, 1/64 → 97: 192
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(), H100.named("n2").build()),
        pods=(
            ML_POD.named("held").requests(8, "32Gi").gpus(4).on("n1").build(),
            ML_POD.named("new").requests(1, "1Gi").gpus(1).build(),
        ),
    )
    assert chosen(cluster, "kube-default") == "n2"
    # most-allocated (cpu 1, memory 1, GPU 3): n1 (56+51+3*62)//5 = 58 + 97 = 155,
    # n2 (6+1+3*12)//5 = 8 + 97 = 105
    assert chosen(cluster, "most-allocated") == "n1"


def test_kube_default_does_not_score_gpus_and_breaks_ties_at_random() -> None:
    # equal cpu and memory held on both nodes; only n1's GPUs are half used
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(), H100.named("n2").build()),
        pods=(
            ML_POD.named("held-1").requests(1, "1Gi").gpus(4).on("n1").build(),
            ML_POD.named("held-2").requests(1, "1Gi").on("n2").build(),
            ML_POD.named("new").requests(1, "1Gi").gpus(1).build(),
        ),
    )
    picks = {chosen(cluster, "kube-default", seed) for seed in range(20)}
    assert picks == {"n1", "n2"}
    # most-allocated scores nvidia.com/gpu: the fuller GPUs win every time
    assert {chosen(cluster, "most-allocated", seed) for seed in range(5)} == {"n1"}


def test_pods_without_requests_count_as_100m_and_200mib_for_least_allocated() -> None:
    # n1 holds a pod without requests (NonZeroRequested: 100m, 200 MiB), n2 nothing.
    # The new pod without requests also counts 100m, 200 MiB:
    # n1 cpu (1000-200)*100//1000 = 80, memory (1024-400)*100//1024 = 60 → 70
    # n2 cpu 90, memory (1024-200)*100//1024 = 80 → 85; BalancedAllocation skips it
    small = H100.allocatable(1, "1Gi").gpus(0)
    cluster = Cluster(
        "c",
        nodes=(small.named("n1").build(), small.named("n2").build()),
        pods=(ML_POD.named("held").on("n1").build(), ML_POD.named("new").build()),
    )
    assert {chosen(cluster, "kube-default", seed) for seed in range(10)} == {"n2"}
    state = ClusterState.from_cluster(cluster)
    new = cluster.pods[1]
    scores = [
        least_allocated(Candidate(state.info(n), state.alloc(n), new, (), 0), CTX)
        for n in ("n1", "n2")
    ]
    assert scores == [70, 85]


def test_most_allocated_skips_gpus_for_a_pod_that_asks_for_none() -> None:
    # cpu (8000+1000)*100//16000 = 56, memory 2*100//64 = 3 → (56+3)//2 = 29
    n = H100.named("n1").build()
    state = ClusterState.from_cluster(
        Cluster(
            "c",
            nodes=(n,),
            pods=(ML_POD.named("held").requests(8, "1Gi").gpus(8).on("n1").build(),),
        )
    )
    c = Candidate(
        state.info("n1"),
        state.alloc("n1"),
        ML_POD.named("p").requests(1, "1Gi").build(),
        (),
        0,
    )
    assert most_allocated_gpu(c, CTX) == 29


def test_profiles_are_policies_and_unknown_names_are_refused() -> None:
    assert PROFILES == ("kube-default", "most-allocated", "fgd")
    assert all(policy_named(p).name == p for p in PROFILES)
    assert policy_named("default").name == "kube-default"
    with pytest.raises(ValueError, match="kube-default, most-allocated, fgd"):
        profile_named("bestfit")
