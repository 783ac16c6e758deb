"""Each filter rule: one passing and one failing case with kube-scheduler's reason text."""

from datetime import UTC, datetime

from recommender.engine.scheduler.diagnosis import nodes_summary
from recommender.engine.scheduler.filters import FilterContext, run_filters
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_claim, make_node, make_pod, make_reservation
from topology.model.hardware import (
    AttributeSelector,
    Cluster,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceClass,
    Gpu,
    LabelRequirement,
    Node,
    NodeSelectorTerm,
    Pod,
    Toleration,
)

GIB = 1024**3
PCIE = "resource.kubernetes.io/pcieRoot"


# n1 in pool a: two shareable V100M16 GPUs and one MIG 1g.5gb instance (extended)
V100 = (
    make_node("n1")
    .label("pool", "a")
    .allocatable(8, "64Gi", 110, {"nvidia.com/mig-1g.5gb": 1})
    .gpus(2, "V100M16", shareable=True)
)
POD = make_pod("p", "team-a").requests(1, "1Gi")


def reason(
    n: Node, p: Pod, ctx: FilterContext | None = None, cluster: Cluster | None = None
) -> str:
    state = ClusterState.from_cluster(cluster or Cluster("c", nodes=(n,)))
    status = run_filters(state.info(n.name), state.alloc(n.name), p, ctx or FilterContext())
    return "ok" if status.ok else status.reason


def test_it_rejects_an_unschedulable_node() -> None:
    assert reason(V100.build(), POD.build()) == "ok"
    assert reason(V100.unschedulable().build(), POD.build()) == "node(s) were unschedulable"


def test_it_admits_a_pod_tolerating_the_unschedulable_taint_on_a_cordoned_node() -> None:
    # node_unschedulable.go: TolerationsTolerateTaint(node.kubernetes.io/unschedulable:NoSchedule)
    cordoned = V100.unschedulable().build()
    exact = Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")
    other_effect = Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")
    assert reason(cordoned, POD.toleration(exact).build()) == "ok"
    assert reason(cordoned, POD.toleration(Toleration(operator="Exists")).build()) == "ok"
    assert reason(cordoned, POD.toleration(other_effect).build()) == "node(s) were unschedulable"


def test_it_rejects_an_untolerated_taint_and_accepts_a_tolerated_one() -> None:
    tainted = V100.taint("dedicated", "ml").build()
    assert reason(tainted, POD.build()) == "node(s) had untolerated taint {dedicated: ml}"
    assert reason(tainted, POD.toleration(Toleration("dedicated", "Equal", "ml")).build()) == "ok"


def test_it_treats_a_granted_node_as_tolerated() -> None:
    tainted = V100.taint("reserved", "team-a").build()
    ctx = FilterContext(granted={"team-a": frozenset({"n1"})})
    assert reason(tainted, POD.build(), ctx) == "ok"


def test_it_matches_node_selector_and_required_affinity() -> None:
    assert reason(V100.build(), POD.node_selector({"pool": "a"}).build()) == "ok"
    term = NodeSelectorTerm((LabelRequirement("pool", "In", ("b",)),))
    assert (
        reason(V100.build(), POD.node_affinity(term).build())
        == "node(s) didn't match Pod's node affinity/selector"
    )


def test_it_rejects_insufficient_cpu() -> None:
    assert reason(V100.build(), POD.requests(9, "1Gi").build()) == "Insufficient cpu"


def test_it_counts_extended_resources() -> None:
    one = POD.requests(1, "1Gi", extended={"nvidia.com/mig-1g.5gb": 1}).build()
    two = POD.requests(1, "1Gi", extended={"nvidia.com/mig-1g.5gb": 2}).build()
    assert (reason(V100.build(), one), reason(V100.build(), two)) == (
        "ok",
        "Insufficient nvidia.com/mig-1g.5gb",
    )


def test_it_counts_whole_gpus() -> None:
    assert reason(V100.build(), POD.gpus(2).build()) == "ok"
    assert reason(V100.build(), POD.gpus(3).build()) == "Insufficient nvidia.com/gpu"


def test_it_checks_the_gpu_model() -> None:
    assert reason(V100.build(), POD.gpus(1, models=("V100M16",)).build()) == "ok"
    wrong = POD.gpus(1, models=("V100M32",)).build()
    assert reason(V100.build(), wrong) == "node(s) didn't match GPU model V100M32"


def test_it_checks_gpu_memory() -> None:
    big = (
        V100.gpus(0)
        .gpu(Gpu("gpu-0", memory_bytes=16 * GIB))
        .device(V100.build().devices[0])
        .build()
    )
    assert reason(big, POD.gpus(1, memory=16 * GIB).build()) == "ok"
    assert reason(big, POD.gpus(1, memory=32 * GIB).build()) == "node(s) didn't match GPU memory"


def test_it_fits_a_share_only_where_enough_milli_is_free() -> None:
    half = POD.named("a").gpus(1, 600).build()
    cluster = Cluster("c", nodes=(V100.build(),), pods=(half, POD.named("b").gpus(1, 600).build()))
    outcomes = place(cluster, pending_workloads(cluster)).outcomes
    assert [len(o.bindings[0].devices) for o in outcomes] == [1, 1]
    assert outcomes[0].bindings[0].devices != outcomes[1].bindings[0].devices


def test_it_rejects_a_node_reserved_for_another_team() -> None:
    reserved = make_reservation("r", "team-b").nodes("n1").build()
    cluster = Cluster("c", nodes=(V100.build(),), reservations=(reserved,))
    ctx = FilterContext.build(cluster, {}, datetime(2026, 1, 1, tzinfo=UTC))
    assert reason(V100.build(), POD.build(), ctx, cluster) == "node(s) reserved for another team"
    assert reason(V100.build(), Pod("team-b", "q"), ctx, cluster) == "ok"


def _mig_partition(name: str, compute: int, slices: range) -> Device:
    """A 4g.20gb-like partition of gpu-0 drawing ``compute`` and ``slices`` of its counters."""
    use = {"compute": compute, **{f"memory-slice-{i}": 1 for i in slices}}
    profile = name.split("-", 1)[1]
    return Device(
        name,
        gpu="gpu-0",
        profile=profile,
        attributes={"profile": profile},
        consumes=(CounterConsumption("gpu-0", use),),
    )


# one GPU of 7 compute and 8 memory slices, offering two 4-compute partitions
MIG_NODE = (
    make_node("mig")
    .allocatable(8, "64Gi", 110)
    .gpu(Gpu("gpu-0"))
    .device(
        _mig_partition("a-4g.20gb", 4, range(0, 4)), _mig_partition("b-4g.20gb", 4, range(4, 8))
    )
    .counter_set(CounterSet("gpu-0", {"compute": 7, **{f"memory-slice-{i}": 1 for i in range(8)}}))
    .build()
)
# a team-a pod claiming one 4g.20gb partition
MIG_POD = (
    make_pod(namespace="team-a")
    .requests("100m", "1Gi")
    .claim(
        make_claim("c")
        .request(
            "gpu", "mig", selectors=(AttributeSelector("attribute", "profile", "==", "4g.20gb"),)
        )
        .build()
    )
)


def test_it_refuses_a_second_4g_partition_when_only_3_compute_slices_remain() -> None:
    cluster = Cluster(
        "c",
        nodes=(MIG_NODE,),
        pods=(MIG_POD.named("m1").arrival(1.0).build(), MIG_POD.named("m2").arrival(2.0).build()),
        device_classes=(DeviceClass("mig"),),
    )
    outcomes = place(cluster, pending_workloads(cluster)).outcomes
    assert [o.placed for o in outcomes] == [True, False]
    assert outcomes[1].diagnosis is not None
    assert outcomes[1].diagnosis.node_reasons == {"cannot allocate all claims": 1}


# four GPUs, two per PCIe root
PCIE_NODE = (
    make_node("p")
    .allocatable(8, "64Gi", 110)
    .gpus(4, devices=False)
    .device(
        *(Device(f"gpu-{i}", gpu=f"gpu-{i}", attributes={PCIE: f"pci-{i // 2}"}) for i in range(4))
    )
    .build()
)


def test_it_keeps_match_attribute_devices_on_one_pcie_root() -> None:
    claimant = make_pod(namespace="team-a").requests("100m", "1Gi")
    blocker = claimant.named("a").claim(make_claim("c").request("one", "gpu").build()).build()
    two_on_one_root = make_claim("c").request("two", "gpu", 2).match_attribute(PCIE).build()
    pair = claimant.named("b").arrival(1.0).claim(two_on_one_root).build()
    cluster = Cluster(
        "c", nodes=(PCIE_NODE,), pods=(blocker, pair), device_classes=(DeviceClass("gpu"),)
    )
    outcomes = place(cluster, pending_workloads(cluster)).outcomes
    assert outcomes[1].bindings[0].devices == ("gpu-2", "gpu-3")


def test_it_summarises_reasons_like_kube_scheduler() -> None:
    summary = nodes_summary(
        1213, {"Insufficient nvidia.com/gpu": 900, "node(s) didn't match GPU model V100M32": 313}
    )
    assert summary == (
        "0/1213 nodes are available: 900 Insufficient nvidia.com/gpu, "
        "313 node(s) didn't match GPU model V100M32."
    )


def test_it_diagnoses_unsupported_pods_without_placing_them() -> None:
    cluster = Cluster(
        "c", nodes=(V100.build(),), pods=(POD.set(unsupported=("CEL: device.foo()",)).build(),)
    )
    outcome = place(cluster, pending_workloads(cluster), options=PlacementOptions()).outcomes[0]
    assert not outcome.placed
    assert outcome.diagnosis is not None and outcome.diagnosis.summary.startswith("unsupported:")
