"""Volcano's enqueue action (issue 46 item 2): a PodGroup with ``spec.minResources``
leaves Pending only when they fit, as volcano-sh/volcano
``pkg/scheduler/actions/enqueue/enqueue.go`` ``Execute`` asks its plugins:
``plugins/proportion/proportion.go`` and ``plugins/overcommit/overcommit.go``
(``JobEnqueueableFn`` of each). Each expectation is worked out by hand."""

from datetime import UTC, datetime
from typing import Any

from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import (
    GPU,
    KubeObject,
    as_dicts,
    kube_object,
    node_object,
    pod_object,
    volcano_pod_group_object,
)
from topology.kube.kueue.quotas import quota_waiting
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 7, tzinfo=UTC)
VOLCANO = "scheduling.volcano.sh/v1beta1"
PREFIX = "waiting for quota in queue "

# an 8-GPU node with 10 cpu; a one-cpu pod of ml for the Volcano scheduler
NODE = node_object("").hostname().allocatable(cpu="10", memory="64Gi", pods="110").gpus(8)
POD = pod_object("ml", "").requests(cpu="1").scheduler("volcano")
MEMBER = POD.limits({GPU: "8"}).annotation("scheduling.k8s.io/group-name", "train")
QUEUE = kube_object(VOLCANO, "Queue", "research").spec(capability={"cpu": "100", GPU: "8"})


def parse(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects([("v.yaml", o) for o in as_dicts(*objects)], cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def waiting(*objects: KubeObject) -> dict[str, str]:
    cluster = parse(*objects)
    return {k: w.reason for k, w in quota_waiting(cluster, pending_workloads(cluster)).items()}


def workloads(*objects: KubeObject) -> dict[str, dict[str, Any]]:
    result = evaluate(parse(*objects), at=AT).to_json()
    return {w["name"]: w for w in result["workloads"]}


def volcano_job(name: str, cpu: str, replicas: int = 2, queue: str = "default") -> KubeObject:
    """A Volcano Job of ``replicas`` pods of ``cpu`` each, all needed (minAvailable)."""
    requests = {"cpu": cpu, "memory": "1Gi"}
    template = {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}}
    return kube_object("batch.volcano.sh/v1alpha1", "Job", name, "ml").spec(
        queue=queue,
        minAvailable=replicas,
        tasks=[{"name": "w", "replicas": replicas, "template": template}],
    )


def test_it_keeps_a_pod_group_pending_whose_min_resources_exceed_the_queues_capability():
    """proportion ``JobEnqueueableFn``: minResources 16 GPUs + allocated 0 + inqueue 0 >
    capability 8. Its one 8-GPU member would fit the free node (and the queue, 8 <= 8):
    without minResources it ran now; Volcano keeps the PodGroup Pending."""
    group = volcano_pod_group_object("ml", "train", 1, queue="research").spec(
        minResources={GPU: "16"}
    )
    objects = (NODE.named("a"), QUEUE, group, MEMBER.named("m0"))
    assert waiting(*objects) == {
        "ml/train": f"{PREFIX}VolcanoQueue/research (Volcano keeps PodGroup ml/train Pending: "
        "minResources 16 nvidia.com/gpu, the queue's capability leaves 8; enqueue, "
        "proportion plugin)"
    }
    found = workloads(*objects)["ml/train"]
    assert found["verdict"] == "waiting"
    assert found["joint"]["addNodes"] == {}


def test_it_checks_min_resources_only_while_the_pod_group_is_pending():
    """enqueue.go takes only jobs whose PodGroup is Pending (``job.IsPending``); an
    Inqueue one is past the check: its member runs on the free node."""
    group = (
        volcano_pod_group_object("ml", "train", 1, queue="research")
        .spec(minResources={GPU: "16"})
        .status(phase="Inqueue")
    )
    objects = (NODE.named("a"), QUEUE, group, MEMBER.named("m0"))
    assert waiting(*objects) == {}
    assert workloads(*objects)["ml/train"]["verdict"] == "runs_now"


def test_it_holds_a_volcano_job_the_overcommitted_idle_cannot_take():
    """A Volcano Job of 2 x 3 cpu: the job controller's minResources (calcPGMinResources,
    its first minAvailable pods) are 6 cpu. overcommit: 10 cpu x 1.2 - 8 used by a
    bound pod = 4 < 6: Pending; its pods are not created (syncJob), so nothing is asked
    of the autoscaler either."""
    objects = (
        NODE.named("a"),
        pod_object("other", "busy").requests(cpu="8").on("a"),
        volcano_job("mpi", "3"),
    )
    cluster = parse(*objects)
    (wait,) = quota_waiting(cluster, pending_workloads(cluster)).values()
    assert wait.reason == (
        f"{PREFIX}VolcanoQueue/default (Volcano keeps PodGroup ml/mpi Pending: minResources "
        "6 cpu, the cluster's idle with overcommit 1.2 leaves 4 (allocatable 10 x 1.2 - "
        "used 8); enqueue, overcommit plugin; its pods are created only once the PodGroup "
        "is Inqueue: cluster-autoscaler adds no node for it)"
    )
    assert not wait.autoscaler_sees_pods


def test_it_enqueues_a_volcano_job_the_overcommitted_idle_takes():
    """10 x 1.2 - 4 used = 8 >= 6 (overcommit) and 6 <= 10 (proportion's cluster bound):
    Inqueue, though only 6 cpu are free: its pods are created and placed."""
    objects = (
        NODE.named("a"),
        pod_object("other", "busy").requests(cpu="4").on("a"),
        volcano_job("mpi", "3"),
    )
    assert waiting(*objects) == {}


def test_it_counts_what_it_enqueued_before_against_the_next():
    """Two Volcano Jobs of minResources 6 cpu on a free 10-cpu node, queue default (no
    capability: realCapability is the cluster's 10). First: 6 <= 12 and 6 <= 10,
    Inqueue. Second: overcommit 6 + 6 inqueue <= 12 passes; proportion 6 + the queue's
    6 inqueue > 10: Pending."""
    objects = (NODE.named("a"), volcano_job("first", "3"), volcano_job("second", "3"))
    assert waiting(*objects) == {
        "ml/second": f"{PREFIX}VolcanoQueue/default (Volcano keeps PodGroup ml/second "
        "Pending: minResources 6 cpu, the cluster's 10 less the queue's 6 leaves 4; "
        "enqueue, proportion plugin; its pods are created only once the PodGroup is "
        "Inqueue: cluster-autoscaler adds no node for it)"
    }


def test_it_leaves_a_pod_group_with_pods_to_the_autoscaler_when_only_the_cluster_is_short():
    """A PodGroup whose two 8-GPU members exist, minResources 16 GPUs, on one free
    8-GPU node: overcommit 8 x 1.2 = 9.6 < 16 keeps it Pending now, but its pods are
    marked Unschedulable (cache RecordJobStatusEvent), cluster-autoscaler adds a node
    for them and the next session enqueues it: no wait, the plan decides."""
    group = volcano_pod_group_object("ml", "train", 2).spec(minResources={GPU: "16"})
    objects = (NODE.named("a"), group, MEMBER.named("m0"), MEMBER.named("m1"))
    assert waiting(*objects) == {}
