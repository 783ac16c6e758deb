"""Queues and quotas (Kueue, Volcano, KAI): who waits for quota, worked out by hand."""

from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import (
    GPU,
    as_dicts,
    cluster_queue_object,
    job_object,
    kube_object,
    local_queue_object,
    pod_object,
)
from topology.ingest.files import read_objects
from topology.kube.kueue.quotas import quota_waiting
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 2, tzinfo=UTC)
QUEUE_NAME = "kueue.x-k8s.io/queue-name"
VOLCANO = "scheduling.volcano.sh/v1beta1"
KAI = "scheduling.run.ai/v2"

# a one-cpu pod of namespace a created 2026-12-01 (an empty labels map); one of LocalQueue lq
POD = pod_object("a", "").labels({}).created("2026-12-01T00:00:00Z").requests(cpu="1")
IN_LQ = POD.label(QUEUE_NAME, "lq")
LQ = local_queue_object("a", "lq", "cq")


def parse(*objects):
    objects = as_dicts(*objects)
    snapshot = parse_objects([("test", o) for o in objects], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def waiting(cluster):
    return {k: w.reason for k, w in quota_waiting(cluster, pending_workloads(cluster)).items()}


def flavor_f(gpus, borrowing=None, lending=None):
    """A ClusterQueue's one resource group: flavor f, 1000 cpu and ``gpus`` GPUs."""
    gpu = {"name": GPU, "nominalQuota": gpus}
    if borrowing is not None:
        gpu["borrowingLimit"] = borrowing
    if lending is not None:
        gpu["lendingLimit"] = lending
    cpu = {"name": "cpu", "nominalQuota": 1000}
    return {"coveredResources": ["cpu", GPU], "flavors": [{"name": "f", "resources": [cpu, gpu]}]}


def test_it_admits_in_order_and_makes_the_next_one_wait():
    cluster = parse(
        cluster_queue_object("cq", flavor_f(8)),
        LQ,
        IN_LQ.named("first").requests({GPU: "6"}),
        IN_LQ.named("second").requests({GPU: "4"}).created("2026-12-01T00:01:00Z"),
    )
    # first: 6 <= 8 admitted, leaves 2; second: 4 > 2
    assert waiting(cluster) == {
        "a/second": "waiting for quota in queue ClusterQueue/cq (needs 4 nvidia.com/gpu, free 2)"
    }


def test_it_lets_a_cluster_queue_borrow_what_its_cohort_leaves_unused():
    cluster = parse(
        cluster_queue_object("cq-a", flavor_f(4)).spec(cohort="org"),
        cluster_queue_object("cq-b", flavor_f(8)).spec(cohort="org"),
        LQ.spec(clusterQueue="cq-a"),
        IN_LQ.named("big").requests({GPU: "10"}),
    )
    assert waiting(cluster) == {}  # 4 own + 8 unused in cq-b >= 10


def test_it_caps_borrowing_at_the_borrowing_limit():
    cluster = parse(
        cluster_queue_object("cq-a", flavor_f(4, borrowing=2)).spec(cohort="org"),
        cluster_queue_object("cq-b", flavor_f(8)).spec(cohort="org"),
        LQ.spec(clusterQueue="cq-a"),
        IN_LQ.named("big").requests({GPU: "10"}),
    )
    assert waiting(cluster) == {
        "a/big": "waiting for quota in queue ClusterQueue/cq-a (needs 10 nvidia.com/gpu, free 6)"
    }


# Lending (KEP-1224) as kueue pkg/cache/resource_node.go computes it: a ClusterQueue
# lends its cohort min(nominal, lendingLimit) (accumulateFromChild: SubtreeQuota -
# guaranteedQuota); the cohort counts each queue's usage past its guaranteed quota;
# available = max(0, guaranteed - usage) + min(cohort's quota - cohort's usage,
# lent - usage past guaranteed + borrowingLimit).
IN_B = POD.label(QUEUE_NAME, "lq-b")
LQ_B = local_queue_object("a", "lq-b", "cq-b")


def test_it_borrows_no_more_than_the_lenders_lending_limit():
    cluster = parse(
        cluster_queue_object("cq-a", flavor_f(4)).spec(cohort="org"),
        cluster_queue_object("cq-b", flavor_f(8, lending=2)).spec(cohort="org"),
        LQ.spec(clusterQueue="cq-a"),
        IN_LQ.named("big").requests({GPU: "10"}),
    )
    # cq-b keeps 8 - 2 = 6; the cohort holds 4 + 2 = 6, nothing used: available 0 + 6
    assert waiting(cluster) == {
        "a/big": "waiting for quota in queue ClusterQueue/cq-a (needs 10 nvidia.com/gpu, free 6)"
    }


def test_it_applies_lending_and_borrowing_limits_on_both_sides_of_the_cohort():
    cluster = parse(
        cluster_queue_object("cq-a", flavor_f(4, borrowing=5, lending=1)).spec(cohort="org"),
        cluster_queue_object("cq-b", flavor_f(8, lending=4)).spec(cohort="org"),
        LQ.spec(clusterQueue="cq-a"),
        IN_LQ.named("big").requests({GPU: "9"}),
    )
    # cq-a keeps 3, lends 1; cq-b keeps 4, lends 4: the cohort holds 5, nothing used;
    # cq-a's cap there: 1 lent - 0 used + 5 borrowing = 6: available 3 + min(5, 6) = 8
    assert waiting(cluster) == {
        "a/big": "waiting for quota in queue ClusterQueue/cq-a (needs 9 nvidia.com/gpu, free 8)"
    }


def test_it_counts_what_another_queue_borrowed_against_the_cohort():
    cluster = parse(
        cluster_queue_object("cq-a", flavor_f(4)).spec(cohort="org"),
        cluster_queue_object("cq-b", flavor_f(4)).spec(cohort="org"),
        LQ.spec(clusterQueue="cq-a"),
        LQ_B,
        IN_B.named("early").requests({GPU: "6"}),
        IN_LQ.named("late").requests({GPU: "4"}).created("2026-12-01T00:01:00Z"),
    )
    # early: 0 + (8 - 0) >= 6, admitted (cq-b borrows 2 of cq-a's 4); late: the cohort
    # holds 8 and 6 are used: 0 + 2 < 4
    assert waiting(cluster) == {
        "a/late": "waiting for quota in queue ClusterQueue/cq-a (needs 4 nvidia.com/gpu, free 2)"
    }


def test_it_keeps_a_queues_unlent_quota_for_it_when_the_cohort_is_used_up():
    cluster = parse(
        cluster_queue_object("cq-a", flavor_f(4, lending=0)).spec(cohort="org"),
        cluster_queue_object("cq-b", flavor_f(8)).spec(cohort="org"),
        LQ.spec(clusterQueue="cq-a"),
        LQ_B,
        IN_B.named("early").requests({GPU: "8"}),
        IN_LQ.named("late").requests({GPU: "4"}).created("2026-12-01T00:01:00Z"),
    )
    # cq-a lends nothing: the cohort holds cq-b's 8, all used by early; late gets
    # cq-a's own 4 (LocalAvailable) + 0
    assert waiting(cluster) == {}


# Partial admission (kueue pkg/controller/jobs/job: the Job's annotation
# kueue.x-k8s.io/job-min-parallelism is its PodSet's minCount; pkg/scheduler/
# flavorassigner/podset_reducer.go Reduce: the largest count from minCount up that fits)
PARTIAL_JOB = (
    job_object("a", "train")
    .label(QUEUE_NAME, "lq")
    .annotation("kueue.x-k8s.io/job-min-parallelism", "2")
    .requests(cpu="1")
    .limits({GPU: "2"})
    .spec(parallelism=4, completions=4)
)


def test_it_admits_the_most_pods_of_a_job_the_quota_holds_down_to_its_min_parallelism():
    cluster = parse(cluster_queue_object("cq", flavor_f(5)), LQ, PARTIAL_JOB)
    (wait,) = quota_waiting(cluster, pending_workloads(cluster)).values()
    # 4 pods x 2 GPUs = 8 > 5; 3 pods: 6 > 5; 2 pods: 4 <= 5: Kueue admits 2
    assert wait.admitted == 2
    assert wait.reason.startswith("Kueue admits 2 of 4 pods (partial admission, minCount 2)")


def test_it_plans_a_partly_admitted_job_with_its_admitted_pods_only():
    cluster = parse(cluster_queue_object("cq", flavor_f(5)), LQ, PARTIAL_JOB)
    (train,) = evaluate(cluster, at=AT).workloads
    assert train.pods == 2
    assert train.joint.verdict != "waiting"
    assert train.joint.reasons[0].startswith("Kueue admits 2 of 4 pods")


def test_it_keeps_a_job_waiting_whole_when_not_even_its_min_parallelism_fits():
    cluster = parse(cluster_queue_object("cq", flavor_f(3)), LQ, PARTIAL_JOB)
    (wait,) = quota_waiting(cluster, pending_workloads(cluster)).values()
    # 2 pods need 4 GPUs > 3: nothing admitted, the whole job waits
    assert wait.admitted is None
    assert wait.reason == (
        "waiting for quota in queue ClusterQueue/cq (needs 8 nvidia.com/gpu, free 3)"
    )


def test_it_makes_a_resource_the_cluster_queue_does_not_cover_wait():
    cluster = parse(
        cluster_queue_object("cq", flavor_f(8)),
        LQ,
        IN_LQ.named("rdma").requests({GPU: "1", "rdma/hca": "1"}),
    )
    assert waiting(cluster) == {
        "a/rdma": "waiting for quota in queue ClusterQueue/cq (needs 1 rdma/hca, free 0)"
    }


def test_it_makes_a_pod_of_a_missing_local_queue_wait_where_kueue_runs():
    lost = POD.named("lost").requests({GPU: "1"}).label(QUEUE_NAME, "nope")
    cluster = parse(cluster_queue_object("cq", flavor_f(8)), lost)
    assert waiting(cluster) == {"a/lost": "waiting: LocalQueue a/nope not found"}


def test_it_checks_nothing_where_the_input_has_no_queue_at_all():
    cluster = parse(POD.named("lone").requests({GPU: "1"}).label(QUEUE_NAME, "nope"))
    assert waiting(cluster) == {}


def test_it_holds_a_volcano_job_beyond_its_queue_capability():
    volcano_queue = kube_object(VOLCANO, "Queue", "research").spec(
        capability={"cpu": "100", GPU: "4"}
    )
    template = {"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "1", GPU: "4"}}}]}}  # fmt: skip
    job = kube_object("batch.volcano.sh/v1alpha1", "Job", "mpi", "r").spec(
        queue="research",
        minAvailable=2,
        tasks=[{"name": "w", "replicas": 2, "template": template}],
    )
    cluster = parse(volcano_queue, job)
    # Volcano's enqueue (proportion plugin): the job controller's minResources, its first
    # minAvailable pods' requests, 2 x 4 GPUs = 8 > capability 4
    assert waiting(cluster) == {
        "r/mpi": "waiting for quota in queue VolcanoQueue/research (Volcano keeps PodGroup "
        "r/mpi Pending: minResources 8 nvidia.com/gpu, the queue's capability leaves 4; "
        "enqueue, proportion plugin)"
    }


def test_it_holds_non_preemptible_kai_work_to_the_quota_and_the_rest_to_the_limit():
    kai_queue = kube_object(KAI, "Queue", "t").spec(resources={"gpu": {"quota": 2, "limit": 6}})
    in_t = POD.requests({GPU: "4"}).label("kai.scheduler/queue", "t")
    cluster = parse(kai_queue, in_t.named("train"), in_t.named("serve").priority(100))
    # serve (priority 100, first in order) is non-preemptible: 4 > quota 2
    # train: 4 <= limit 6 (serve was not admitted)
    assert waiting(cluster) == {
        "a/serve": "waiting for quota in queue KaiQueue/t (needs 4 nvidia.com/gpu, free 2)"
    }


def test_it_reads_the_tas_sample_queues_and_admits_both_tas_jobs(shared_data):
    gangs = shared_data / "k8s-examples" / "gangs"
    objects = [
        *read_objects(gangs / "kueue-tas-sample-gpu-queues.yaml"),
        *read_objects(gangs / "kueue-tas-sample-job-required.yaml"),
        *read_objects(gangs / "kueue-tas-sample-job-preferred.yaml"),
    ]
    cluster = parse_objects(objects, cluster_name="t").cluster
    (queue,) = cluster.queues
    assert queue.name == "ClusterQueue/tas-cluster-queue"
    assert dict(queue.limit) == {"cpu": 100_000, "memory": 100 * 2**30, GPU: 16}
    assert queue.local_queues == ("default/tas-user-queue",)
    # 10 + 40 pods of 1 cpu / 200Mi: 50 cpu <= 100, 10000Mi <= 100Gi
    assert waiting(cluster) == {}


def test_it_makes_the_gang_examples_with_undefined_local_queues_wait(shared_data):
    snapshot = parse_objects(read_objects(shared_data / "k8s-examples" / "gangs"), cluster_name="t")
    assert waiting(snapshot.cluster) == {
        "default/jobset-tas-sliced": "waiting: LocalQueue default/user-queue not found",
        "default/sample-group": "waiting: LocalQueue default/user-queue not found",
        "team-a/sample-job": "waiting: LocalQueue team-a/team-a-queue not found",
        # no node read: Volcano's overcommit plugin has nothing to enqueue the Job's
        # minResources (its first minAvailable 4 pods of 4 cpu) against
        "default/network-topology-job": "waiting for quota in queue VolcanoQueue/default "
        "(Volcano keeps PodGroup default/network-topology-job Pending: minResources 16 cpu, "
        "the cluster's idle with overcommit 1.2 leaves 0 (allocatable 0 x 1.2 - used 0); "
        "enqueue, overcommit plugin; its pods are created only once the PodGroup is "
        "Inqueue: cluster-autoscaler adds no node for it)",
    }


def test_it_gives_waiting_workloads_the_waiting_verdict_and_buys_nothing_for_them():
    cluster = parse(
        cluster_queue_object("cq", flavor_f(0)), LQ, IN_LQ.named("p").requests({GPU: "1"})
    )
    (workload,) = evaluate(cluster, at=AT).to_json()["workloads"]
    assert workload["verdict"] == "waiting"
    assert workload["joint"]["addNodes"] == {}


def test_it_notes_that_a_kai_parent_queues_limits_are_not_modelled():
    child = kube_object(KAI, "Queue", "c").spec(parentQueue="org", resources={"gpu": {"limit": 4}})
    snapshot = parse_objects([("q", child.dict())], cluster_name="t")
    assert snapshot.notes == ("Queue/c: parent queue org limits not modelled",)
