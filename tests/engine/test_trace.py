"""The openb trace loader reproduces the counts in alibaba-gpu-v2023/SOURCES.md."""

from collections import Counter

import pytest

from topology.ingest.files import read_openb
from topology.ingest.trace import (
    BLOCK_LABEL,
    RACK_LABEL,
    SYNTHETIC_TOPOLOGY_LABEL,
    ZONE_LABEL,
    trace_nodes,
    trace_pods,
    with_topology_overlay,
)
from topology.model.hardware import ModelError

MIB = 2**20


@pytest.fixture(scope="module")
def openb(shared_data):
    return read_openb(shared_data / "alibaba-gpu-v2023", "default")


def test_it_reads_all_gpu_nodes_and_gpus(openb):
    assert len(openb.nodes) == 1213
    assert openb.gpu_count == 6212


def test_it_reproduces_the_simulator_cluster_totals(openb):
    assert sum(n.allocatable.cpu_milli for n in openb.nodes) == 107_018_000
    assert sum(n.allocatable.memory_bytes for n in openb.nodes) == 528_302_452_244_480


def test_it_counts_gpus_per_model_as_sources_md(openb):
    per_model = Counter(gpu.model for node in openb.nodes for gpu in node.gpus)
    assert per_model == {
        "G2": 4392, "T4": 842, "P100": 265, "V100M16": 195, "G3": 312, "V100M32": 204, "A10": 2,
    }  # fmt: skip


def test_it_makes_every_trace_gpu_a_shareable_whole_device(openb):
    devices = [d for node in openb.nodes for d in node.devices]
    assert len(devices) == 6212
    assert all(d.shareable and d.capacity == {"gpu_milli": 1000} for d in devices)
    assert all(d.gpu == d.name for d in devices)


def test_it_labels_nodes_with_hostname_and_gpu_product(openb):
    node = openb.nodes[0]
    assert node.labels["kubernetes.io/hostname"] == node.name == "openb-node-0000"
    assert node.labels["nvidia.com/gpu.product"] == "P100"


def test_it_reads_every_pod_of_the_default_list(openb):
    assert len(openb.pods) == 8152
    assert all(p.namespace == "openb" and p.node_name is None for p in openb.pods)


def test_it_turns_sub_1000_milli_into_single_gpu_shares(openb):
    sharing = [p for p in openb.pods if p.gpu and p.gpu.is_share]
    assert len(sharing) == 3078
    assert all(p.gpu.count == 1 for p in sharing)


def test_it_totals_the_gpu_request_as_sources_md(openb):
    total_milli = sum(p.gpu.total_milli for p in openb.pods if p.gpu)
    assert total_milli == 6_086_800
    assert sum(1 for p in openb.pods if p.gpu is None) == 1088


def test_it_uses_creation_time_as_arrival(openb):
    assert openb.pods[1].arrival == 427061.0
    assert max(p.arrival for p in openb.pods) == 12_901_761.0


def test_it_keeps_only_live_phases_when_bound_view_is_asked(shared_data):
    cluster = read_openb(shared_data / "alibaba-gpu-v2023", "default", bound=True)
    assert len(cluster.pods) == 5193 + 897


def test_it_splits_gpu_spec_into_allowed_models():
    (pod,) = trace_pods(
        [{"name": "p", "cpu_milli": "1", "memory_mib": "1", "num_gpu": "1", "gpu_milli": "500",
          "gpu_spec": "V100M16|V100M32"}]
    )  # fmt: skip
    assert pod.gpu.models == ("V100M16", "V100M32")
    assert pod.gpu.milli_per_gpu == 500


def test_it_reads_multigpu_lists_without_time_columns(shared_data):
    cluster = read_openb(shared_data / "alibaba-gpu-v2023", "multigpu50")
    assert len(cluster.pods) == 9061
    assert sum(1 for p in cluster.pods if p.gpu and p.gpu.count > 1) == 984


def test_it_rejects_a_non_integer_cell_naming_row_and_column():
    with pytest.raises(ModelError) as raised:
        trace_nodes([{"sn": "n1", "cpu_milli": "lots", "memory_mib": "1", "gpu": "0"}])
    assert str(raised.value) == "openb: Node/n1: cpu_milli: not an integer: 'lots'"


def test_it_rejects_a_multi_gpu_share():
    with pytest.raises(ModelError, match="needs num_gpu 1"):
        trace_pods([{"name": "p", "cpu_milli": "1", "memory_mib": "1", "num_gpu": "2",
                     "gpu_milli": "500"}])  # fmt: skip


def test_it_overlays_the_same_topology_for_the_same_seed(openb):
    first = with_topology_overlay(
        openb.nodes, zones=2, blocks_per_zone=3, racks_per_block=4, seed=7
    )
    again = with_topology_overlay(
        openb.nodes, zones=2, blocks_per_zone=3, racks_per_block=4, seed=7
    )
    assert [n.labels for n in first] == [n.labels for n in again]


def test_it_fills_every_synthetic_domain_evenly(openb):
    nodes = with_topology_overlay(openb.nodes, zones=2, blocks_per_zone=3, racks_per_block=4)
    racks = Counter(n.labels[RACK_LABEL] for n in nodes)
    assert len(racks) == 24
    assert max(racks.values()) - min(racks.values()) <= 1
    assert len({n.labels[BLOCK_LABEL] for n in nodes}) == 6
    assert len({n.labels[ZONE_LABEL] for n in nodes}) == 2


def test_it_marks_the_overlay_as_synthetic(openb):
    nodes = with_topology_overlay(openb.nodes[:3], zones=1, blocks_per_zone=1, racks_per_block=1)
    assert all(n.labels[SYNTHETIC_TOPOLOGY_LABEL] == "true" for n in nodes)
    assert SYNTHETIC_TOPOLOGY_LABEL not in openb.nodes[0].labels
