"""Kueue hierarchical cohorts (issue 46 item 3; KEP-79): Cohort objects with a parent
and their own quota, borrowing through the tree as kubernetes-sigs/kueue
``pkg/cache/resource_node.go`` computes it:

- ``updateCohortResourceNode`` / ``accumulateFromChild``: a cohort's SubtreeQuota is its
  own nominalQuota plus each child's SubtreeQuota less what the child keeps
  (``guaranteedQuota``: SubtreeQuota - lendingLimit, 0 when unset); its Usage is each
  child's usage past what the child keeps;
- ``available``: a root gives SubtreeQuota - Usage; any other node its unused kept quota
  plus what its parent has available, capped by ``storedInParent - usedInParent +
  borrowingLimit`` where it has a borrowingLimit.

Each expectation is worked out by hand from those."""

from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import (
    GPU,
    KUEUE,
    as_dicts,
    cluster_queue_object,
    kube_object,
    local_queue_object,
    pod_object,
)
from topology.kube.kueue.quotas import quota_waiting
from topology.kube.parse import parse_objects

QUEUE_NAME = "kueue.x-k8s.io/queue-name"
POD = pod_object("a", "").labels({}).created("2026-12-01T00:00:00Z").requests(cpu="1")
IN_A = POD.label(QUEUE_NAME, "lq-a")
IN_B = POD.label(QUEUE_NAME, "lq-b")
LOCAL = (local_queue_object("a", "lq-a", "cq-a"), local_queue_object("a", "lq-b", "cq-b"))


def gpus(nominal, borrowing=None):
    """One resource group of flavor f: 1000 cpu and ``nominal`` GPUs."""
    gpu = {"name": GPU, "nominalQuota": nominal}
    if borrowing is not None:
        gpu["borrowingLimit"] = borrowing
    cpu = {"name": "cpu", "nominalQuota": 1000}
    return {"coveredResources": ["cpu", GPU], "flavors": [{"name": "f", "resources": [cpu, gpu]}]}


def cohort(name, parent=None, *groups):
    spec = {"resourceGroups": list(groups)}
    if parent is not None:
        spec["parentName"] = parent
    return kube_object(f"{KUEUE.rpartition('/')[0]}/v1beta1", "Cohort", name).spec(**spec)


# two teams under one root: cq-a (4 GPUs) in team-a, cq-b (8 GPUs) in team-b
TREE = (
    cohort("root"),
    cohort("team-a", "root"),
    cohort("team-b", "root"),
    cluster_queue_object("cq-a", gpus(4)).spec(cohort="team-a"),
    cluster_queue_object("cq-b", gpus(8)).spec(cohort="team-b"),
    *LOCAL,
)


def waiting(*objects):
    snapshot = parse_objects([("t", o) for o in as_dicts(*objects)], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    cluster = snapshot.cluster
    return {k: w.reason for k, w in quota_waiting(cluster, pending_workloads(cluster)).items()}


def test_it_borrows_across_the_tree_from_another_teams_queue():
    """team-a: SubtreeQuota 0 + (4 - 0) = 4; team-b 8; root 4 + 8 = 12, nothing used.
    available(cq-a) = 0 + available(team-a) = 0 + available(root) = 12 >= 10: admitted.
    (Read as a flat cohort team-a of cq-a alone, it waited: free 4.)"""
    assert waiting(*TREE, IN_A.named("big").requests({GPU: "10"})) == {}


def test_it_caps_what_a_cohort_borrows_from_its_parent_at_its_borrowing_limit():
    """team-a with borrowingLimit 2 (nominalQuota 0): storedInParent 4 - usedInParent 0
    + 2 = 6 < root's 12: available(team-a) = 6, cq-a's 0 + 6 < 10."""
    tree = (cohort("team-a", "root", gpus(0, borrowing=2)), *TREE[3:], *TREE[:1], TREE[2])
    assert waiting(*tree, IN_A.named("big").requests({GPU: "10"})) == {
        "a/big": "waiting for quota in queue ClusterQueue/cq-a (needs 10 nvidia.com/gpu, free 6)"
    }


def test_it_counts_a_cohorts_own_quota_and_the_usage_of_every_branch():
    """root's own 3 GPUs: SubtreeQuota 3 + 4 + 8 = 15. early (cq-b, 8 GPUs, first):
    admitted, available 15. Usage then: cq-b 8 (keeps 0) -> team-b 8 -> root 8.
    late (cq-a, 10 GPUs): 0 + (0 + (15 - 8)) = 7 < 10."""
    tree = (cohort("root", None, gpus(3)), *TREE[1:])
    assert waiting(
        *tree,
        IN_B.named("early").requests({GPU: "8"}),
        IN_A.named("late").requests({GPU: "10"}).created("2026-12-01T00:01:00Z"),
    ) == {
        "a/late": "waiting for quota in queue ClusterQueue/cq-a (needs 10 nvidia.com/gpu, free 7)"
    }


def test_it_admits_nothing_in_a_tree_whose_parents_make_a_cycle():
    """kueue pkg/cache updateCohortTreeResources: a cohort tree with a cycle returns
    ErrCohortHasCycle and gets no snapshot; its ClusterQueues admit nothing (the Cohort
    API: while the cycle exists, its cohorts and their queues are inactive). team-a's
    parent x, x's parent team-a: a 1-GPU pod of cq-a waits; cq-b (team-b under root)
    still admits."""
    tree = (cohort("team-a", "x"), cohort("x", "team-a"), *TREE[2:])
    found = waiting(
        *tree, IN_A.named("p").requests({GPU: "1"}), IN_B.named("q").requests({GPU: "1"})
    )
    assert found == {
        "a/p": "waiting for quota in queue ClusterQueue/cq-a (its cohorts' parents make a "
        "cycle, Cohort/team-a -> Cohort/x -> Cohort/team-a: Kueue admits nothing in that tree)"
    }


def test_it_keeps_in_a_cohort_what_its_lending_limit_does_not_lend():
    """team-b's own 2 GPUs, lendingLimit 2: SubtreeQuota 2 + 8 = 10, guaranteedQuota
    10 - 2 = 8 stays in team-b; root: 4 + (10 - 8) = 6. cq-a's 10 GPUs: 0 + 0 + 6 < 10
    (without the limit root would hold 14)."""
    lending = gpus(2)
    lending["flavors"][0]["resources"][1]["lendingLimit"] = 2
    tree = (*TREE[:2], cohort("team-b", "root", lending), *TREE[3:])
    assert waiting(*tree, IN_A.named("big").requests({GPU: "10"})) == {
        "a/big": "waiting for quota in queue ClusterQueue/cq-a (needs 10 nvidia.com/gpu, free 6)"
    }


def two_flavors(spot: int, on_demand: int):
    """One resource group offering flavor spot then on-demand, ``spot`` and ``on_demand``
    GPUs of quota."""
    flavors = [
        {
            "name": name,
            "resources": [{"name": "cpu", "nominalQuota": 100}, {"name": GPU, "nominalQuota": n}],
        }
        for name, n in (("spot", spot), ("on-demand", on_demand))
    ]
    return {"coveredResources": ["cpu", GPU], "flavors": flavors}


def test_it_borrows_a_flavors_quota_across_the_tree():
    """flavorassigner.go: a pod set is admitted against one flavor's quota, borrowing
    that flavor's quota in the cohort tree. cq-a: spot 2, on-demand 0; cq-b (team-b):
    spot 8. spot through root: 0 + (2 + 8) = 10 >= 4, so the 4-GPU pod set is
    admitted on spot by borrowing (whenCanBorrow Borrow). Read as a flat cohort team-a
    it waited: spot free 2, on-demand free 0."""
    resource_flavors = [
        kube_object(KUEUE, "ResourceFlavor", name).spec(nodeLabels={"pool": name})
        for name in ("spot", "on-demand")
    ]
    tree = (
        *TREE[:3],
        cluster_queue_object("cq-a", two_flavors(2, 0)).spec(cohort="team-a"),
        cluster_queue_object("cq-b", two_flavors(8, 0)).spec(cohort="team-b"),
        *LOCAL,
        *resource_flavors,
    )
    assert waiting(*tree, IN_A.named("big").requests({GPU: "4"})) == {}
