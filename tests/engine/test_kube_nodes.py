"""Nodes: labels, taints, readiness, allocatable, and where their GPUs come from."""

import copy

import pytest
import yaml

from tests.builders.objects import DRA, as_dicts, kube_object, node_group_object, node_object
from topology.kube.parse import parse_objects

GFD_A100_LABELS = {  # the GFD README's A100 node (k8s-examples/nodes), labels only
    "nvidia.com/gpu.count": "1",
    "nvidia.com/gpu.family": "ampere",
    "nvidia.com/gpu.memory": "39538",
    "nvidia.com/gpu.product": "A100-SXM4-40GB",
}


# a ready node n1 with an empty labels map and spec, nothing allocatable; with 8 cpus
BARE = node_object("n1").labels({}).spec().ready()
N1 = BARE.allocatable(cpu="8", memory="32Gi", pods="110")


def parse(*objects):
    return parse_objects([("test.yaml", o) for o in as_dicts(*objects)], cluster_name="t")


def test_it_reads_allocatable_in_base_units():
    (n,) = parse(BARE.allocatable({"cpu": "7910m", "memory": "1Gi", "pods": "110"})).cluster.nodes
    assert (n.allocatable.cpu_milli, n.allocatable.memory_bytes, n.allocatable.pods) == (
        7910, 2**30, 110,
    )  # fmt: skip


def test_it_keeps_extended_resources_but_models_nvidia_gpu_as_devices():
    allocatable = {"cpu": "8", "nvidia.com/gpu": "2", "vpc.amazonaws.com/efa": "4"}
    (n,) = parse(BARE.labels(GFD_A100_LABELS).allocatable(allocatable)).cluster.nodes
    assert n.allocatable.extended == {"vpc.amazonaws.com/efa": 4}
    assert n.gpu_count == 2
    assert [d.capacity for d in n.devices] == [{"gpu_milli": 1000}] * 2


def test_it_takes_gpu_model_and_memory_from_gfd_labels():
    (n,) = parse(BARE.labels(GFD_A100_LABELS).allocatable({"nvidia.com/gpu": "1"})).cluster.nodes
    assert n.gpus[0].model == "A100-SXM4-40GB"
    assert n.gpus[0].memory_bytes == 39538 * 2**20
    assert not n.devices[0].shareable


def test_it_models_time_slicing_replicas_as_counted_units_on_the_physical_gpus():
    # k8s-device-plugin sharing.timeSlicing, replicas 4, 2 physical T4: allocatable
    # nvidia.com/gpu 8 = 2 x 4; each replica is one unit of a quarter of its GPU
    labels = {
        "nvidia.com/gpu.product": "Tesla-T4-SHARED",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/gpu.count": "2",
        "nvidia.com/gpu.memory": "15360",
    }
    (n,) = parse(BARE.labels(labels).allocatable({"nvidia.com/gpu": "8"})).cluster.nodes
    assert n.gpu_count == 2
    assert n.gpus[0].model == "Tesla-T4"
    assert len(n.devices) == 8
    assert [d.unit_gpu_milli for d in n.devices] == [250] * 8
    assert sorted((d.gpu, d.name) for d in n.devices)[:4] == [
        ("gpu-0", f"gpu-0-replica-{r}") for r in range(4)
    ]
    assert {d.memory_bytes for d in n.devices} == {15360 * 2**20}  # time-slicing: all of it
    assert not any(d.shareable for d in n.devices)


def test_it_gives_each_mps_replica_its_share_of_gpu_memory():
    labels = {
        "nvidia.com/gpu.product": "Tesla-T4-SHARED",
        "nvidia.com/gpu.replicas": "3",
        "nvidia.com/gpu.sharing-strategy": "mps",
        "nvidia.com/gpu.memory": "15360",
    }
    (n,) = parse(BARE.labels(labels).allocatable({"nvidia.com/gpu": "3"})).cluster.nodes
    assert n.gpu_count == 1
    assert sorted(d.unit_gpu_milli for d in n.devices) == [333, 333, 334]
    assert {d.memory_bytes for d in n.devices} == {15360 * 2**20 // 3}


def test_it_models_mig_single_strategy_instances_on_their_parent_gpus():
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb",
    }
    (n,) = parse(BARE.labels(labels).allocatable({"nvidia.com/gpu": "14"})).cluster.nodes
    assert n.gpu_count == 2
    assert len(n.devices) == 14
    assert {d.profile for d in n.devices} == {"1g.5gb"}
    assert {d.gpu for d in n.devices} == {"gpu-0", "gpu-1"}
    # one instance holds max(1/7 compute, 1/8 memory) of its GPU; memory from the
    # MIG table when GFD gives none: 5 of 40 GiB
    assert {d.unit_gpu_milli for d in n.devices} == {143}
    assert {d.memory_bytes for d in n.devices} == {5 * 2**30}


def test_it_reads_mig_single_device_memory_from_the_gfd_label_in_megabytes():
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-3g.20gb",
        "nvidia.com/gpu.count": "2",
        "nvidia.com/gpu.memory": "20096",
    }
    (n,) = parse(BARE.labels(labels).allocatable({"nvidia.com/gpu": "2"})).cluster.nodes
    assert n.gpu_count == 1  # two 3g.20gb instances per A100
    assert {d.memory_bytes for d in n.devices} == {20096 * 10**6}
    assert {d.unit_gpu_milli for d in n.devices} == {500}


def test_it_keeps_mig_mixed_instances_as_extended_resources():
    labels = {"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.count": "8",
              "nvidia.com/gpu.product": "A100-SXM4-40GB"}  # fmt: skip
    allocatable = {"nvidia.com/gpu": "6", "nvidia.com/mig-3g.20gb": "4"}
    (n,) = parse(BARE.labels(labels).allocatable(allocatable)).cluster.nodes
    assert n.gpu_count == 8
    assert len(n.devices) == 6
    assert n.allocatable.extended == {"nvidia.com/mig-3g.20gb": 4}


def test_it_reads_taints_and_unschedulable():
    taint = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    (n,) = parse(N1.taints(taint).unschedulable()).cluster.nodes
    assert n.taints[0].key == "nvidia.com/gpu" and n.taints[0].effect == "NoSchedule"
    assert n.unschedulable


def test_it_reads_a_false_ready_condition_as_not_ready():
    assert not parse(N1.ready(False)).cluster.nodes[0].ready


def test_it_rejects_a_bad_taint_effect_naming_the_field():
    snapshot = parse(N1.taints({"key": "k", "effect": "Sometimes"}), N1.named("n2"))
    assert [n.name for n in snapshot.cluster.nodes] == ["n2"]
    assert str(snapshot.errors[0]).startswith("test.yaml: Node/n1: spec.taints[0].effect: must be")


def test_it_rejects_a_bad_quantity_naming_the_resource():
    snapshot = parse(BARE.allocatable({"memory": "lots"}))
    assert str(snapshot.errors[0]) == (
        "test.yaml: Node/n1: status.allocatable.memory: not a quantity: 'lots'"
    )


def test_it_rejects_a_duplicate_node():
    snapshot = parse(N1, N1)
    assert len(snapshot.cluster.nodes) == 1
    assert "duplicate" in snapshot.errors[0].reason


def test_it_counts_kinds_it_does_not_model():
    snapshot = parse(kube_object("v1", "ConfigMap", "x"))
    assert snapshot.ignored == {"ConfigMap (v1)": 1}
    assert not snapshot.errors


# --- DRA ResourceSlices ---------------------------------------------------------


@pytest.fixture()
def mi300x_slice(shared_data):
    path = shared_data / "k8s-examples" / "dra" / "rocm-amd-resourceslice-mi300x-pcieroot.yaml"
    obj = yaml.safe_load(path.read_text())
    # the published slice is trimmed of spec.driver and spec.nodeName; add them back
    obj = copy.deepcopy(obj)
    obj["spec"].update(driver="gpu.amd.com", nodeName="n1", pool={"name": "n1"})
    return obj


def test_it_prefers_dra_devices_over_device_plugin_counts(mi300x_slice):
    n = parse(BARE.allocatable({"nvidia.com/gpu": "8"}), mi300x_slice).cluster.nodes[0]
    assert n.gpu_count == 1
    assert n.gpus[0].model == "AMD_Instinct_MI300X_OAM"
    assert n.gpus[0].memory_bytes == 196592 * 2**20
    assert n.gpus[0].pcie_root == "pci0003:00"


def test_it_qualifies_bare_attribute_names_with_the_driver_domain(mi300x_slice):
    device = parse(N1, mi300x_slice).cluster.nodes[0].devices[0]
    assert device.attributes["gpu.amd.com/cardIndex"] == 40
    assert device.attributes["gpu.amd.com/driverVersion"] == "6.12.12"
    assert device.attributes["resource.kubernetes.io/pcieRoot"] == "pci0003:00"
    assert device.capacity["gpu.amd.com/computeUnits"] == 304
    assert device.capacity["gpu_milli"] == 1000


def test_it_joins_pool_counters_to_partitions_on_the_node(shared_data):
    path = "k8s-examples/dra/kep4815-resourceslice-shared-counters-gpu-partitions.yaml"
    slices = list(yaml.safe_load_all((shared_data / path).read_text()))
    n = parse(N1.named("my-node"), *slices).cluster.nodes[0]
    assert [c.name for c in n.counter_sets] == ["gpu-0-counter-set"]
    assert n.counter_sets[0].counters == {"memory": 40 * 2**30}
    partition = next(d for d in n.devices if d.name == "gpu-0-partition-1")
    assert partition.consumes[0].counters == {"memory": 10 * 2**30}


def test_it_unwraps_the_v1beta1_basic_wrapper():
    device = {"name": "gpu-0", "basic": {
        "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"},
                       "type": {"string": "gpu"}},
        "capacity": {"memory": {"value": "80Gi"}},
    }}  # fmt: skip
    slice_ = kube_object("resource.k8s.io/v1beta1", "ResourceSlice", "s").spec(
        driver="gpu.nvidia.com", nodeName="n1", pool={"name": "n1"}, devices=[device]
    )
    n = parse(N1, slice_).cluster.nodes[0]
    assert n.gpus[0].model == "NVIDIA H100 80GB HBM3"
    assert n.devices[0].memory_bytes == 80 * 2**30


def test_it_marks_consumable_devices_shareable(shared_data):
    device = {
        "name": "gpu-0",
        "allowMultipleAllocations": True,
        "attributes": {"type": {"string": "gpu"}},
        "capacity": {"memory": {"value": "40Gi"}},
    }
    slice_ = kube_object(DRA, "ResourceSlice", "s").spec(
        driver="gpu.example.com", nodeName="n1", devices=[device]
    )
    assert parse(N1, slice_).cluster.nodes[0].devices[0].shareable


def test_it_reports_multi_node_slices_as_unsupported(shared_data):
    path = "k8s-examples/dra/kep4815-resourceslice-multihost-tpu.yaml"
    first, second = yaml.safe_load_all((shared_data / path).read_text())
    second["metadata"]["name"] = "device-slice-2"
    snapshot = parse(first, second)
    assert str(snapshot.errors[0]).endswith(
        "ResourceSlice/device-slice-2: spec.devices[0].nodeSelector: "
        "devices shared by several nodes are not supported"
    )


def test_it_assigns_nodes_to_node_groups_by_selector():
    group = (
        node_group_object("pool-a")
        .selector({"pool": "a"})
        .size(0, 4)
        .price(3.5)
        .spec(template={"allocatable": {"cpu": "8"}})
    )
    snapshot = parse(N1.label("pool", "a"), N1.named("n2"), group)
    n1, n2 = snapshot.cluster.nodes
    assert (n1.node_group, n1.price_per_node_hour, n2.node_group) == ("pool-a", 3.5, None)
    assert snapshot.cluster.node_groups[0].current_size == 1


def test_it_splits_time_sliced_mig_single_instances_over_their_replicas():
    # MIG single + sharing.timeSlicing replicas 2: 7 instances x 2 = 14 advertised;
    # each replica holds half of a 1g.5gb instance's share (143 -> 72 + 71)
    labels = {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb-SHARED",
        "nvidia.com/gpu.replicas": "2",
    }
    (n,) = parse(BARE.labels(labels).allocatable({"nvidia.com/gpu": "14"})).cluster.nodes
    assert n.gpu_count == 1
    assert len(n.devices) == 14
    assert sorted({d.unit_gpu_milli for d in n.devices}) == [71, 72]
    assert {d.profile for d in n.devices} == {"1g.5gb"}


def test_it_infers_replicas_from_the_physical_count_when_gfd_gives_none():
    # 2 physical GPUs (GFD count) advertised as 8: 4 replicas each
    labels = {"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.count": "2"}
    (n,) = parse(BARE.labels(labels).allocatable({"nvidia.com/gpu": "8"})).cluster.nodes
    assert n.gpu_count == 2
    assert [d.unit_gpu_milli for d in n.devices] == [250] * 8
