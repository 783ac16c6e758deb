"""Snapshot models survive the JSON round trip exactly and byte-for-byte."""

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from topology.ingest.files import read_objects, read_openb
from topology.ingest.trace import with_topology_overlay
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster, Reservation
from topology.model.serialize import cluster_from_json, cluster_to_json


def _dumps(data):
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


@pytest.fixture(scope="module")
def trace_cluster(shared_data):
    cluster = read_openb(shared_data / "alibaba-gpu-v2023", "gpuspec33")
    nodes = with_topology_overlay(cluster.nodes, zones=2, blocks_per_zone=2, racks_per_block=3)
    return replace(cluster, nodes=nodes)


def test_it_rebuilds_the_trace_cluster_exactly(trace_cluster):
    assert cluster_from_json(cluster_to_json(trace_cluster)) == trace_cluster


def test_it_dumps_the_same_bytes_after_a_round_trip(trace_cluster):
    data = cluster_to_json(trace_cluster)
    assert _dumps(cluster_to_json(cluster_from_json(json.loads(_dumps(data))))) == _dumps(data)


def test_it_round_trips_dra_claims_and_selectors(shared_data):
    dra = shared_data / "k8s-examples" / "dra"
    objects = [
        *read_objects(dra / "rocm-amd-resourceclaim-partitions-same-parent.yaml"),
        *read_objects(dra / "nvidia-dra-bats-multiple-mig-capacity-cel.yaml"),
    ]
    cluster = parse_objects(objects, cluster_name="dra").cluster
    assert any(pod.claims for pod in cluster.pods)
    assert cluster_from_json(json.loads(_dumps(cluster_to_json(cluster)))) == cluster


def test_it_round_trips_inter_pod_terms_and_namespace_labels():
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "interpod-spread-wrong-zone.yaml"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "serve"}}
    cluster = parse_objects([*read_objects(scenario), ("ns", namespace)], cluster_name="t").cluster
    assert cluster.namespace_labels and any(pod.pod_terms for pod in cluster.pods)
    assert cluster_from_json(json.loads(_dumps(cluster_to_json(cluster)))) == cluster


def test_it_round_trips_disruption_budgets_and_their_disrupted_pods():
    """A PodDisruptionBudget's status.disruptedPods is a set: stored as a sorted list."""
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "preemption-pdb.yaml"
    objects = read_objects(scenario)
    budget = next(obj for _source, obj in objects if obj["kind"] == "PodDisruptionBudget")
    budget.setdefault("status", {})["disruptedPods"] = {
        "web-1": "2026-12-01T00:00:00Z",
        "web-0": "2026-12-01T00:00:00Z",
    }
    cluster = parse_objects(objects, cluster_name="t").cluster
    assert cluster.disruption_budgets[0].disrupted_pods == frozenset({"web-0", "web-1"})
    dumped = cluster_to_json(cluster)
    assert dumped["cluster"]["disruption_budgets"][0]["disrupted_pods"] == ["web-0", "web-1"]
    assert cluster_from_json(json.loads(_dumps(dumped))) == cluster


def test_it_round_trips_daemonsets_and_the_pods_a_fresh_node_runs_too():
    """Cluster.daemon_pods and Pod.node_daemon survive storage (templates are built from them)."""
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "ca-upcoming-no-double-buy.yaml"
    agent = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "agent-1",
            "namespace": "kube-system",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": True}
            ],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }
    objects = [*read_objects(scenario), ("agent.yaml", agent)]
    cluster = parse_objects(objects, cluster_name="t").cluster
    assert cluster.daemon_pods
    assert any(p.node_daemon == "DaemonSet/kube-system/agent" for p in cluster.pods)
    assert cluster_from_json(json.loads(_dumps(cluster_to_json(cluster)))) == cluster


def test_it_round_trips_reservation_times():
    reservation = Reservation(
        name="r",
        owner_namespaces=("team-a",),
        node_names=("n1",),
        start=datetime(2026, 12, 1, tzinfo=UTC),
        end=datetime(2027, 1, 1, tzinfo=UTC),
        price_per_gpu_hour=2.5,
    )
    cluster = Cluster(name="c", reservations=(reservation,))
    assert cluster_from_json(json.loads(_dumps(cluster_to_json(cluster)))) == cluster


def test_it_refuses_an_unknown_schema_version():
    with pytest.raises(ValueError, match="schemaVersion"):
        cluster_from_json({"schemaVersion": 99, "cluster": {}})


def _canonical_text(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_it_cuts_a_models_canonical_json_into_pieces_that_join_to_the_same_text(trace_cluster):
    from topology.model.serialize import canonical_chunks

    content = {"model": cluster_to_json(trace_cluster), "errors": [], "read": {"counts": {}}}
    assert "".join(canonical_chunks(content)) == _canonical_text(content)


def test_it_cuts_odd_values_into_pieces_that_join_to_the_same_text():
    from topology.model.serialize import canonical_chunks

    value = {
        "ü-key": ["é", {}, [], None, True, 1.5, -0.0, 10**20, '"quoted"\n'],
        "a": {"z": {"deep": [{"b": 1, "a": [2, {"y": 3, "x": 4}]}]}, "m": ()},
        "": [[[[["five levels"]]]]],
        "ints": {1: "a non-string key", 2: "dumped as json.dumps does"},
    }
    for depth in range(7):
        assert "".join(canonical_chunks(value, depth)) == _canonical_text(value)
