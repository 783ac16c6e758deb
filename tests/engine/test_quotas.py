"""Queues and quotas (Kueue, Volcano, KAI): who waits for quota, worked out by hand."""

from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.scheduler.workloads import pending_workloads
from topology.ingest.files import read_objects
from topology.kube.kueue.quotas import quota_waiting
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 2, tzinfo=UTC)
GPU = "nvidia.com/gpu"


def parse(*objects):
    snapshot = parse_objects([("test", o) for o in objects], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def waiting(cluster):
    return {k: w.reason for k, w in quota_waiting(cluster, pending_workloads(cluster)).items()}


def cluster_queue(name, gpus, cohort=None, borrowing=None):
    gpu = {"name": GPU, "nominalQuota": gpus}
    if borrowing is not None:
        gpu["borrowingLimit"] = borrowing
    spec = {
        "resourceGroups": [
            {
                "coveredResources": ["cpu", GPU],
                "flavors": [
                    {"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1000}, gpu]}
                ],
            }
        ]
    }
    if cohort:
        spec["cohort"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def local_queue(namespace, name, target):
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": target},
    }


def pod(namespace, name, gpus, labels=None, node=None, extra=None, created="2026-12-01T00:00:00Z"):
    requests = {"cpu": "1", GPU: str(gpus), **(extra or {})}
    spec = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {},
                         "creationTimestamp": created},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}  # fmt: skip


def queued(queue):
    return {"kueue.x-k8s.io/queue-name": queue}


def test_it_admits_in_order_and_makes_the_next_one_wait():
    cluster = parse(
        cluster_queue("cq", 8),
        local_queue("a", "lq", "cq"),
        pod("a", "first", 6, queued("lq"), created="2026-12-01T00:00:00Z"),
        pod("a", "second", 4, queued("lq"), created="2026-12-01T00:01:00Z"),
    )
    # first: 6 <= 8 admitted, leaves 2; second: 4 > 2
    assert waiting(cluster) == {
        "a/second": "waiting for quota in queue ClusterQueue/cq (needs 4 nvidia.com/gpu, free 2)"
    }


def test_it_lets_a_cluster_queue_borrow_what_its_cohort_leaves_unused():
    cluster = parse(
        cluster_queue("cq-a", 4, cohort="org"),
        cluster_queue("cq-b", 8, cohort="org"),
        local_queue("a", "lq", "cq-a"),
        pod("a", "big", 10, queued("lq")),
    )
    assert waiting(cluster) == {}  # 4 own + 8 unused in cq-b >= 10


def test_it_caps_borrowing_at_the_borrowing_limit():
    cluster = parse(
        cluster_queue("cq-a", 4, cohort="org", borrowing=2),
        cluster_queue("cq-b", 8, cohort="org"),
        local_queue("a", "lq", "cq-a"),
        pod("a", "big", 10, queued("lq")),
    )
    assert waiting(cluster) == {
        "a/big": "waiting for quota in queue ClusterQueue/cq-a (needs 10 nvidia.com/gpu, free 6)"
    }


def test_it_makes_a_resource_the_cluster_queue_does_not_cover_wait():
    cluster = parse(
        cluster_queue("cq", 8),
        local_queue("a", "lq", "cq"),
        pod("a", "rdma", 1, queued("lq"), extra={"rdma/hca": "1"}),
    )
    assert waiting(cluster) == {
        "a/rdma": "waiting for quota in queue ClusterQueue/cq (needs 1 rdma/hca, free 0)"
    }


def test_it_makes_a_pod_of_a_missing_local_queue_wait_where_kueue_runs():
    cluster = parse(cluster_queue("cq", 8), pod("a", "lost", 1, queued("nope")))
    assert waiting(cluster) == {"a/lost": "waiting: LocalQueue a/nope not found"}


def test_it_checks_nothing_where_the_input_has_no_queue_at_all():
    cluster = parse(pod("a", "lone", 1, queued("nope")))
    assert waiting(cluster) == {}


def test_it_holds_a_volcano_job_beyond_its_queue_capability():
    volcano_queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                     "metadata": {"name": "research"},
                     "spec": {"capability": {"cpu": "100", GPU: "4"}}}  # fmt: skip
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "mpi", "namespace": "r"},
           "spec": {"queue": "research", "minAvailable": 2, "tasks": [{"name": "w", "replicas": 2,
               "template": {"spec": {"containers": [{"name": "c", "resources": {
                   "requests": {"cpu": "1", GPU: "4"}}}]}}}]}}  # fmt: skip
    cluster = parse(volcano_queue, job)
    assert waiting(cluster) == {
        "r/mpi": "waiting for quota in queue VolcanoQueue/research (needs 8 nvidia.com/gpu, free 4)"
    }


def test_it_holds_non_preemptible_kai_work_to_the_quota_and_the_rest_to_the_limit():
    kai_queue = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "t"},
                 "spec": {"resources": {"gpu": {"quota": 2, "limit": 6}}}}  # fmt: skip
    preemptible = pod("a", "train", 4, {"kai.scheduler/queue": "t"})
    urgent = pod("a", "serve", 4, {"kai.scheduler/queue": "t"})
    urgent["spec"]["priority"] = 100
    cluster = parse(kai_queue, preemptible, urgent)
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
    }


def test_it_gives_waiting_workloads_the_waiting_verdict_and_buys_nothing_for_them():
    cluster = parse(
        cluster_queue("cq", 0), local_queue("a", "lq", "cq"), pod("a", "p", 1, queued("lq"))
    )
    (workload,) = evaluate(cluster, at=AT).to_json()["workloads"]
    assert workload["verdict"] == "waiting"
    assert workload["joint"]["addNodes"] == {}


def test_it_notes_that_a_kai_parent_queues_limits_are_not_modelled():
    child = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "c"},
             "spec": {"parentQueue": "org", "resources": {"gpu": {"limit": 4}}}}  # fmt: skip
    snapshot = parse_objects([("q", child)], cluster_name="t")
    assert snapshot.notes == ("Queue/c: parent queue org limits not modelled",)
