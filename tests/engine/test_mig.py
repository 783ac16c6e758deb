"""MIG profile math: which mixes of instances coexist on one GPU."""

import pytest

from recommender.engine.scheduler.state import ClusterState
from tests.builders import make_node, make_pod
from topology.model.hardware import Cluster, Gpu
from topology.model.mig import (
    A100_40GB,
    A100_80GB,
    H100_80GB,
    fits,
    max_instances,
    mig_model,
    partitionable_gpu,
)


@pytest.mark.parametrize(
    ("model", "profiles"),
    [
        (A100_40GB, ["1g.5gb"] * 7),
        (A100_40GB, ["4g.20gb", "3g.20gb"]),
        (A100_40GB, ["3g.20gb", "3g.20gb"]),
        (A100_40GB, ["4g.20gb", "2g.10gb", "1g.5gb"]),
        (A100_40GB, ["3g.20gb", "2g.10gb", "2g.10gb"]),
        (A100_40GB, ["2g.10gb"] * 3 + ["1g.5gb"]),
        (A100_40GB, ["1g.10gb"] * 4),
        (A100_40GB, ["7g.40gb"]),
        (A100_80GB, ["1g.10gb"] * 7),
        (H100_80GB, ["4g.40gb", "3g.40gb"]),
        (H100_80GB, ["1g.20gb", "1g.20gb", "3g.40gb"]),
    ],
)
def test_it_accepts_mixes_the_mig_guide_allows(model, profiles):
    assert fits(model, profiles)


@pytest.mark.parametrize(
    ("model", "profiles"),
    [
        (A100_40GB, ["1g.5gb"] * 8),
        (A100_40GB, ["4g.20gb", "4g.20gb"]),
        (A100_40GB, ["3g.20gb", "3g.20gb", "1g.5gb"]),
        (A100_40GB, ["7g.40gb", "1g.5gb"]),
        (A100_40GB, ["1g.10gb"] * 5),
        (A100_40GB, ["2g.10gb"] * 4),
        (A100_40GB, ["4g.20gb", "2g.10gb", "2g.10gb"]),
        (H100_80GB, ["4g.40gb", "4g.40gb"]),
    ],
)
def test_it_refuses_mixes_the_counters_cannot_hold(model, profiles):
    assert not fits(model, profiles)


def test_it_refuses_a_3g_with_a_1g10gb_pair_that_overlaps_memory_slices():
    # 3g at slice 0 or 4 leaves 4 slices: two 1g.10gb fit, a 2g.10gb more does not
    assert fits(A100_40GB, ["3g.20gb", "1g.10gb", "1g.10gb"])
    assert not fits(A100_40GB, ["3g.20gb", "1g.10gb", "1g.10gb", "2g.10gb"])


def test_it_rejects_profiles_of_another_model():
    with pytest.raises(ValueError, match="does not exist"):
        fits(A100_40GB, ["1g.20gb"])


@pytest.mark.parametrize(
    ("product", "expected"),
    [
        ("A100-SXM4-40GB", A100_40GB),
        ("NVIDIA-A100-SXM4-80GB", A100_80GB),
        ("NVIDIA-H100-80GB-HBM3", H100_80GB),
        ("Tesla-T4", None),
        ("NVIDIA-H100-NVL", None),
    ],
)
def test_it_maps_product_names_to_mig_tables(product, expected):
    assert mig_model(product) == expected


def test_it_counts_max_instances_per_profile():
    assert [max_instances(A100_40GB, p) for p in ("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb")] == [
        7, 4, 3, 2,
    ]  # fmt: skip


def test_it_builds_one_partition_device_per_placement():
    counters, devices = partitionable_gpu("gpu-0", "A100-SXM4-40GB")
    assert len(devices) == 7 + 4 + 3 + 2 + 1 + 1
    assert counters.counters["compute"] == 7
    assert {d.profile for d in devices} == {
        "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
    }  # fmt: skip
    three = next(d for d in devices if d.name == "gpu-0-mig-3g.20gb-4")
    assert three.consumes[0].counters == {
        "memory-slice-4": 1, "memory-slice-5": 1, "memory-slice-6": 1, "memory-slice-7": 1,
        "compute": 3,
    }  # fmt: skip
    assert all(d.gpu == "gpu-0" and d.capacity == {"gpu_milli": 1000} for d in devices)


def test_it_gives_partitions_their_share_of_gpu_memory():
    _, devices = partitionable_gpu("g", "H100-80GB")
    memory = {d.profile: d.memory_bytes for d in devices}
    assert memory["1g.10gb"] == 10 * 2**30
    assert memory["7g.80gb"] == 80 * 2**30


def _gpu_share_of(model: str, profile_name: str) -> int:
    """The GPU milli one partition of ``profile_name`` occupies, as the heatmap shows it."""
    from recommender.engine.scheduler.records import DeviceTake, NodeInfo, device_gpu_milli

    node = make_node("n").partitionable_gpu("gpu-0", model).build()
    device = next(d for d in node.devices if d.profile == profile_name)
    return device_gpu_milli(device, DeviceTake(device.name, {}, exclusive=True), NodeInfo(node))


@pytest.mark.parametrize(
    ("model", "profile_name", "milli"),
    [
        (A100_40GB, "1g.5gb", 143),  # 1 of 7 compute slices (1 of 8 memory slices)
        (A100_40GB, "3g.20gb", 500),  # 4 of 8 memory slices (3 of 7 compute)
        (A100_40GB, "4g.20gb", 571),  # 4 of 7 compute slices
        (A100_40GB, "7g.40gb", 1000),
        (H100_80GB, "3g.40gb", 500),
    ],
)
def test_it_counts_a_partition_as_its_share_of_the_gpu_not_the_whole_gpu(
    model: str, profile_name: str, milli: int
) -> None:
    assert _gpu_share_of(model, profile_name) == milli


# A100-40GB x8 under the device plugin's mixed strategy: gpu-0…5 whole, gpu-6/7 in MIG
# mode, their four 3g.20gb instances advertised as an extended resource
MIXED = (
    make_node("mixed")
    .allocatable(64, "512Gi", 110, {"nvidia.com/mig-3g.20gb": 4})
    .gpus(6, A100_40GB)
    .gpu(Gpu("gpu-6", model=A100_40GB), Gpu("gpu-7", model=A100_40GB))
)
MIG_POD = make_pod(namespace="serve").requests(1, extended={"nvidia.com/mig-3g.20gb": 1})


def test_it_counts_mig_instances_taken_as_extended_resources_on_the_mig_mode_gpus() -> None:
    from recommender.engine.scheduler.state import ClusterState
    from topology.model.hardware import Cluster

    pods = tuple(MIG_POD.named(f"p{i}").on("mixed").build() for i in range(3))
    state = ClusterState.from_cluster(Cluster("c", nodes=(MIXED.build(),), pods=pods))
    cells = {c.gpu: c for c in state.gpu_cells("mixed")}
    # 3g.20gb holds 4 of 8 memory slices: two fill gpu-6, the third goes to gpu-7
    assert [cells[g].allocated_milli for g in ("gpu-5", "gpu-6", "gpu-7")] == [0, 1000, 500]
    assert cells["gpu-6"].pods == ("serve/p0", "serve/p1")
    assert cells["gpu-7"].profiles == ("3g.20gb",)


def test_it_gives_mig_instances_back_exactly_on_release() -> None:
    from recommender.engine.scheduler.records import pod_allocation_base
    from recommender.engine.scheduler.state import ClusterState
    from topology.model.hardware import Cluster

    bound = (MIG_POD.named("p0").on("mixed").build(),)
    state = ClusterState.from_cluster(Cluster("c", nodes=(MIXED.build(),), pods=bound))
    extra = MIG_POD.named("p1").build()
    state.apply("mixed", extra.key, pod_allocation_base(extra))
    assert state.gpu_cells("mixed")[6].allocated_milli == 1000
    state.release("mixed", extra.key, pod_allocation_base(extra))
    cells = state.gpu_cells("mixed")
    assert (cells[6].allocated_milli, cells[6].pods, cells[7].allocated_milli) == (
        500,
        ("serve/p0",),
        0,
    )


def test_it_draws_time_sliced_mixed_mig_instances_as_their_replica_share() -> None:
    # mixed strategy, sharing.timeSlicing replicas 2 on nvidia.com/mig-3g.20gb: GFD
    # labels nvidia.com/mig-3g.20gb.replicas=2 and the 4 instances are advertised as
    # 8; each unit is half of a 3g.20gb (half of 500 milli), so 3 units fit gpu-6
    node = (
        MIXED.label("nvidia.com/mig-3g.20gb.replicas", "2")
        .allocatable(extended={"nvidia.com/mig-3g.20gb": 8})
        .build()
    )
    pods = tuple(MIG_POD.named(f"p{i}").on("mixed").build() for i in range(3))
    state = ClusterState.from_cluster(Cluster("c", nodes=(node,), pods=pods))
    cells = {c.gpu: c for c in state.gpu_cells("mixed")}
    assert [cells[g].allocated_milli for g in ("gpu-6", "gpu-7")] == [750, 0]
    assert state.alloc("mixed").extended_free == {"nvidia.com/mig-3g.20gb": 5}
