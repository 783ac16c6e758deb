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
from tests.builders import make_gang, make_group, make_node, make_pod
from topology.model.hardware import Cluster, Pod

AT = datetime(2026, 12, 2, tzinfo=UTC)
# 8 A100s whose devices carry no capacity, in pool a100; pods of 4 cpu and 1Gi
A100_NODE = (
    make_node()
    .label("pool", "a100")
    .allocatable(96, "1000Gi", 110)
    .gpus(8, "A100", gpu_name="{node}-gpu{i}", device_name="{node}-dev{i}", capacity=None)
)
POD = make_pod().requests(4, "1Gi")  # the bound ones say they started at 0


A100 = (
    make_group("a100", A100_NODE.named("a100-template").build())
    .selector({"pool": "a100"})
    .size(0, 4)
    .price(30.0)
    .build()
)


def one_node_cluster(scavenger_gpus: int, *pending: Pod) -> Cluster:
    """n1 (8 GPUs, pool a100) running batch/scavenger (priority -100) on
    ``scavenger_gpus`` GPUs, the ``pending`` pods, and the a100 group."""
    return Cluster(
        "c",
        nodes=(A100_NODE.named("n1").build(),),
        pods=(
            POD.namespace("batch")
            .named("scavenger")
            .gpus(scavenger_gpus)
            .priority(-100)
            .on("n1")
            .started(0.0)
            .build(),
            *pending,
        ),
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
    cluster = one_node_cluster(
        6,
        POD.namespace("ml").named("trainer").gpus(8).priority(1000).build(),
        POD.namespace("ml").named("small").gpus(2).priority(0).build(),
    )
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
    gang = make_gang("train", 2, "ml").priority(100).build()
    cluster = Cluster(
        "c",
        nodes=(A100_NODE.named("n1").build(), A100_NODE.named("n2").build()),
        pods=(
            POD.namespace("batch")
            .named("old")
            .gpus(8)
            .priority(-100)
            .on("n1")
            .started(0.0)
            .build(),
            POD.namespace("ml").named("web").gpus(8).priority(2000).on("n2").started(0.0).build(),
            *(
                POD.namespace("ml")
                .named(f"train-{i}")
                .gpus(8)
                .priority(100)
                .gang("ml/train")
                .build()
                for i in range(2)
            ),
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
    cluster = one_node_cluster(
        8, POD.namespace("ml").named("trainer").gpus(8).priority(1000).build()
    )
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
    cluster = one_node_cluster(
        6, POD.namespace("ml").named("trainer").gpus(8).priority(1000).build()
    )
    plan = evaluate_naive(cluster, karpenter_scale_up)
    trainer = plan.outcomes["ml/trainer"]
    assert trainer.verdict == PREEMPTS
    assert trainer.preempts == ("batch/scavenger",)
    assert plan.additions == ()
