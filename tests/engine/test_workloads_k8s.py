"""Pods that controllers will create, from real objects of k8s-examples/gangs.

Every expectation is worked out by hand from the YAML and the upstream
controller rules quoted in topology/kube/workloads.py.
"""

import hashlib

import pytest

from tests.builders.objects import KUEUE, as_dicts, job_object, kube_object, pod_object
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

RACK = "cloud.provider.com/topology-rack"
BLOCK = "cloud.provider.com/topology-block"
JOBSET = "jobset.x-k8s.io/v1alpha2"

# a Job of ml with one container (an empty resources map); a pod of ml running on n1; a
# pending pod of default; a Kueue Workload of LocalQueue lq with one pod set of 2
JOB = job_object("ml", "").container(resources={})
LIVE_POD = pod_object("ml", "").on("n1").container()
POD = pod_object("default", "").container()
MAIN_POD_SET = {"name": "main", "count": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}
WORKLOAD = kube_object(KUEUE, "Workload", "wl", "ml").spec(queueName="lq", podSets=[MAIN_POD_SET])


@pytest.fixture(scope="module")
def gangs(shared_data):
    return shared_data / "k8s-examples" / "gangs"


def parse_file(path):
    snapshot = parse_objects(read_objects(path), cluster_name="t")
    assert snapshot.errors == ()
    return snapshot


def parse(*objects):
    snapshot = parse_objects([("test", o) for o in as_dicts(*objects)], cluster_name="t")
    assert snapshot.errors == ()
    return snapshot


def pods_by_name(snapshot):
    return {p.name: p for p in snapshot.cluster.pods}


def gang(snapshot, key):
    return next(g for g in snapshot.cluster.gangs if g.key == key)


def test_it_creates_the_parallelism_pods_of_an_indexed_job_in_its_scheduling_group(gangs):
    snapshot = parse_file(gangs / "kep4671-job-with-schedulinggroup.yaml")
    pods = pods_by_name(snapshot)
    assert sorted(pods) == sorted(f"job-1-{i}" for i in range(100))
    assert {p.gpu_count for p in pods.values()} == {1}
    assert {p.gang for p in pods.values()} == {"default/pg1"}
    assert {p.synthesized_by for p in pods.values()} == {"Job/default/job-1"}
    assert gang(snapshot, "default/pg1").min_member == 100


def test_it_makes_a_kueue_queued_jobset_one_gang_of_all_its_pods(gangs):
    snapshot = parse_file(gangs / "kueue-jobs-sample-jobset-tas-sliced.yaml")
    pods = pods_by_name(snapshot)
    # 1 replicatedJob "workers" x 1 replica x min(parallelism 8, completions 8)
    assert sorted(pods) == [f"jobset-tas-sliced-workers-0-{i}" for i in range(8)]
    assert {p.queue for p in pods.values()} == {"LocalQueue/default/user-queue"}
    assert {p.requests.cpu_milli for p in pods.values()} == {1000}
    jobset_gang = gang(snapshot, "default/jobset-tas-sliced")
    assert (jobset_gang.min_member, jobset_gang.queue) == (8, "LocalQueue/default/user-queue")
    # the slice annotation is not modelled: said, never silently matched
    assert all("slice topology" in " ".join(p.unsupported) for p in pods.values())


def test_it_names_a_generated_job_and_keeps_its_required_topology(gangs):
    snapshot = parse_file(gangs / "kueue-tas-sample-job-required.yaml")
    pods = pods_by_name(snapshot)
    assert sorted(pods, key=lambda n: int(n.rpartition("-")[2])) == [
        f"tas-sample-required0-{i}" for i in range(10)
    ]
    assert {p.required_topology for p in pods.values()} == {RACK}
    required = gang(snapshot, "default/tas-sample-required0")
    assert (required.min_member, required.queue) == (10, "LocalQueue/default/tas-user-queue")


def test_it_keeps_the_preferred_topology_of_forty_pods(gangs):
    snapshot = parse_file(gangs / "kueue-tas-sample-job-preferred.yaml")
    pods = snapshot.cluster.pods
    assert len(pods) == 40
    assert {p.preferred_topology for p in pods} == {BLOCK}
    assert {p.required_topology for p in pods} == {None}


def test_it_creates_the_pod_sets_of_a_kueue_workload(gangs):
    snapshot = parse_file(gangs / "kueue-workload-v1beta2-concepts.yaml")
    pods = pods_by_name(snapshot)
    assert sorted(pods) == ["sample-job-main-0", "sample-job-main-1", "sample-job-main-2"]
    assert {p.namespace for p in pods.values()} == {"team-a"}
    workload = gang(snapshot, "team-a/sample-job")
    assert (workload.min_member, workload.queue) == (3, "LocalQueue/team-a/team-a-queue")


def test_it_creates_a_replicasets_replicas_in_its_coscheduling_pod_group(gangs):
    snapshot = parse_file(gangs / "scheduler-plugins-coscheduling-podgroup-replicaset.yaml")
    pods = pods_by_name(snapshot)
    assert sorted(pods) == [f"nginx-pending-{i}" for i in range(6)]
    assert {p.gang for p in pods.values()} == {"default/nginx"}
    assert gang(snapshot, "default/nginx").min_member == 3  # PodGroup minMember, not 6


def test_it_creates_volcano_job_tasks_as_a_gang_of_min_available(gangs):
    snapshot = parse_file(gangs / "volcano-job-network-topology-partition.yaml")
    pods = pods_by_name(snapshot)
    assert sorted(pods) == [f"network-topology-job-t0-{i}" for i in range(8)]
    volcano = gang(snapshot, "default/network-topology-job")
    assert (volcano.min_member, volcano.queue) == (4, "VolcanoQueue/default")
    reasons = {r for p in pods.values() for r in p.unsupported}
    assert reasons == {
        "Volcano networkTopology (HyperNode tiers) not supported",
        "Volcano task partitionPolicy not supported",
    }


def test_it_declares_a_volcano_pod_group_without_pods(gangs):
    snapshot = parse_file(gangs / "volcano-podgroup-artifact.yaml")
    assert snapshot.cluster.pods == ()
    pod_group = gang(snapshot, "default/test-pg")
    assert (pod_group.min_member, pod_group.queue) == (1, "VolcanoQueue/default")
    assert any("PodGroup/default/test-pg" in note for note in snapshot.notes)


def test_it_does_not_synthesize_pods_that_are_their_own_objects(gangs):
    snapshot = parse_file(gangs / "kueue-pods-kueue-kueue-pod-group.yaml")
    assert {p.synthesized_by for p in snapshot.cluster.pods} == {None}
    assert len(snapshot.cluster.pods) == 2


def test_it_counts_a_jobs_existing_pods_once():
    of_train = LIVE_POD.labels({"batch.kubernetes.io/job-name": "train"})
    existing = [of_train.named(f"train-{i}") for i in (0, 2)]
    indexed = JOB.named("train").spec(parallelism=4, completions=10, completionMode="Indexed")
    snapshot = parse(indexed, *existing)
    synthesized = sorted(p.name for p in snapshot.cluster.pods if p.synthesized_by)
    assert synthesized == ["train-1", "train-3"]  # min(4, 10) wanted, indexes 0 and 2 run


def test_it_stops_creating_pods_when_completions_are_nearly_done():
    snapshot = parse(JOB.named("train").spec(parallelism=4, completions=10).status(succeeded=9))
    assert [p.name for p in snapshot.cluster.pods] == ["train-pending-0"]


def test_it_creates_nothing_for_a_suspended_job_no_queue_manages():
    snapshot = parse(JOB.named("paused").spec(parallelism=3, suspend=True))
    assert snapshot.cluster.pods == ()
    assert "Job/ml/paused: suspended, creates no pods" in snapshot.notes


def test_it_counts_a_deployment_through_its_replica_set_and_its_status():
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    spec = {"replicas": 5, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    deployment = kube_object("apps/v1", "Deployment", "web", "ml").spec(**spec)
    replica_set = (
        kube_object("apps/v1", "ReplicaSet", "web-abc", "ml")
        .meta(ownerReferences=[{"kind": "Deployment", "name": "web"}])
        .spec(**spec)
        .status(replicas=2)
    )
    snapshot = parse(deployment, replica_set)
    assert sorted(p.name for p in snapshot.cluster.pods) == [
        f"web-abc-pending-{i}" for i in range(3)
    ]


def test_it_names_statefulset_pods_by_free_ordinal():
    statefulset = kube_object("apps/v1", "StatefulSet", "db", "ml").spec(
        replicas=3,
        selector={"matchLabels": {"app": "db"}},
        template={"metadata": {"labels": {"app": "db"}}, "spec": {"containers": []}},
    )
    snapshot = parse(statefulset, LIVE_POD.named("db-0").labels({"app": "db"}))
    assert sorted(p.name for p in snapshot.cluster.pods if p.synthesized_by) == ["db-1", "db-2"]


def test_it_makes_each_kueue_queued_leader_worker_group_a_gang_of_its_size():
    """Kueue's LWS integration admits each group as one Workload: a gang of size."""
    gpu = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}
    lws = (
        kube_object("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "vllm", "ml")
        .label("kueue.x-k8s.io/queue-name", "q")
        .spec(replicas=2, leaderWorkerTemplate={"size": 4, "workerTemplate": {"spec": gpu}})
    )
    snapshot = parse(lws)
    pods = pods_by_name(snapshot)
    assert sorted(pods) == sorted(
        ["vllm-0", "vllm-0-1", "vllm-0-2", "vllm-0-3", "vllm-1", "vllm-1-1", "vllm-1-2", "vllm-1-3"]
    )
    assert pods["vllm-1-3"].gang == "ml/vllm-1"
    assert [(g.key, g.min_member) for g in snapshot.cluster.gangs] == [
        ("ml/vllm-0", 4),
        ("ml/vllm-1", 4),
    ]


def test_it_takes_a_kai_pod_groups_gang_queue_and_topology_and_reports_subgroups():
    pod_group = kube_object("scheduling.run.ai/v2alpha2", "PodGroup", "pg", "ml").spec(
        minMember=16,
        queue="team-a",
        topologyConstraint={"requiredTopologyLevel": RACK},
        subGroups=[{"name": "decode", "minMember": 8}, {"name": "prefill", "minMember": 8}],
    )
    snapshot = parse(pod_group)
    kai = gang(snapshot, "ml/pg")
    assert (kai.min_member, kai.queue, kai.required_topology) == (16, "KaiQueue/team-a", RACK)
    assert any("subGroups (decode, prefill) unsupported" in note for note in snapshot.notes)


def test_it_leaves_a_jobsets_child_jobs_to_the_jobset():
    child = JOB.named("js-w-0").spec(parallelism=2)
    child = child.meta(ownerReferences=[{"kind": "JobSet", "name": "js"}])
    replicated = {"name": "w", "replicas": 2, "template": {"spec": child.dict()["spec"]}}
    jobset = kube_object(JOBSET, "JobSet", "js", "ml").spec(replicatedJobs=[replicated])
    snapshot = parse(jobset, child)
    assert sorted(p.name for p in snapshot.cluster.pods) == [
        "js-w-0-0",
        "js-w-0-1",
        "js-w-1-0",
        "js-w-1-1",
    ]


def test_it_puts_a_volcano_pod_in_the_pod_group_its_annotation_names(gangs):
    objects = read_objects(gangs / "volcano-podgroup-artifact.yaml")
    member = POD.named("w-0").annotation("scheduling.k8s.io/group-name", "test-pg")
    objects.append(("x", member.dict()))
    snapshot = parse_objects(objects, cluster_name="t")
    (pod,) = snapshot.cluster.pods
    assert pod.gang == "default/test-pg"
    assert gang(snapshot, "default/test-pg").queue == "VolcanoQueue/default"


def test_it_puts_a_kai_pod_in_the_pod_group_its_annotation_names():
    snapshot = parse(POD.named("w-0").annotation("pod-group-name", "pg-1"))
    assert [p.gang for p in snapshot.cluster.pods] == ["default/pg-1"]


def test_it_reads_a_kep4671_pod_group_as_a_gang_of_its_min_count(gangs):
    snapshot = parse_file(gangs / "kep4671-podgroup-scheduling-k8s-io-v1beta1.yaml")
    assert [(g.key, g.min_member) for g in snapshot.cluster.gangs] == [
        ("default/training-worker-0", 100)
    ]
    assert snapshot.cluster.pods == ()


def test_it_reads_a_kep4671_workload_alone_as_no_gang_and_no_pod(gangs):
    # a Workload only holds templates: a gang exists once a PodGroup or pods name it
    for name in ("kep4671-workload-scheduling-k8s-io-v1beta1.yaml",
                 "kep4671-user-story-workload-jobset.yaml"):  # fmt: skip
        snapshot = parse_file(gangs / name)
        assert (snapshot.cluster.gangs, snapshot.cluster.pods) == ((), ())
        assert snapshot.read == {"Workload (scheduling.k8s.io/v1beta1)": 1}


def test_it_names_the_controller_when_its_pod_template_is_invalid():
    bad = JOB.named("broken").spec(parallelism=2).pod_spec(containers="not-a-list")
    snapshot = parse_objects([("jobs.yaml", bad.dict())], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == [
        "jobs.yaml: Job/ml/broken: pod template (spec.containers): must be a list, got string"
    ]
    assert snapshot.cluster.pods == ()


def test_it_gives_a_jobsets_exclusive_pods_the_terms_jobset_adds():
    """kubernetes-sigs/jobset ``setExclusiveAffinities``: per Job, its ``job-key``
    (SHA-1 of "namespace/jobName", ``jobHashKey``), pod affinity to it and
    anti-affinity to other Jobs' keys per the annotated label, every namespace."""
    child = JOB.named("unused").spec(parallelism=1).dict()
    replicated = {"name": "w", "replicas": 2, "template": {"spec": child["spec"]}}
    jobset = (
        kube_object(JOBSET, "JobSet", "js", "ml")
        .annotation("alpha.jobset.sigs.k8s.io/exclusive-topology", "cloud.google.com/gke-nodepool")
        .spec(replicatedJobs=[replicated])
    )
    pods = pods_by_name(parse(jobset))
    key = pods["js-w-0-0"].labels["jobset.sigs.k8s.io/job-key"]
    assert key == hashlib.sha1(b"ml/js-w-0").hexdigest()
    assert pods["js-w-1-0"].labels["jobset.sigs.k8s.io/job-key"] != key
    terms = pods["js-w-0-0"].pod_terms
    (together,), (apart,) = terms.affinity, terms.anti_affinity
    assert (together.topology_key, apart.topology_key) == ("cloud.google.com/gke-nodepool",) * 2
    assert together.namespace_selector is not None and together.namespace_selector.empty
    other = {"jobset.sigs.k8s.io/job-key": "another"}
    assert together.selector.matches({"jobset.sigs.k8s.io/job-key": key})
    assert not together.selector.matches(other)
    assert apart.selector.matches(other) and not apart.selector.matches({})
    assert not apart.selector.matches({"jobset.sigs.k8s.io/job-key": key})
    assert pods["js-w-0-0"].unsupported == ()


def test_it_creates_no_pods_for_an_admitted_or_deactivated_kueue_workload():
    admitted = parse(WORKLOAD.status(admission={"clusterQueue": "cq"}))
    assert admitted.cluster.pods == ()
    assert admitted.notes == (
        "Workload/ml/wl: admitted to ClusterQueue cq; its pods are not in the input (not counted)",
    )
    assert parse(WORKLOAD.spec(active=False)).cluster.pods == ()
    assert [p.name for p in parse(WORKLOAD).cluster.pods] == ["wl-main-0", "wl-main-1"]


def test_it_keeps_a_batch_job_and_a_volcano_job_of_the_same_name_apart():
    task = {"name": "w", "replicas": 1, "template": {"spec": {"containers": []}}}
    volcano = kube_object("batch.volcano.sh/v1alpha1", "Job", "train", "ml").spec(tasks=[task])
    snapshot = parse(JOB.named("train").spec(parallelism=1), volcano)
    assert sorted(p.name for p in snapshot.cluster.pods) == ["train-pending-0", "train-w-0"]
