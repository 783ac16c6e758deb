"""cluster-autoscaler's mechanisms, each worked out by hand from the upstream code."""

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from recommender.engine.autoscaler.cluster_autoscaler import naive_scale_up
from recommender.engine.autoscaler.estimator import estimate
from recommender.engine.autoscaler.expander import (
    LEAST_NODES,
    LEAST_WASTE,
    MOST_PODS,
    PRICE,
    Option,
    best_option,
    waste_score,
)
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_group, make_node, make_pod
from topology.model.hardware import AutoscalerRef, Cluster, Node, Pod, Resources

AT = datetime(2026, 12, 2, tzinfo=UTC)
GI = 2**30
ZONE = "topology.kubernetes.io/zone"


# the tests' machines (110 pods; L4 GPUs named after the node, when it has some) and pods
MACHINE = (
    make_node()
    .allocatable(pods=110)
    .gpus(0, "L4", gpu_name="{node}-gpu-{i}", device_name="gpu-{i}")
)
ML_POD = make_pod(namespace="ml")


def naive(cluster: Cluster, settings: CaSettings | None = None):  # type: ignore[no-untyped-def]
    settings = settings or CaSettings()
    state = ClusterState.from_cluster(cluster)
    pending = pending_workloads(cluster)
    return naive_scale_up(cluster, pending, state=state, at=AT, settings=settings)


# --- expander/waste/waste.go -------------------------------------------------------


# --enable-provisioning-requests=true: the request tests below model what CA does with it
# (flags.go default false: without it the pods are ordinary, test_ca_flags.py)
REQUESTS_ON = CaSettings(provisioning_requests=True)


def option(name: str, count: int, pods: int, cpu: int = 10, memory_gi: int = 10) -> Option:
    template = MACHINE.named(f"{name}-t").allocatable(cpu, f"{memory_gi}Gi").build()
    group_ = make_group(name, template).price(float(count)).build()
    return Option(
        group_,
        count,
        tuple(ML_POD.named(f"p{i}").requests(1, "1Gi").build() for i in range(pods)),
        template,
    )


def test_waste_is_unused_cpu_plus_unused_memory_over_the_whole_option() -> None:
    # 2 nodes x (10 cpu, 10Gi) for 5 pods of (1 cpu, 1Gi): (20-5)/20 + (20-5)/20 = 1.5
    assert waste_score(option("a", 2, 5)) == 1.5
    # 1 node for 5 pods: 0.5 + 0.5
    assert waste_score(option("b", 1, 5)) == 1.0


# expander/waste/waste_test.go TestLeastWaste, as data: (template cpu milli, memory MiB)
# per group, one pod of 500m / 1000 MiB; expected winner. balanced (8000m, 16000 MiB):
# 15/16 + 15/16; highmem (8000m, 32000 MiB): 15/16 + 31/32 -> balanced wins; lowcpu
# (4000m, 16000 MiB): 7/8 + 15/16 -> lowcpu wins among the three.
WASTE_TABLE = [
    ({"balanced": (8000, 16000)}, "balanced"),
    ({"balanced": (8000, 16000), "highmem": (8000, 32000)}, "balanced"),
    ({"balanced": (8000, 16000), "highmem": (8000, 32000), "lowcpu": (4000, 16000)}, "lowcpu"),
]


@pytest.mark.parametrize(("groups", "winner"), WASTE_TABLE)
def test_least_waste_as_upstream_tests_it(groups: dict[str, tuple[int, int]], winner: str) -> None:
    mib = 2**20
    one = Pod("ml", "p", requests=Resources(cpu_milli=500, memory_bytes=1000 * mib, pods=1))
    options = []
    for name, (cpu, memory) in groups.items():
        template = Node(
            f"{name}-t", allocatable=Resources(cpu_milli=cpu, memory_bytes=memory * mib, pods=100)
        )
        options.append(Option(make_group(name, template).price(1.0).build(), 1, (one,), template))
    assert best_option(options, (LEAST_WASTE,), random.Random(0)).group.name == winner


def test_least_waste_picks_the_option_that_wastes_least() -> None:
    options = [option("a", 2, 5), option("b", 1, 5)]
    assert best_option(options, (LEAST_WASTE,), random.Random(0)).group.name == "b"


def test_a_chain_narrows_ties_and_the_random_fallback_is_seeded() -> None:
    # same waste (1 node, 5 pods each): least-waste keeps both; most-pods cannot split
    # them; the random pick must be the same for the same seed
    tied = [option("a", 1, 5), option("b", 1, 5)]
    picks = {
        best_option(tied, (LEAST_WASTE, MOST_PODS), random.Random(7)).group.name for _ in "xyz"
    }
    assert len(picks) == 1
    names = {
        best_option(tied, (LEAST_WASTE,), random.Random(seed)).group.name for seed in range(20)
    }
    assert names == {"a", "b"}  # really random among ties, not by name


def test_least_nodes_most_pods_and_price() -> None:
    options = [option("a", 3, 6), option("b", 1, 2)]
    assert best_option(options, (LEAST_NODES,), random.Random(0)).group.name == "b"
    assert best_option(options, (MOST_PODS,), random.Random(0)).group.name == "a"
    # price per pod: a 3/6 = 0.5, b 1/2 = 0.5: a tie, decided at random but only among them
    assert best_option(options, (PRICE,), random.Random(0)).group.name in {"a", "b"}


# --- estimator/binpacking_estimator.go ------------------------------------------------


# estimator/binpacking_estimator_test.go TestBinpackingEstimate, its resource-only
# cases as data (hostPort and topology-spread cases are left out: the model has no
# hostPort filter, and spread is judged against the pods around by the caller).
# Template: cpu milli, memory MiB, 10 pods; pod groups: (cpu milli, memory BYTES as
# upstream's BuildTestPod, count); limit 0 = none.
BINPACKING_TABLE = [
    ("simple resource-based binpacking", 350 * 3 - 50, 2 * 1000, 0, [(350, 1000, 10)], 5, 10),
    ("pods-per-node bound binpacking", 10000, 20000, 0, [(10, 100, 20)], 2, 20),
    ("limiter cuts binpacking", 1000, 5000, 5, [(500, 1000, 20)], 5, 10),
    (
        "decreasing ordered pods are processed first",
        1000,
        5000,
        5,
        [(50, 1000, 10), (500, 1000, 10)],
        5,
        10,
    ),
]


@pytest.mark.parametrize(
    ("name", "cpu", "memory_mib", "limit", "groups", "nodes", "pods"), BINPACKING_TABLE
)
def test_binpacking_as_upstream_tests_it(
    name: str,
    cpu: int,
    memory_mib: int,
    limit: int,
    groups: list[tuple[int, int, int]],
    nodes: int,
    pods: int,
) -> None:
    template = Node(
        "template", allocatable=Resources(cpu_milli=cpu, memory_bytes=memory_mib * 2**20, pods=10)
    )
    estimatees = [
        Pod("universe", f"g{g}-{i}", requests=Resources(cpu_milli=c, memory_bytes=m, pods=1))
        for g, (c, m, count) in enumerate(groups)
        for i in range(count)
    ]
    found = estimate(
        Cluster("c"), template, estimatees, limit=limit or 10**6, policy="default", at=AT
    )
    assert (found.node_count, len(found.pods)) == (nodes, pods), name
    # the same through the scheduler's filters (an inter-pod check that admits all)
    filtered = estimate(
        Cluster("c"),
        template,
        estimatees,
        limit=limit or 10**6,
        policy="default",
        at=AT,
        admit=lambda pod, node, pods: True,
        inter_pod=lambda pod: True,
    )
    assert (filtered.node_count, len(filtered.pods)) == (nodes, pods), name
    if name.startswith("decreasing"):  # the bigger pods were packed, the small ones not
        assert {p.name.split("-")[0] for p in found.pods} == {"g1"}


def test_binpacking_is_first_fit_decreasing_capped_by_the_limit() -> None:
    template = MACHINE.named("t").allocatable(10, "100Gi").build()
    # scores: big 6/10 + 0 -> first; then 5, 4, 4 (cpu only, memory small)
    pods = [
        ML_POD.named("a").requests(4, "1Gi").build(),
        ML_POD.named("big").requests(6, "1Gi").build(),
        ML_POD.named("b").requests(4, "1Gi").build(),
        ML_POD.named("c").requests(5, "1Gi").build(),
    ]
    found = estimate(Cluster("c"), template, pods, limit=10, policy="default", at=AT)
    # FFD: big(6) -> n0; c(5) -> n1; a(4) -> n0 (6+4=10); b(4) -> n1 (5+4=9): 2 nodes
    assert found.node_count == 2
    assert sorted(p.name for _, ps in found.nodes for p in ps) == ["a", "b", "big", "c"]
    capped = estimate(Cluster("c"), template, pods, limit=1, policy="default", at=AT)
    # limit 1: big and a on the one node; c and b need a second node: not helped
    assert capped.node_count == 1
    assert sorted(p.name for p in capped.pods) == ["a", "big"]


def test_counting_and_the_scheduler_filters_pack_plain_pods_alike() -> None:
    # plain pods on a counted template go by counts; forcing the scheduler path (an
    # admit that accepts everything) must give the same nodes for the same FFD order:
    # gpus 4,4 -> n0 (8 GPUs); 3 -> n1; 2,2 -> n1 (3+2=5, +2=7); 1 -> n0? n0 is full
    # (8) -> n1 (8): 2 nodes, 6 pods
    template = MACHINE.named("t").allocatable(64, "512Gi").gpus(8).build()
    pods = [
        ML_POD.named(f"g{i}").requests(2, "8Gi").gpus(g).build()
        for i, g in enumerate((4, 4, 3, 2, 2, 1))
    ]
    counted = estimate(Cluster("c"), template, pods, limit=10, policy="default", at=AT)
    scheduled = estimate(
        Cluster("c"),
        template,
        pods,
        limit=10,
        policy="default",
        at=AT,
        admit=lambda pod, node, pods: True,
        inter_pod=lambda pod: True,
    )
    assert counted.node_count == scheduled.node_count == 2
    assert sorted(p.name for p in counted.pods) == sorted(p.name for p in scheduled.pods)
    assert [len(ps) for _, ps in counted.nodes] == [2, 4]


def test_a_pod_no_empty_template_node_takes_adds_no_node() -> None:
    found = estimate(
        Cluster("c"),
        MACHINE.named("t").allocatable(4, "8Gi").build(),
        [ML_POD.named("huge").requests(8, "1Gi").build()],
        limit=5,
        policy="default",
        at=AT,
    )
    assert found.node_count == 0


# --- orchestrator.go ScaleUp: whole options, one group per loop ----------------------


def test_whole_options_beat_pod_by_pod_in_priority_order() -> None:
    # b1, b2 (priority 10; cpu 4, 16Gi) fit either group; a (cpu 8, 32Gi, 1 GPU) only gpu.
    # Pod by pod, b1 would take a cpu node (waste 1/5 + 4/20 = 0.4 < gpu's 12/16 + 48/64).
    # CA's loop 1 options: gpu: a, b1, b2 on ONE node (16 cpu, 64Gi: waste 0);
    # cpu: b1, b2 on two nodes (waste 0.4) -> gpu; loop 2: all three fit it. 10/h.
    gpu = (
        make_group("gpu", MACHINE.named("gpu-t").allocatable(16, "64Gi").gpus(1).build())
        .price(10.0)
        .build()
    )
    cpu = (
        make_group("cpu", MACHINE.named("cpu-t").allocatable(5, "20Gi").build()).price(2.0).build()
    )
    pods = (
        ML_POD.named("a").requests(8, "32Gi").gpus(1).build(),
        ML_POD.named("b1").requests(4, "16Gi").priority(10).build(),
        ML_POD.named("b2").requests(4, "16Gi").priority(10).build(),
    )
    plan = naive(Cluster("c", pods=pods, node_groups=(gpu, cpu)))
    assert [(a.node_group, a.count) for a in plan.additions] == [("gpu", 1)]
    assert plan.cost_per_hour == 10.0
    assert all(o.schedulable_after for o in plan.outcomes.values())


def test_expendable_pods_trigger_nothing() -> None:
    cluster = Cluster(
        "c",
        pods=(ML_POD.named("low").requests(1, "1Gi").priority(-11).build(),),
        node_groups=(
            make_group("g", MACHINE.named("t").allocatable(4, "8Gi").build()).price(1.0).build(),
        ),
    )
    plan = naive(cluster)
    assert plan.additions == ()
    assert "expendable" in plan.outcomes["ml/low"].reasons[0]


def test_upcoming_nodes_are_not_bought_twice() -> None:
    # CA asked for 1 node of g (target 1) that has not registered: the pod fits that
    # upcoming node (clusterstate.go GetUpcomingNodes), so nothing more is bought
    ref = AutoscalerRef("cluster-autoscaler", "g", target_size=1)
    g = (
        make_group("g", MACHINE.named("t").allocatable(4, "8Gi").build())
        .price(1.0)
        .autoscaler(ref)
        .build()
    )
    plan = naive(
        Cluster("c", pods=(ML_POD.named("p").requests(2, "2Gi").build(),), node_groups=(g,))
    )
    assert plan.additions == ()
    assert plan.outcomes["ml/p"].schedulable_after


def test_a_gpu_node_without_advertised_gpus_is_upcoming() -> None:
    # the member has no nvidia.com/gpu yet (device plugin not up): gpu_processor.go marks
    # it unready; CA counts it as coming and does not buy for the 1-GPU pod
    g = (
        make_group("g", MACHINE.named("t").allocatable(8, "32Gi").gpus(1).build())
        .price(5.0)
        .build()
    )
    member = MACHINE.named("m1").allocatable(8, "32Gi").group("g").build()
    plan = naive(
        Cluster(
            "c",
            nodes=(member,),
            pods=(ML_POD.named("p").requests(2, "2Gi").gpus(1).build(),),
            node_groups=(g,),
        )
    )
    assert plan.additions == ()


def test_max_nodes_total_caps_the_option() -> None:
    # 3 pods, one per node; --max-nodes-total 3 with 1 node existing: 2 nodes at most
    g = make_group("g", MACHINE.named("t").allocatable(4, "8Gi").build()).price(1.0).build()
    existing = MACHINE.named("other").allocatable(1, "1Gi").build()
    pods = tuple(ML_POD.named(f"p{i}").requests(3, "1Gi").build() for i in range(3))
    cluster = Cluster("c", nodes=(existing,), pods=pods, node_groups=(g,))
    plan = naive(cluster, CaSettings(max_nodes_total=3))
    assert sum(a.count for a in plan.additions) == 2
    assert (
        naive(cluster).additions[0].count + sum(a.count for a in naive(cluster).additions[1:]) == 3
    )


def test_the_template_is_a_live_member_with_its_labels_and_taints() -> None:
    # the group's template has no taint, its live member does: CA templates from the
    # member (mixed_nodeinfos_processor.go), so the untolerating pod gets no option
    g = make_group("g", MACHINE.named("t").allocatable(4, "8Gi").build()).price(1.0).build()
    member = MACHINE.named("m1").allocatable(4, "8Gi").group("g").taint("dedicated", "x").build()
    busy = ML_POD.named("busy").requests(4).on("m1").build()
    plan = naive(
        Cluster(
            "c",
            nodes=(member,),
            pods=(busy, ML_POD.named("p").requests(2, "2Gi").build()),
            node_groups=(g,),
        )
    )
    assert plan.additions == ()
    assert (
        plan.outcomes["ml/p"].reasons[0].startswith("pod p: no node group can host its pods: g: ")
    )


# --- processors/nodegroupset: --balance-similar-node-groups --------------------------


def test_similar_groups_share_a_scale_up_smallest_first() -> None:
    # two zones of one machine type (labels differ only by the zone, which is ignored).
    # z-a has 2 full nodes, z-b none; 4 pods of 8 cpu need 4 new 8-cpu nodes.
    # Balanced (smallest target size first): b 0->1, b 1->2, then a=2 and b=2 tie: one
    # of them ->3, then the other ->3: z-a +1, z-b +3 whichever option won.
    # Without balancing: all 4 in the option's one group.
    zone_a = MACHINE.allocatable(8, "32Gi").labels({ZONE: "a", "pool": "cpu8"})
    zone_b = MACHINE.allocatable(8, "32Gi").labels({ZONE: "b", "pool": "cpu8"})
    a = make_group("z-a", zone_a.named("a-t").build()).price(1.0).current_size(2).build()
    b = make_group("z-b", zone_b.named("b-t").build()).price(1.0).build()
    members = tuple(zone_a.named(f"a-{i}").group("z-a").build() for i in (1, 2))
    busy = tuple(ML_POD.named(f"busy-{i}").requests(8).on(f"a-{i}").build() for i in (1, 2))
    pods = (*busy, *(ML_POD.named(f"p{i}").requests(8, "1Gi").build() for i in range(4)))
    cluster = Cluster("c", nodes=members, pods=pods, node_groups=(a, b))
    balanced = naive(cluster, CaSettings(balance_similar_node_groups=True))
    per_group: dict[str, int] = {}
    for addition in balanced.additions:
        per_group[addition.node_group] = per_group.get(addition.node_group, 0) + addition.count
    assert per_group == {"z-a": 1, "z-b": 3}
    assert all(o.schedulable_after for o in balanced.outcomes.values())
    alone = naive(cluster)
    assert len({a.node_group for a in alone.additions}) == 1
    assert sum(a.count for a in alone.additions) == 4


def test_groups_with_different_labels_are_not_similar() -> None:
    from recommender.engine.autoscaler.nodegroupset import similar

    first = (
        MACHINE.named("x")
        .allocatable(8, "32Gi")
        .labels({"pool": "a", "topology.kubernetes.io/zone": "1"})
        .build()
    )
    second = (
        MACHINE.named("y")
        .allocatable(8, "32Gi")
        .labels({"pool": "b", "topology.kubernetes.io/zone": "2"})
        .build()
    )
    assert not similar(first, second)
    assert similar(first, second, ignored=("pool",))  # --balancing-ignore-label=pool
    bigger = replace(second, allocatable=Resources(cpu_milli=16_000, memory_bytes=32 * GI))
    assert not similar(first, bigger, ignored=("pool",))


def test_balance_is_smallest_first_within_max_size() -> None:
    from recommender.engine.autoscaler.nodegroupset import balance

    # a=1 (max 10), b=0 (max 1), c=3 (max 10); 5 nodes, each to the smallest open group:
    # b 0->1 (now at max), a 1->2, a 2->3, tie a=3/c=3 -> a (first) 3->4, c 3->4:
    # a +3, b +1, c +1
    assert balance([("a", 1, 10), ("b", 0, 1), ("c", 3, 10)], 5) == {"a": 3, "b": 1, "c": 1}
    assert balance([("a", 2, 2)], 3) == {}  # maxed out: nothing, never beyond max size


# --- provisioningrequest classes --------------------------------------------------------


def consuming(p: Pod, klass: str, request: str = "req") -> Pod:
    return replace(p, provisioning_request=(request, klass))


def test_check_capacity_books_existing_room_and_never_scales_up() -> None:
    from recommender.engine.autoscaler.provisioning import CHECK_CAPACITY

    g = make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build()
    existing = MACHINE.named("n1").allocatable(8, "32Gi").group("g").build()
    # 2 pods of 4 cpu fit n1 (8 cpu): booked, nothing bought, they run now
    fits = tuple(
        consuming(ML_POD.named(f"a{i}").requests(4, "1Gi").build(), CHECK_CAPACITY)
        for i in range(2)
    )
    plan = naive(Cluster("c", nodes=(existing,), pods=fits, node_groups=(g,)), REQUESTS_ON)
    assert plan.additions == ()
    assert {o.verdict for o in plan.outcomes.values()} == {"runs_now"}
    # 3 such pods: 12 cpu > 8: not all fit, none is booked and none is bought
    more = tuple(
        consuming(ML_POD.named(f"b{i}").requests(4, "1Gi").build(), CHECK_CAPACITY)
        for i in range(3)
    )
    plan = naive(Cluster("c", nodes=(existing,), pods=more, node_groups=(g,)), REQUESTS_ON)
    assert plan.additions == ()
    assert all("never scales up" in o.reasons[0] for o in plan.outcomes.values())


def test_an_unknown_class_triggers_nothing() -> None:
    g = make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build()
    pods = (consuming(ML_POD.named("p").requests(4, "1Gi").build(), "queued-provisioning.gke.io"),)
    plan = naive(Cluster("c", pods=pods, node_groups=(g,)), REQUESTS_ON)
    assert plan.additions == ()
    assert "not a class cluster-autoscaler provisions" in plan.outcomes["ml/p"].reasons[0]


def test_best_effort_atomic_buys_for_all_or_none() -> None:
    from recommender.engine.autoscaler.provisioning import BEST_EFFORT_ATOMIC

    # 3 pods of 8 cpu: one per 8-cpu node; max size 3 -> all three in one scale-up
    pods = tuple(
        consuming(ML_POD.named(f"p{i}").requests(8, "1Gi").build(), BEST_EFFORT_ATOMIC)
        for i in range(3)
    )
    plan = naive(
        Cluster(
            "c",
            pods=pods,
            node_groups=(
                make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build())
                .price(1.0)
                .build(),
            ),
        ),
        REQUESTS_ON,
    )
    assert sum(a.count for a in plan.additions) == 3
    assert all(o.schedulable_after for o in plan.outcomes.values())
    # max size 2: the option is capped below 3 pods -> nothing is bought
    small = (
        make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build())
        .price(1.0)
        .max_size(2)
        .build()
    )
    plan = naive(Cluster("c", pods=pods, node_groups=(small,)), REQUESTS_ON)
    assert plan.additions == ()


def test_the_request_objects_class_decides_not_the_pods_annotation() -> None:
    from recommender.engine.autoscaler.provisioning import BEST_EFFORT_ATOMIC
    from topology.model.autoscalerstate import ProvisioningRequest, RequestPodSet

    # provisioningrequest/orchestrator/orchestrator.go ScaleUp: the classes look at the
    # request's spec.provisioningClassName; the consuming pods carry no class annotation
    # here. best-effort-atomic: 3 pods of 8 cpu, one per 8-cpu node -> 3 nodes at once
    pods = tuple(consuming(ML_POD.named(f"p{i}").requests(8, "1Gi").build(), "") for i in range(3))
    read = ProvisioningRequest("ml", "req", BEST_EFFORT_ATOMIC, (RequestPodSet("t", 3),))
    group = make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build()
    cluster = Cluster("c", pods=pods, node_groups=(group,), provisioning_requests=(read,))
    plan = naive(cluster, REQUESTS_ON)
    assert sum(a.count for a in plan.additions) == 3
    assert not any("(none)" in r for o in plan.outcomes.values() for r in o.reasons)


def test_best_effort_atomic_scales_up_for_the_pod_sets_count_not_the_consumers() -> None:
    from recommender.engine.autoscaler.provisioning import BEST_EFFORT_ATOMIC
    from topology.model.autoscalerstate import ProvisioningRequest, RequestPodSet

    # processors/provreq/injector.go GetPodsFromNextRequest: a pending request's pods are
    # its podSets' count of each PodTemplate (provisioningrequest/pods/pods.go
    # PodsForProvisioningRequest); the consuming pods leave the regular scale-up. The
    # request asks for 3 pods of 8 cpu; one consumer exists so far: 3 nodes of 8 cpu
    template = ML_POD.named("t").requests(8, "1Gi").build()
    read = ProvisioningRequest("ml", "req", BEST_EFFORT_ATOMIC, (RequestPodSet("t", 3),))
    consumer = consuming(ML_POD.named("p0").requests(8, "1Gi").build(), BEST_EFFORT_ATOMIC)
    group = make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build()
    cluster = Cluster(
        "c",
        pods=(consumer,),
        node_groups=(group,),
        provisioning_requests=(read,),
        pod_templates={"ml/t": template},
    )
    plan = naive(cluster, REQUESTS_ON)
    assert sum(a.count for a in plan.additions) == 3
    assert plan.outcomes["ml/p0"].schedulable_after


def test_cluster_wide_gpu_and_core_limits_cap_the_option() -> None:
    # one 2-GPU L4 node exists; --gpu-total nvidia-l4 max 6 leaves 4 GPUs = 2 nodes of
    # 2 GPUs (the GPU type is the value of GKE's GPU label, gpu_processor.go)
    l4 = {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    g = (
        make_group("g", MACHINE.named("t").allocatable(8, "32Gi").gpus(2).labels(l4).build())
        .price(1.0)
        .build()
    )
    existing = MACHINE.named("n0").allocatable(8, "32Gi").gpus(2).labels(l4).build()
    busy = ML_POD.named("busy").requests(8).on("n0").build()
    pods = (busy, *(ML_POD.named(f"p{i}").requests(8, "1Gi").gpus(1).build() for i in range(4)))
    cluster = Cluster("c", nodes=(existing,), pods=pods, node_groups=(g,))
    capped = naive(cluster, CaSettings(max_gpus_total={"nvidia-l4": 6}))
    assert sum(a.count for a in capped.additions) == 2
    assert "cluster-wide resource limit" in capped.outcomes["ml/p3"].reasons[0]
    # --cores-total 24: 8 used, 16 left = 2 nodes of 8 cores
    cores = naive(cluster, CaSettings(max_cores_total=24))
    assert sum(a.count for a in cores.additions) == 2
    assert sum(a.count for a in naive(cluster).additions) == 4


def test_a_discovered_groups_template_keeps_the_daemonset_requests_off() -> None:
    # the member m1 has 8 cpu and is full; DaemonSets take 1 cpu of every node, so
    # discovery's template (built from m1, topology.kube.discovery.template_from_member)
    # has 7 cpu. A 7.5-cpu pod fits an 8-cpu node, not a node with the DaemonSets:
    # cluster-autoscaler, whose template carries the DaemonSet pods, buys nothing.
    member = MACHINE.named("m1").allocatable(8, "32Gi").group("g").build()
    busy = ML_POD.named("busy").requests(8).on("m1").build()
    wide = ML_POD.named("wide").requests("7500m").build()
    discovered = (
        make_group("g", MACHINE.named("g-template").allocatable(7, "32Gi").build())
        .price(1.0)
        .set(source="cluster-autoscaler status ConfigMap")
        .build()
    )
    plan = naive(Cluster("c", nodes=(member,), pods=(busy, wide), node_groups=(discovered,)))
    assert plan.additions == ()
    # the same group declared only by the project: CA's template is m1 (8 cpu): buys 1
    declared = replace(discovered, source=None)
    plan = naive(Cluster("c", nodes=(member,), pods=(busy, wide), node_groups=(declared,)))
    assert sum(a.count for a in plan.additions) == 1


# --- profiles ------------------------------------------------------------------------


def test_the_evaluation_names_the_profile_it_ran_and_refuses_an_unknown_one() -> None:
    import pytest

    from recommender.engine.evaluate.evaluation import evaluate
    from recommender.engine.evaluate.report import render_text

    cluster = Cluster(
        "c",
        pods=(ML_POD.named("p").requests(2, "2Gi").build(),),
        node_groups=(
            make_group("g", MACHINE.named("t").allocatable(4, "8Gi").build()).price(1.0).build(),
        ),
    )
    result = evaluate(cluster, at=AT, autoscaler="cluster-autoscaler:1.36")
    assert result.to_json()["autoscalerProfile"] == "cluster-autoscaler:1.36"
    text = render_text(result, cluster.node_groups)
    assert "== What the naive autoscaler would do (cluster-autoscaler:1.36) ==" in text
    assert evaluate(cluster, at=AT).to_json()["autoscalerProfile"] == "cluster-autoscaler"
    with pytest.raises(ValueError, match="valid profiles: cluster-autoscaler, "):
        evaluate(cluster, at=AT, autoscaler="cluster-autoscaler:1.20")
