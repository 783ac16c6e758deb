"""The Karpenter profile (autoscaler/karpenter.py), on small hand-built clusters.

Every expectation is worked out from kubernetes-sigs/karpenter's provisioner as the
module docstring cites it (queue order, existing nodes, open NodeClaims, NodePools
by weight, cheapest option, reserved offerings, DRA, no gangs)."""

from dataclasses import replace
from datetime import UTC, datetime

from recommender.engine.autoscaler.karpenter import karpenter_scale_up, node_pools
from recommender.engine.autoscaler.plan import ScaleUpPlan
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_claim, make_gang, make_group, make_node, make_pod, make_reservation
from topology.model.hardware import (
    AutoscalerRef,
    Cluster,
    NodeGroup,
    NodePlacement,
    Topology,
    TopologyLevel,
)

AT = datetime(2026, 12, 2, tzinfo=UTC)
BLOCK = "cloud.google.com/gce-topology-block"


# a 96-cpu H100 machine, an ml pod of one cpu
H100 = (
    make_node().label("nvidia.com/gpu.product", "H100").allocatable(96, "1Ti", 110).gpus(0, "H100")
)
ML_POD = make_pod(namespace="ml").requests(1)


def instance_type(
    pool: str, kind: str, gpus: int, price: float, *, weight: int | None = None, max_size: int = 8
) -> NodeGroup:
    """One instance type of a NodePool, as discovery makes it."""
    return (
        make_group(f"{pool}-{kind}", H100.named(f"{pool}-{kind}-t").gpus(gpus).build())
        .selector({"karpenter.sh/nodepool": pool, "node.kubernetes.io/instance-type": kind})
        .size(0, max_size)
        .price(price)
        .autoscaler(AutoscalerRef("karpenter", pool, weight=weight))
        .build()
    )


def provision(cluster: Cluster) -> ScaleUpPlan:
    state = ClusterState.from_cluster(cluster)
    return karpenter_scale_up(cluster, pending_workloads(cluster), state=state, at=AT)


def bought(plan: ScaleUpPlan) -> list[tuple[str, int]]:
    return [(a.node_group, a.count) for a in plan.additions]


def test_it_packs_the_batch_onto_the_cheapest_type_that_fits_every_pod() -> None:
    groups = (instance_type("gpu", "small", 4, 30.0), instance_type("gpu", "big", 8, 50.0))
    cluster = Cluster(
        "c",
        pods=(ML_POD.named("p0").gpus(4).build(), ML_POD.named("p1").gpus(4).build()),
        node_groups=groups,
    )
    plan = provision(cluster)
    # p0 opens a NodeClaim with options {big, small} (both hold 4 GPUs); p1 joins it:
    # 8 GPUs narrow the options to {big}; one claim, launched as big: 50/h
    # (one small per pod would be 2 x 30 = 60/h)
    assert bought(plan) == [("gpu-big", 1)]
    assert plan.cost_per_hour == 50.0
    assert plan.outcomes["ml/p0"].add_nodes == {"gpu-big": 1}
    # p1 rides on p0's claim: it waits for a scale-up but buys nothing of its own
    assert (plan.outcomes["ml/p1"].verdict, plan.outcomes["ml/p1"].add_nodes) == ("scale_up", {})
    assert plan.outcomes["ml/p1"].schedulable_after is True


def test_a_lone_pod_gets_the_cheapest_type_that_holds_it() -> None:
    groups = (instance_type("gpu", "small", 4, 30.0), instance_type("gpu", "big", 8, 50.0))
    plan = provision(Cluster("c", pods=(ML_POD.named("p0").gpus(4).build(),), node_groups=groups))
    # options {big, small}: small is cheaper
    assert bought(plan) == [("gpu-small", 1)]


def test_node_pools_are_tried_by_weight_before_name_and_price() -> None:
    groups = (
        instance_type("a", "cheap", 8, 30.0),
        instance_type("z", "dear", 8, 100.0, weight=10),
    )
    cluster = Cluster("c", pods=(ML_POD.named("p0").gpus(8).build(),), node_groups=groups)
    assert [p.name for p in node_pools(cluster)] == ["z", "a"]
    # the first NodePool in weight order with a type for the pod opens the claim
    assert bought(provision(cluster)) == [("z-dear", 1)]
    unweighted = replace(cluster, node_groups=(groups[0], instance_type("z", "dear", 8, 100.0)))
    assert bought(provision(unweighted)) == [("a-cheap", 1)]


def test_a_reserved_offering_is_launched_first_whoever_paid_for_it() -> None:
    groups = (instance_type("gpu", "small", 4, 30.0), instance_type("gpu", "big", 8, 80.0))
    odcr = make_reservation("team-x-odcr", "team-x").group_capacity("gpu-big", 1).build()
    cluster = Cluster(
        "c",
        pods=(make_pod("p0", "team-y").requests(1).gpus(4).build(),),
        node_groups=groups,
        reservations=(odcr,),
    )
    plan = provision(cluster)
    # options {big, small}; big has a reserved offering left: near-zero price, so it wins
    # over small's 30/h, although team-y does not own the reservation
    assert [(a.node_group, a.reservation, a.cost_per_hour) for a in plan.additions] == [
        ("gpu-big", "team-x-odcr", 0.0)
    ]
    assert plan.cost_per_hour == 0.0


def test_pods_with_dra_claims_are_not_provisioned_for() -> None:
    claim = make_claim("gpu").request("gpu", "gpu.nvidia.com").build()
    dra = ML_POD.named("dra").claim(claim).build()
    cluster = Cluster("c", pods=(dra,), node_groups=(instance_type("gpu", "big", 8, 80.0),))
    plan = provision(cluster)
    assert plan.additions == ()
    assert plan.outcomes["ml/dra"].verdict == "blocked"
    assert any("DRA resource claims" in r for r in plan.outcomes["ml/dra"].reasons)


def test_the_queue_takes_the_largest_cpu_request_first() -> None:
    small_cpu, big_cpu = (
        ML_POD.named("a-small-cpu").requests(1).gpus(8).build(),
        ML_POD.named("b-big-cpu").requests(64).gpus(8).build(),
    )
    existing = H100.named("n1").gpus(8).build()
    group = instance_type("gpu", "big", 8, 80.0)
    cluster = Cluster("c", nodes=(existing,), pods=(small_cpu, big_cpu), node_groups=(group,))
    plan = provision(cluster)
    # b-big-cpu (64 CPUs) is popped first and takes n1's 8 GPUs; a-small-cpu then needs
    # a new node (in name order it would have been the other way round)
    assert plan.outcomes["ml/b-big-cpu"].verdict == "runs_now"
    assert plan.outcomes["ml/a-small-cpu"].add_nodes == {"gpu-big": 1}


def test_limits_stop_new_claims() -> None:
    group = instance_type("gpu", "big", 8, 80.0, max_size=1)
    cluster = Cluster(
        "c",
        pods=(ML_POD.named("p0").gpus(8).build(), ML_POD.named("p1").gpus(8).build()),
        node_groups=(group,),
    )
    plan = provision(cluster)
    # p0 opens a claim (room 1 -> 0); p1 cannot join (16 GPUs) nor open one
    assert bought(plan) == [("gpu-big", 1)]
    assert plan.outcomes["ml/p1"].verdict == "blocked"
    assert plan.outcomes["ml/p1"].reasons == (
        "pod p1: no NodePool has an instance type that admits it within its limits",
    )


def test_groups_of_another_autoscaler_are_not_karpenters() -> None:
    ca = replace(
        instance_type("gpu", "big", 8, 80.0), autoscaler=AutoscalerRef("cluster-autoscaler", "x")
    )
    plan = provision(Cluster("c", pods=(ML_POD.named("p0").gpus(8).build(),), node_groups=(ca,)))
    assert plan.additions == ()
    assert plan.outcomes["ml/p0"].verdict == "blocked"


def test_a_gang_packed_pod_by_pod_is_split_across_blocks_and_stranded() -> None:
    topology = Topology(levels=(TopologyLevel(BLOCK, "block"),))
    group = replace(
        instance_type("gpu", "big", 8, 80.0),
        placements=(NodePlacement({BLOCK: "b1"}, 1), NodePlacement({BLOCK: "b2"}, 1)),
    )
    members = tuple(ML_POD.named(f"train-{i}").gpus(8).gang("ml/train").build() for i in range(2))
    gang = make_gang("train", 2, "ml").required(BLOCK).build()
    cluster = Cluster("c", pods=members, gangs=(gang,), node_groups=(group,), topology=topology)
    plan = provision(cluster)
    # train-0 opens claim 1; train-1 cannot join (16 GPUs > 8) and opens claim 2. The
    # cloud puts claim 1 in b1 (first placement with room), claim 2 in b2 (b1's one slot
    # is used). The gang needs both in one block: it does not start, both nodes idle.
    assert [(a.node_group, dict(a.placement)) for a in plan.additions] == [
        ("gpu-big", {BLOCK: "b1"}),
        ("gpu-big", {BLOCK: "b2"}),
    ]
    assert plan.outcomes["ml/train"].schedulable_after is False
    assert plan.stranded_gpus == 16
    assert plan.stranded_per_hour == 160.0
