"""The per-node breakdown behind a workload's diagnosis (kube-scheduler's NodeToStatusMap).

Expectations worked out by hand from kube-scheduler's filters: NodeResourcesFit says
"Insufficient nvidia.com/gpu" (noderesources/fit.go), TaintToleration "node(s) had
untolerated taint {key: value}" (tainttoleration/taint_toleration.go); a gated pod is
held at PreEnqueue (schedulinggates) and never filtered.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.scheduler.breakdown import all_breakdowns, workload_breakdown
from recommender.engine.scheduler.diagnosis import nodes_summary
from tests.builders.objects import (
    KubeObject,
    PodObjectBuilder,
    as_dicts,
    node_object,
    pod_group_object,
    pod_object,
)
from tests.engine.test_scenarios import SCENARIOS, scenario_names
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BLOCK = "cloud.google.com/gce-topology-block"
GPU = "NVIDIA-H100-80GB-HBM3"


BLOCK_NODE = node_object("").allocatable(cpu="64", memory="256Gi", pods="110")
H100 = BLOCK_NODE.gpus(8, GPU)
ML_POD = pod_object("ml", "").requests(cpu="1")


def gpu_pod(name: str, gpus: int) -> PodObjectBuilder:
    return ML_POD.named(name).requests({"nvidia.com/gpu": str(gpus)})


def cluster(*extra: KubeObject) -> Any:
    objects = [
        H100.named("n1").label(BLOCK, "b1"),
        H100.named("n2").label(BLOCK, "b2"),
        H100.named("n3").label(BLOCK, "b1").taint("dedicated", "infra"),
        BLOCK_NODE.named("cpu-1").label(BLOCK, "b1"),
        gpu_pod("running", 4).on("n2"),
        pod_group_object("ml", "g", 2),
        gpu_pod("g-0", 8).label("scheduling.x-k8s.io/pod-group", "g"),
        gpu_pod("g-1", 8).label("scheduling.x-k8s.io/pod-group", "g"),
        *extra,
    ]
    snapshot = parse_objects(
        [("test", yaml.safe_load(yaml.safe_dump(o))) for o in as_dicts(*objects)], cluster_name="t"
    )
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def test_it_gives_each_nodes_reason_for_the_gang_member_that_fits_nowhere() -> None:
    result = workload_breakdown(cluster(), "ml/g", at=AT)
    assert result is not None and result.held is None
    # g-0 takes n1 (the only node with 8 free, untainted GPUs); then g-1 fits nowhere
    assert (result.placed, result.member) == (False, "ml/g-1")
    reasons = {n.node: n.reason for n in result.nodes}
    assert reasons == {
        "n1": "Insufficient nvidia.com/gpu",
        "n2": "Insufficient nvidia.com/gpu",
        "n3": "node(s) had untolerated taint {dedicated: infra}",
        "cpu-1": "Insufficient nvidia.com/gpu",
    }


def test_it_counts_free_gpus_and_domains_as_before_the_workload() -> None:
    result = workload_breakdown(cluster(), "ml/g", at=AT)
    assert result is not None
    free = {n.node: (n.gpus, n.free_gpus) for n in result.nodes}
    assert free == {"n1": (8, 8), "n2": (8, 4), "n3": (8, 8), "cpu-1": (0, 0)}  # g-0 undone
    block = result.levels.index("block") if "block" in result.levels else None
    assert block is not None
    assert {n.node: n.path[block] for n in result.nodes} == {
        "n1": "b1",
        "n2": "b2",
        "n3": "b1",
        "cpu-1": "b1",
    }


def test_it_gives_no_map_for_a_workload_the_scheduler_places() -> None:
    result = workload_breakdown(cluster(gpu_pod("small", 2)), "ml/small", at=AT)
    assert result is not None
    assert (result.placed, result.member, result.nodes) == (True, None, ())


def test_it_sees_the_nodes_as_the_workloads_before_it_left_them() -> None:
    """ml/a (created first) takes n1's 8 GPUs; ml/b (8 GPUs) then fits nowhere."""
    early = gpu_pod("a", 8).created("2026-12-01T10:00:00Z")
    late = gpu_pod("b", 8).created("2026-12-01T11:00:00Z")
    found = all_breakdowns(cluster(early, late), at=AT)
    assert found["ml/a"].placed
    reasons = {n.node: n.reason for n in found["ml/b"].nodes}
    assert reasons["n1"] == "Insufficient nvidia.com/gpu"
    assert {n.node: n.free_gpus for n in found["ml/b"].nodes}["n1"] == 0


def test_it_scans_no_node_for_a_gated_pod() -> None:
    result = workload_breakdown(
        cluster(gpu_pod("gated", 1).gate("example.com/hold")), "ml/gated", at=AT
    )
    assert result is not None
    assert result.nodes == ()
    assert result.held is not None and "example.com/hold" in result.held


def test_it_returns_none_for_a_workload_that_is_not_pending() -> None:
    assert workload_breakdown(cluster(), "ml/running", at=AT) is None
    assert workload_breakdown(cluster(), "ml/unknown", at=AT) is None


def test_it_says_what_the_gang_asks_for() -> None:
    result = workload_breakdown(cluster(), "ml/g", at=AT)
    assert result is not None
    asks = result.asks
    assert (asks.kind, asks.pods, asks.min_member) == ("gang", 2, 2)
    assert asks.gpus_by_model == (("any", 16.0),)
    assert (asks.required_level, asks.queue) == (None, None)


@pytest.mark.parametrize("name", scenario_names())
def test_each_failed_workloads_map_adds_up_to_its_diagnosis(name: str) -> None:
    """The per-node map, counted, is the "0/N nodes are available: …" the evaluation gave."""
    snapshot = parse_objects(read_objects(SCENARIOS / f"{name}.yaml"), cluster_name=name)
    result = evaluate(snapshot.cluster, at=AT).to_json()
    for key, found in all_breakdowns(snapshot.cluster, at=AT).items():
        if not found.nodes:
            continue
        counted = Counter(n.reason for n in found.nodes if n.reason)
        summary = nodes_summary(len(found.nodes), counted)
        assert result["diagnoses"][key]["summary"].startswith(summary.removesuffix(".")), key
