"""The placement caches a state keeps (``caches.SharedMemo``) outlive an edit of the
pending pods: the relaxations' plans start from the scheduler pass's score index,
array tables and preemption candidates instead of from nothing."""

from dataclasses import replace

from recommender.engine.scheduler.caches import SharedMemo
from recommender.engine.scheduler.scores import policy_named
from recommender.engine.scheduler.state import ClusterState
from tests.engine.test_placement import H100, TEAM_A_POD
from topology.model.hardware import Cluster

RUNNING = TEAM_A_POD.named("running").gpus(4).on("n1").priority(5).build()
PENDING = TEAM_A_POD.named("pending").gpus(8).build()
CLUSTER = Cluster("c", nodes=(H100.named("n1").build(),), pods=(RUNNING, PENDING))
POLICY = policy_named("kube-default")


def memo_of(cluster: Cluster, state: ClusterState) -> SharedMemo:
    return SharedMemo.of(cluster, state, {}, None, POLICY, None)


def test_it_shares_the_memo_with_the_cluster_whose_pending_pod_was_edited() -> None:
    state = ClusterState.from_cluster(CLUSTER)
    edited = replace(CLUSTER, pods=(RUNNING, replace(PENDING, priority=6)))
    assert memo_of(edited, state) is memo_of(CLUSTER, state)


def test_it_makes_a_new_memo_when_a_running_pod_differs() -> None:
    state = ClusterState.from_cluster(CLUSTER)
    kept = memo_of(CLUSTER, state)
    other = replace(CLUSTER, pods=(replace(RUNNING, priority=7), PENDING))
    assert memo_of(other, state) is not kept


def test_it_makes_a_new_memo_when_the_nodes_differ() -> None:
    state = ClusterState.from_cluster(CLUSTER)
    kept = memo_of(CLUSTER, state)
    other = replace(CLUSTER, nodes=(H100.named("n1").build(),))
    assert memo_of(other, state) is not kept
