"""Each filter rule: one passing and one failing case with kube-scheduler's reason text."""

from datetime import UTC, datetime

from recommender.engine.scheduler.diagnosis import nodes_summary
from recommender.engine.scheduler.filters import FilterContext, run_filters
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import (
    AttributeSelector,
    Cluster,
    CounterConsumption,
    CounterSet,
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    Gpu,
    GpuRequest,
    LabelRequirement,
    MatchAttribute,
    Node,
    NodeSelectorTerm,
    Pod,
    Reservation,
    Resources,
    Taint,
    Toleration,
)

GIB = 1024**3
PCIE = "resource.kubernetes.io/pcieRoot"


def node(name: str = "n1", **extra: object) -> Node:
    gpus = tuple(Gpu(f"gpu-{i}", model="V100M16") for i in range(2))
    devices = tuple(
        Device(
            f"gpu-{i}",
            gpu=f"gpu-{i}",
            model="V100M16",
            capacity={"gpu_milli": 1000},
            shareable=True,
        )
        for i in range(2)
    )
    fields: dict[str, object] = {
        "labels": {"pool": "a"},
        "allocatable": Resources(8000, 64 * GIB, 110, {"nvidia.com/mig-1g.5gb": 1}),
        "gpus": gpus,
        "devices": devices,
    }
    fields.update(extra)
    return Node(name=name, **fields)  # type: ignore[arg-type]


def pod(**extra: object) -> Pod:
    fields: dict[str, object] = {
        "namespace": "team-a",
        "name": "p",
        "requests": Resources(1000, GIB, 1),
    }
    fields.update(extra)
    return Pod(**fields)  # type: ignore[arg-type]


def reason(
    n: Node, p: Pod, ctx: FilterContext | None = None, cluster: Cluster | None = None
) -> str:
    state = ClusterState.from_cluster(cluster or Cluster("c", nodes=(n,)))
    status = run_filters(state.info(n.name), state.alloc(n.name), p, ctx or FilterContext())
    return "ok" if status.ok else status.reason


def test_it_rejects_an_unschedulable_node() -> None:
    assert reason(node(), pod()) == "ok"
    assert reason(node(unschedulable=True), pod()) == "node(s) were unschedulable"


def test_it_admits_a_pod_tolerating_the_unschedulable_taint_on_a_cordoned_node() -> None:
    # node_unschedulable.go: TolerationsTolerateTaint(node.kubernetes.io/unschedulable:NoSchedule)
    cordoned = node(unschedulable=True)
    exact = Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")
    other_effect = Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")
    assert reason(cordoned, pod(tolerations=(exact,))) == "ok"
    assert reason(cordoned, pod(tolerations=(Toleration(operator="Exists"),))) == "ok"
    assert reason(cordoned, pod(tolerations=(other_effect,))) == "node(s) were unschedulable"


def test_it_rejects_an_untolerated_taint_and_accepts_a_tolerated_one() -> None:
    tainted = node(taints=(Taint("dedicated", "ml"),))
    assert reason(tainted, pod()) == "node(s) had untolerated taint {dedicated: ml}"
    assert reason(tainted, pod(tolerations=(Toleration("dedicated", "Equal", "ml"),))) == "ok"


def test_it_treats_a_granted_node_as_tolerated() -> None:
    tainted = node(taints=(Taint("reserved", "team-a"),))
    ctx = FilterContext(granted={"team-a": frozenset({"n1"})})
    assert reason(tainted, pod(), ctx) == "ok"


def test_it_matches_node_selector_and_required_affinity() -> None:
    assert reason(node(), pod(node_selector={"pool": "a"})) == "ok"
    term = NodeSelectorTerm((LabelRequirement("pool", "In", ("b",)),))
    assert (
        reason(node(), pod(affinity=(term,))) == "node(s) didn't match Pod's node affinity/selector"
    )


def test_it_rejects_insufficient_cpu() -> None:
    assert reason(node(), pod(requests=Resources(9000, GIB, 1))) == "Insufficient cpu"


def test_it_counts_extended_resources() -> None:
    one = pod(requests=Resources(1000, GIB, 1, {"nvidia.com/mig-1g.5gb": 1}))
    two = pod(requests=Resources(1000, GIB, 1, {"nvidia.com/mig-1g.5gb": 2}))
    assert (reason(node(), one), reason(node(), two)) == (
        "ok",
        "Insufficient nvidia.com/mig-1g.5gb",
    )


def test_it_counts_whole_gpus() -> None:
    assert reason(node(), pod(gpu=GpuRequest(2))) == "ok"
    assert reason(node(), pod(gpu=GpuRequest(3))) == "Insufficient nvidia.com/gpu"


def test_it_checks_the_gpu_model() -> None:
    assert reason(node(), pod(gpu=GpuRequest(1, models=("V100M16",)))) == "ok"
    wrong = pod(gpu=GpuRequest(1, models=("V100M32",)))
    assert reason(node(), wrong) == "node(s) didn't match GPU model V100M32"


def test_it_checks_gpu_memory() -> None:
    big = node(gpus=(Gpu("gpu-0", memory_bytes=16 * GIB),), devices=node().devices[:1])
    assert reason(big, pod(gpu=GpuRequest(1, memory_bytes=16 * GIB))) == "ok"
    assert (
        reason(big, pod(gpu=GpuRequest(1, memory_bytes=32 * GIB)))
        == "node(s) didn't match GPU memory"
    )


def test_it_fits_a_share_only_where_enough_milli_is_free() -> None:
    half = pod(name="a", gpu=GpuRequest(1, 600))
    cluster = Cluster("c", nodes=(node(),), pods=(half, pod(name="b", gpu=GpuRequest(1, 600))))
    outcomes = place(cluster, pending_workloads(cluster)).outcomes
    assert [len(o.bindings[0].devices) for o in outcomes] == [1, 1]
    assert outcomes[0].bindings[0].devices != outcomes[1].bindings[0].devices


def test_it_rejects_a_node_reserved_for_another_team() -> None:
    reserved = Reservation("r", ("team-b",), node_names=("n1",))
    cluster = Cluster("c", nodes=(node(),), reservations=(reserved,))
    ctx = FilterContext.build(cluster, {}, datetime(2026, 1, 1, tzinfo=UTC))
    assert reason(node(), pod(), ctx, cluster) == "node(s) reserved for another team"
    assert reason(node(), Pod("team-b", "q"), ctx, cluster) == "ok"


def mig_node() -> Node:
    counters = CounterSet("gpu-0", {"compute": 7, **{f"memory-slice-{i}": 1 for i in range(8)}})

    def profile(name: str, compute: int, slices: range) -> Device:
        use = {"compute": compute, **{f"memory-slice-{i}": 1 for i in slices}}
        return Device(
            name,
            gpu="gpu-0",
            profile=name.split("-", 1)[1],
            attributes={"profile": name.split("-", 1)[1]},
            consumes=(CounterConsumption("gpu-0", use),),
        )

    devices = (profile("a-4g.20gb", 4, range(0, 4)), profile("b-4g.20gb", 4, range(4, 8)))
    return Node(
        "mig",
        allocatable=Resources(8000, 64 * GIB, 110),
        gpus=(Gpu("gpu-0"),),
        devices=devices,
        counter_sets=(counters,),
    )


def mig_pod(name: str) -> Pod:
    selector = AttributeSelector("attribute", "profile", "==", "4g.20gb")
    request = DeviceRequest("gpu", "mig", selectors=(selector,))
    return Pod(
        "team-a",
        name,
        requests=Resources(100, GIB, 1),
        claims=(DeviceClaim("c", (request,)),),
        arrival=float(name[-1]),
    )


def test_it_refuses_a_second_4g_partition_when_only_3_compute_slices_remain() -> None:
    cluster = Cluster(
        "c",
        nodes=(mig_node(),),
        pods=(mig_pod("m1"), mig_pod("m2")),
        device_classes=(DeviceClass("mig"),),
    )
    outcomes = place(cluster, pending_workloads(cluster)).outcomes
    assert [o.placed for o in outcomes] == [True, False]
    assert outcomes[1].diagnosis is not None
    assert outcomes[1].diagnosis.node_reasons == {"cannot allocate all claims": 1}


def pcie_node() -> Node:
    devices = tuple(
        Device(f"gpu-{i}", gpu=f"gpu-{i}", attributes={PCIE: f"pci-{i // 2}"}) for i in range(4)
    )
    return Node(
        "p",
        allocatable=Resources(8000, 64 * GIB, 110),
        gpus=tuple(Gpu(f"gpu-{i}") for i in range(4)),
        devices=devices,
    )


def test_it_keeps_match_attribute_devices_on_one_pcie_root() -> None:
    blocker = Pod(
        "team-a",
        "a",
        requests=Resources(100, GIB, 1),
        claims=(DeviceClaim("c", (DeviceRequest("one", "gpu"),)),),
        arrival=0.0,
    )
    pair = Pod(
        "team-a",
        "b",
        requests=Resources(100, GIB, 1),
        arrival=1.0,
        claims=(
            DeviceClaim("c", (DeviceRequest("two", "gpu", count=2),), (MatchAttribute(PCIE),)),
        ),
    )
    cluster = Cluster(
        "c", nodes=(pcie_node(),), pods=(blocker, pair), device_classes=(DeviceClass("gpu"),)
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
    cluster = Cluster("c", nodes=(node(),), pods=(pod(unsupported=("CEL: device.foo()",)),))
    outcome = place(cluster, pending_workloads(cluster), options=PlacementOptions()).outcomes[0]
    assert not outcome.placed
    assert outcome.diagnosis is not None and outcome.diagnosis.summary.startswith("unsupported:")
