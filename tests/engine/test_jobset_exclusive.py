"""Exclusive placement of a JobSet and a LeaderWorkerSet (issue 46 item 7): one Job
(one group) per domain of the annotated node label, every pod of it in its domain.

kubernetes-sigs/jobset adds the terms (``setExclusiveAffinities``, on the Job's pod
template in ``pkg/controllers/jobset_controller.go``; since the pod webhook on the
leader, the followers pinned to the leader's domain, ``pkg/webhooks/
pod_mutating_webhook.go``): required pod affinity to the Job's own ``job-key`` and
required anti-affinity to any other Job's, per the annotated topology key. Worked by
hand: two node pools of two 8-GPU nodes, Jobs of two 8-GPU pods.
"""

import hashlib
from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import critical_pass
from tests.builders.objects import as_dicts, job_object, kube_object, node_object
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 1, tzinfo=UTC)
POOL = "cloud.google.com/gke-nodepool"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
GPU_JOB = (
    job_object("ml", "")
    .spec(parallelism=2, completions=2)
    .container(
        resources={
            "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "8"},
            "limits": {"nvidia.com/gpu": "8"},
        }  # fmt: skip
    )
)


def _nodes(pools: int, per_pool: int) -> list:
    return [
        node_object(f"p{p}-n{n}")
        .hostname()
        .label(POOL, f"pool-{p}")
        .allocatable(cpu="64", memory="512Gi", pods="110")
        .gpus(8)
        .capacity()
        .ready()
        for p in range(pools)
        for n in range(per_pool)
    ]


def _jobset(replicas: int, **annotations: str):
    replicated = {"name": "w", "replicas": replicas, "template": {"spec": GPU_JOB.dict()["spec"]}}
    jobset = kube_object("jobset.x-k8s.io/v1alpha2", "JobSet", "js", "ml")
    for key, value in {EXCLUSIVE: POOL, **annotations}.items():
        jobset = jobset.annotation(key, value)
    return jobset.spec(replicatedJobs=[replicated])


def _evaluated(*objects):
    snapshot = parse_objects([("test", o) for o in as_dicts(*objects)], cluster_name="t")
    assert snapshot.errors == ()
    return snapshot, critical_pass(snapshot.cluster, at=AT)


def test_each_job_takes_a_pool_of_its_own() -> None:
    snapshot, critical = _evaluated(*_nodes(pools=2, per_pool=2), _jobset(replicas=2))
    assert {p.unsupported for p in snapshot.cluster.pods} == {()}
    assert {w.joint.verdict for w in critical.evaluation.workloads} == {"runs_now"}
    pools: dict[str, set[str]] = {}
    for outcome in critical.basis.scheduler.outcomes:
        for binding in outcome.bindings:
            job = binding.pod.rsplit("-", 1)[0]  # ml/js-w-<job index>
            pools.setdefault(job, set()).add(binding.node.split("-")[0])
    assert sorted(pools.values(), key=sorted) == [{"p0"}, {"p1"}]


def test_a_third_job_finds_no_pool_though_gpus_are_free() -> None:
    # two pools of four 8-GPU nodes: room for four Jobs by GPUs, two by exclusivity
    _snapshot, critical = _evaluated(*_nodes(pools=2, per_pool=4), _jobset(replicas=3))
    verdicts = sorted(w.joint.verdict for w in critical.evaluation.workloads)
    assert verdicts.count("runs_now") == 4  # two Jobs × two pods
    assert len(verdicts) == 6 and "runs_now" not in verdicts[:2]


def test_the_node_selector_strategy_is_said_unsupported() -> None:
    strategy = {"alpha.jobset.sigs.k8s.io/node-selector": "true"}
    snapshot, _evaluated_ = _evaluated(*_nodes(pools=1, per_pool=2), _jobset(1, **strategy))
    assert {p.unsupported for p in snapshot.cluster.pods} == {
        (f"JobSet exclusive placement per {POOL} ({EXCLUSIVE}) not supported",)
    }


def _lws(replicas: int, **annotations: str):
    gpu = {
        "containers": [
            {
                "name": "c",
                "resources": {
                    "requests": {"cpu": "1", "nvidia.com/gpu": "8"},
                    "limits": {"nvidia.com/gpu": "8"},
                },
            }  # fmt: skip
        ]
    }
    lws = kube_object("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "vllm", "ml")
    for key, value in annotations.items():
        lws = lws.annotation(key, value)
    template = {"size": 2, "workerTemplate": {"spec": gpu}}
    return lws.spec(replicas=replicas, leaderWorkerTemplate=template)


def test_a_leader_worker_sets_exclusive_groups_take_a_pool_each() -> None:
    """LeaderWorkerSet ``leaderworkerset.sigs.k8s.io/exclusive-topology``: one group per
    domain (lws ``SetExclusiveAffinities`` on the group key, SHA-1 of namespace/leader
    pod; the workers pinned to the leader's domain). Three groups of two 8-GPU pods,
    two pools of four 8-GPU nodes: two groups run, the third finds no pool."""
    lws = _lws(3, **{"leaderworkerset.sigs.k8s.io/exclusive-topology": POOL})
    snapshot, critical = _evaluated(*_nodes(pools=2, per_pool=4), lws)
    pods = {p.name: p for p in snapshot.cluster.pods}
    key = "leaderworkerset.sigs.k8s.io/group-key"
    assert pods["vllm-0"].labels[key] == pods["vllm-0-1"].labels[key]
    assert pods["vllm-0"].labels[key] == hashlib.sha1(b"ml/vllm-0").hexdigest()
    assert {p.unsupported for p in pods.values()} == {()}
    placed = [b for o in critical.basis.scheduler.outcomes for b in o.bindings]
    groups: dict[str, set[str]] = {}
    for binding in placed:
        group = binding.pod.split("/")[1].split("-")[1]  # vllm-<group>[-<worker>]
        groups.setdefault(group, set()).add(binding.node.split("-")[0])
    assert len(placed) == 4 and sorted(groups.values(), key=sorted) == [{"p0"}, {"p1"}]


def test_a_leader_worker_set_without_the_annotation_fills_the_pools() -> None:
    _snapshot, critical = _evaluated(*_nodes(pools=2, per_pool=4), _lws(3))
    assert sum(len(o.bindings) for o in critical.basis.scheduler.outcomes) == 6
