"""MPIJob (issue 46 item 1): its launcher and workers are separate pods to kube-scheduler
unless something enforces all-or-nothing. kubeflow/mpi-operator
``pkg/controller/mpi_job_controller.go``: ``newWorker`` makes ``<job>-worker-<i>``,
``newLauncherJob`` the launcher; only with ``--gang-scheduling`` does the operator set
the pods' ``schedulerName`` and make a PodGroup of workers + launcher (``newPodGroup``).
Each expectation is worked out by hand."""

from datetime import UTC, datetime
from typing import Any

from recommender.engine.evaluate.evaluation import evaluate
from tests.builders.objects import GPU, KubeObject, as_dicts, kube_object, node_object, pod_object
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 7, tzinfo=UTC)
# an 8-GPU node with 64 cpu
NODE = (
    node_object("").hostname().allocatable(cpu="64", memory="512Gi", pods="110").gpus(8).capacity()
)
LAUNCHER = {"containers": [{"name": "l", "resources": {"requests": {"cpu": "1"}}}]}
WORKER = {"containers": [{"name": "w", "resources": {"limits": {GPU: "8"}}}]}


def mpi_job(scheduler: str | None = None, workers: int = 2) -> KubeObject:
    """An mpi-operator MPIJob: one launcher (1 cpu), ``workers`` workers of 8 GPUs."""
    launcher, worker = dict(LAUNCHER), dict(WORKER)
    if scheduler is not None:
        launcher["schedulerName"] = worker["schedulerName"] = scheduler
    return kube_object("kubeflow.org/v2beta1", "MPIJob", "hpl", "ml").spec(
        mpiReplicaSpecs={
            "Launcher": {"replicas": 1, "template": {"spec": launcher}},
            "Worker": {"replicas": workers, "template": {"spec": worker}},
        }
    )


def parse(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects([("mpi.yaml", o) for o in as_dicts(*objects)], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot


def workloads(*objects: KubeObject) -> dict[str, dict[str, Any]]:
    result = evaluate(parse(*objects).cluster, at=AT).to_json()
    return {w["name"]: w for w in result["workloads"]}


def test_it_reads_an_mpijob_without_a_gang_scheduler_as_separate_pods():
    """No queue, no gang scheduler: the launcher and both workers are pods kube-scheduler
    binds one by one. On one free 8-GPU node the launcher and one worker bind, the other
    worker finds no node: the partial placement, 8 GPUs held by a job that cannot start
    (it was not read at all: no demand)."""
    snapshot = parse(NODE.named("a"), mpi_job())
    assert snapshot.cluster.gangs == ()
    pods = {p.name: p.app_group for p in snapshot.cluster.pods}
    assert pods == {"hpl-launcher": "ml/hpl", "hpl-worker-0": "ml/hpl", "hpl-worker-1": "ml/hpl"}
    found = workloads(NODE.named("a"), mpi_job())
    verdicts = sorted(w["verdict"] for w in found.values())
    assert len(found) == 3 and verdicts.count("runs_now") == 2


def test_it_reads_an_mpijob_under_volcano_as_one_gang_of_workers_and_launcher():
    """Templates naming volcano (the operator's --gang-scheduling): one gang of minMember
    workers + launcher = 3 (newPodGroup); 16 GPUs on one 8-GPU node: none of it runs."""
    found = workloads(NODE.named("a"), mpi_job("volcano"))
    job = found["ml/hpl"]
    assert (job["kind"], job["pods"], job["gpus"]) == ("gang", 3, 16)
    assert job["verdict"] != "runs_now"
    assert len(found) == 1


def test_it_counts_the_pods_an_mpijob_already_has():
    """An exported worker-0 (labels job-name, job-role worker, replica-index 0) running on
    node a: only the launcher and worker-1 are still to come."""
    running = (
        pod_object("ml", "hpl-worker-0")
        .limits({GPU: "8"})
        .labels(
            {
                "training.kubeflow.org/job-name": "hpl",
                "training.kubeflow.org/job-role": "worker",
                "training.kubeflow.org/replica-index": "0",
            }
        )
        .on("a")
    )
    snapshot = parse(NODE.named("a"), running, mpi_job())
    made = sorted(p.name for p in snapshot.cluster.pods if p.synthesized_by)
    assert made == ["hpl-launcher", "hpl-worker-1"]
