"""Pods kube-scheduler places by preempting: what cluster-autoscaler and Karpenter do
with them, worked out by hand from upstream.

cluster-autoscaler: ``core/podlistprocessor/filter_out_expendable.go``
(``FilterOutExpendableAndSplit``, ``addPreemptingPodsToSnapshot``): a pod nominated to
an existing node is left out of scale-up and force-added onto that node, the victims
left in the snapshot; its simulation runs Filter, never PostFilter. Karpenter:
``pkg/utils/pod/scheduling.go`` ``IsProvisionable`` (not ``IsPreempting``): ignored.
"""

from datetime import UTC, datetime

from recommender.engine.autoscaler.cluster_autoscaler import naive_scale_up
from recommender.engine.autoscaler.karpenter import karpenter_scale_up
from recommender.engine.autoscaler.nominated import nominations
from recommender.engine.autoscaler.plan import PREEMPTS, options_for
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import (
    Cluster,
    Device,
    Gang,
    Gpu,
    GpuRequest,
    Node,
    NodeGroup,
    Pod,
    Resources,
)

AT = datetime(2026, 12, 2, tzinfo=UTC)
GI = 2**30
ALLOCATABLE = Resources(cpu_milli=96_000, memory_bytes=1000 * GI, pods=110)


def gpu_node(name: str, labels: dict[str, str] | None = None) -> Node:
    gpus = tuple(Gpu(f"{name}-gpu{i}", "A100") for i in range(8))
    devices = tuple(Device(f"{name}-dev{i}", gpu=g.name, model="A100") for i, g in enumerate(gpus))
    return Node(name, allocatable=ALLOCATABLE, gpus=gpus, devices=devices, labels=labels or {})


def gpu_pod(
    namespace: str,
    name: str,
    gpus: int,
    priority: int,
    node_name: str | None = None,
    gang: str | None = None,
) -> Pod:
    return Pod(
        namespace,
        name,
        requests=Resources(cpu_milli=4000, memory_bytes=GI, pods=1),
        gpu=GpuRequest(gpus),
        priority=priority,
        node_name=node_name,
        gang=gang,
        started=0.0 if node_name else None,
    )


A100 = NodeGroup(
    "a100", {"pool": "a100"}, 0, 4, 30.0, template=gpu_node("a100-template", {"pool": "a100"})
)


def one_node_cluster(scavenger_gpus: int, *pending: Pod) -> Cluster:
    """n1 (8 GPUs, pool a100) running batch/scavenger (priority -100) on
    ``scavenger_gpus`` GPUs, the ``pending`` pods, and the a100 group."""
    return Cluster(
        "c",
        nodes=(gpu_node("n1", {"pool": "a100"}),),
        pods=(gpu_pod("batch", "scavenger", scavenger_gpus, -100, node_name="n1"), *pending),
        node_groups=(A100,),
    )


def evaluate_naive(cluster: Cluster, entry=naive_scale_up):  # type: ignore[no-untyped-def]
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    return entry(cluster, pending, state=state, at=AT)


def test_a_nominated_pod_is_force_added_over_its_victims() -> None:
    # n1 runs batch/scavenger (priority -100, 6 of 8 GPUs). Pending: ml/trainer (1000,
    # 8 GPUs) and ml/small (0, 2 GPUs). kube-scheduler, priority first: the trainer fits
    # no node (2 free GPUs); PostFilter on n1: the scavenger goes -> 8 free, the trainer
    # is nominated to n1 and takes all 8. ml/small then fits nowhere and nothing of
    # lower priority than 0 runs: blocked.
    # CA: the trainer is left out and force-added onto n1 over the scavenger (6 + 8 of
    # 8 GPUs: overcommitted), so ml/small (2 GPUs) fits no existing node in
    # filter-out-schedulable: one a100 node is bought for it (least-waste, the only
    # group). Had the trainer merely been left out, ml/small would have fitted n1's 2
    # free GPUs and nothing would be bought.
    cluster = one_node_cluster(6, gpu_pod("ml", "trainer", 8, 1000), gpu_pod("ml", "small", 2, 0))
    plan = evaluate_naive(cluster)
    trainer, small = plan.outcomes["ml/trainer"], plan.outcomes["ml/small"]
    assert trainer.verdict == PREEMPTS
    assert trainer.preempts == ("batch/scavenger",)
    assert trainer.add_nodes == {}
    assert small.add_nodes == {"a100": 1}
    assert plan.cost_per_hour == 30.0


def test_ca_buys_for_gang_members_the_scheduler_does_not_preempt_for() -> None:
    # Gang ml/train of 2 x 8 GPUs (priority 100, minMember 2). n1 runs batch/old
    # (-100, 8 GPUs), n2 runs ml/web (2000, 8 GPUs). kube-scheduler (our gang rule,
    # docs/FIDELITY.md: a gang preempts only when every member then fits): member 0
    # could preempt batch/old on n1, member 1 finds no victim (web outranks it), so
    # nothing is evicted and the gang is not nominated. CA never preempts in its
    # simulation: neither member fits an existing node -> the binpacking estimator
    # puts one 8-GPU member per a100 template node: 2 nodes (60/h).
    gang = Gang("ml", "train", 2, priority=100)
    cluster = Cluster(
        "c",
        nodes=(gpu_node("n1", {"pool": "a100"}), gpu_node("n2", {"pool": "a100"})),
        pods=(
            gpu_pod("batch", "old", 8, -100, node_name="n1"),
            gpu_pod("ml", "web", 8, 2000, node_name="n2"),
            *(gpu_pod("ml", f"train-{i}", 8, 100, gang="ml/train") for i in range(2)),
        ),
        gangs=(gang,),
        node_groups=(A100,),
    )
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    assert nominations(cluster, pending, state, options_for("default", AT)) == {}
    plan = evaluate_naive(cluster)
    assert plan.outcomes["ml/train"].add_nodes == {"a100": 2}
    assert plan.outcomes["ml/train"].preempts == ()


def test_the_scheduler_pass_given_is_the_one_used() -> None:
    # The evaluation hands its own scheduler pass over (nominated=...): the same
    # nominations as the pass naive_scale_up runs itself when given none.
    cluster = one_node_cluster(8, gpu_pod("ml", "trainer", 8, 1000))
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    result = place(cluster, pending, state=state, options=options_for("default", AT))
    (outcome,) = result.outcomes
    given = naive_scale_up(
        cluster, pending, state=state, at=AT, nominated={outcome.workload: outcome}
    )
    alone = naive_scale_up(cluster, pending, state=state, at=AT)
    assert given.outcomes == alone.outcomes
    assert alone.outcomes["ml/trainer"].verdict == PREEMPTS
    # and nothing nominated: CA sees an unschedulable pod and buys a node for it
    none = naive_scale_up(cluster, pending, state=state, at=AT, nominated={})
    assert none.outcomes["ml/trainer"].add_nodes == {"a100": 1}


def test_karpenter_ignores_a_preempting_pod() -> None:
    # The trainer of the first test alone: kube-scheduler nominates it to n1 (the
    # scavenger is evicted); Karpenter's IsProvisionable leaves it out: no NodeClaim.
    cluster = one_node_cluster(6, gpu_pod("ml", "trainer", 8, 1000))
    plan = evaluate_naive(cluster, karpenter_scale_up)
    trainer = plan.outcomes["ml/trainer"]
    assert trainer.verdict == PREEMPTS
    assert trainer.preempts == ("batch/scavenger",)
    assert plan.additions == ()
