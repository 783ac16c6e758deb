"""Preemption in the placement (gangs all or nothing) and what it reads from objects
(PodDisruptionBudget, preemptionPolicy, startTime)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_gang, make_node, make_pod
from topology.kube.core.disruption import disruptions_allowed
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster, ModelError

# 8 A100s whose devices carry no capacity; an ml pod of 8 GPUs
A100 = (
    make_node()
    .allocatable(96, "1Ti", 110)
    .gpus(8, "A100", gpu_name="{node}-gpu{i}", device_name="{node}-dev{i}", capacity=None)
)
EIGHT_GPUS = make_pod(namespace="ml").requests(1).gpus(8)


def gang_cluster(members: int) -> Cluster:
    running = (
        EIGHT_GPUS.named("old-1").priority(-100).on("n1").build(),
        EIGHT_GPUS.named("old-2").priority(-100).on("n2").build(),
    )
    gang = make_gang("train", members, "ml").priority(100).build()
    pending = tuple(
        EIGHT_GPUS.named(f"train-{i}").priority(100).gang("ml/train").build()
        for i in range(members)
    )
    return Cluster(
        "c",
        nodes=(A100.named("n1").build(), A100.named("n2").build()),
        pods=(*running, *pending),
        gangs=(gang,),
    )


def test_it_lets_a_gang_preempt_when_every_member_then_fits() -> None:
    cluster = gang_cluster(2)
    (outcome,) = place(cluster, pending_workloads(cluster)).outcomes
    assert outcome.placed
    assert sorted(outcome.preempted) == ["ml/old-1", "ml/old-2"]
    assert sorted(b.node for b in outcome.bindings) == ["n1", "n2"]


def test_it_evicts_nothing_for_a_gang_that_would_still_not_fit_whole() -> None:
    """Three 8-GPU members, two 8-GPU nodes: even with both victims gone one member
    has nowhere to go, so nothing is evicted (all or nothing)."""
    cluster = gang_cluster(3)
    result = place(cluster, pending_workloads(cluster))
    (outcome,) = result.outcomes
    assert not outcome.placed and outcome.preempted == ()
    running = sorted(p.key for n in ("n1", "n2") for p in result.state.alloc(n).placed)
    assert running == ["ml/old-1", "ml/old-2"]


def test_it_never_evicts_a_pod_of_equal_priority() -> None:
    cluster = Cluster(
        "c",
        nodes=(A100.named("n1").build(),),
        pods=(
            EIGHT_GPUS.named("old").priority(100).on("n1").build(),
            EIGHT_GPUS.named("new").priority(100).build(),
        ),
    )
    (outcome,) = place(cluster, pending_workloads(cluster)).outcomes
    assert not outcome.placed and outcome.preempted == ()


# --- reading the objects -------------------------------------------------------------------


def budget(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "serve"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
        **({"status": status} if status is not None else {}),
    }


def web_pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "serve", "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "startTime": "2026-12-01T00:00:00Z"},
    }


def parsed(*objects: dict[str, Any]) -> Cluster:
    snapshot = parse_objects([("test.yaml", o) for o in objects], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        ({"minAvailable": 2}, 1),  # 3 healthy - 2
        ({"minAvailable": "50%"}, 1),  # 3 - ceil(1.5)
        ({"maxUnavailable": 1}, 1),
        ({"maxUnavailable": "50%"}, 2),  # ceil(1.5)
        ({"minAvailable": 5}, 0),  # never below zero
        ({}, 0),  # neither bound, no status: allows none
    ],
)
def test_it_works_out_the_allowance_from_the_spec_without_a_status(
    spec: dict[str, Any], allowed: int
) -> None:
    cluster = parsed(budget(spec), web_pod("w0"), web_pod("w1"), web_pod("w2"))
    (read,) = cluster.disruption_budgets
    assert disruptions_allowed(read, cluster.pods) == allowed


def test_it_takes_the_status_allowance_and_disrupted_pods_when_given() -> None:
    status = {"disruptionsAllowed": 0, "disruptedPods": {"w0": "2026-12-01T00:00:00Z"}}
    cluster = parsed(budget({"minAvailable": 1}, status), web_pod("w0"), web_pod("w1"))
    (read,) = cluster.disruption_budgets
    assert disruptions_allowed(read, cluster.pods) == 0
    assert read.disrupted_pods == frozenset({"w0"}) and read.key == "serve/web"
    assert "PodDisruptionBudget (policy/v1)" not in cluster.ignored


def test_it_reads_preemption_policy_and_start_time() -> None:
    never = web_pod("w0")
    never["spec"]["preemptionPolicy"] = "Never"
    (pod,) = parsed(never).pods
    assert pod.preemption_policy == "Never"
    assert pod.started == datetime(2026, 12, 1, tzinfo=UTC).timestamp()


def test_it_rejects_an_unknown_preemption_policy_naming_the_field() -> None:
    odd = web_pod("w0")
    odd["spec"]["preemptionPolicy"] = "Sometimes"
    snapshot = parse_objects([("test.yaml", odd)], cluster_name="t")
    (error,) = snapshot.errors
    assert isinstance(error, ModelError)
    assert "Pod/serve/w0" in str(error) and "spec.preemptionPolicy" in str(error)


def test_it_finds_the_same_victims_again_after_a_change_as_a_fresh_search() -> None:
    """The candidates kept on a state are searched again only where the state changed:
    after an eviction the next search picks what a search from scratch picks."""
    from recommender.engine.scheduler.filters import FilterContext
    from recommender.engine.scheduler.preemption import evict, find_victims
    from recommender.engine.scheduler.state import ClusterState

    running = (
        EIGHT_GPUS.named("a").priority(-100).on("n1").build(),
        EIGHT_GPUS.named("b").priority(-50).on("n2").build(),
        EIGHT_GPUS.named("c").priority(-10).on("n3").build(),
    )
    incoming = (
        EIGHT_GPUS.named("x").priority(100).build(),
        EIGHT_GPUS.named("y").priority(100).build(),
    )
    nodes = (A100.named("n1").build(), A100.named("n2").build(), A100.named("n3").build())
    cluster = Cluster("c", nodes=nodes, pods=(*running, *incoming))
    state, context = ClusterState.from_cluster(cluster), FilterContext()
    first = find_victims(cluster, state, incoming[0], context)
    assert first is not None and [p.key for p in first.pods] == ["ml/a"]
    evict(state, first)
    again = find_victims(cluster, state, incoming[1], context)
    fresh = find_victims(cluster, state.subset(state.node_names()), incoming[1], context)
    assert again is not None and fresh is not None
    assert (again.node, again.pods) == (fresh.node, fresh.pods)
    assert [p.key for p in again.pods] == ["ml/b"]


def test_the_kept_choice_after_an_eviction_breaks_ties_by_node_order() -> None:
    """pickOneNodeForPreemption keeps the first node (node order) among equal candidates:
    after the chosen node's victim is evicted, the next search over the kept candidates
    must pick n3 (listed before n2), not the name order's n2; a third search, after n3's
    eviction, leaves n2."""
    from recommender.engine.scheduler.filters import FilterContext
    from recommender.engine.scheduler.preemption import evict, find_victims
    from recommender.engine.scheduler.state import ClusterState

    running = (
        EIGHT_GPUS.named("a").priority(-50).on("n1").build(),
        EIGHT_GPUS.named("b").priority(-10).on("n2").build(),
        EIGHT_GPUS.named("c").priority(-10).on("n3").build(),
    )
    incoming = tuple(EIGHT_GPUS.named(name).priority(100).build() for name in ("x", "y", "z"))
    nodes = (A100.named("n3").build(), A100.named("n2").build(), A100.named("n1").build())
    cluster = Cluster("c", nodes=nodes, pods=(*running, *incoming))
    state, context = ClusterState.from_cluster(cluster), FilterContext()
    chosen = []
    for pod in incoming:
        victims = find_victims(cluster, state, pod, context)
        assert victims is not None
        chosen.append((victims.node, [p.key for p in victims.pods]))
        evict(state, victims)
    assert chosen == [("n1", ["ml/a"]), ("n3", ["ml/c"]), ("n2", ["ml/b"])]
