"""cluster-autoscaler 1.34, 1.35 and 1.36: how each release's simulation treats DRA.

Upstream, with each release's default flags and feature gates:

- 1.34: ``--enable-dynamic-resource-allocation`` defaults to false
  (``cluster-autoscaler/config/flags/flags.go``); kubernetes/autoscaler#8598 then turns
  the scheduler's DynamicResources plugin off in CA's framework, so CA simulates pods
  as if they had no claims (builds without #8598 panic instead: said as a caveat);
- 1.35: claims are checked, but the vendored scheduler's DRAPartitionableDevices gate
  is alpha and off (``pkg/features/kube_features.go``: alpha 1.33, beta 1.36), and the
  structured allocator's ``allocateDevice`` refuses every device with
  ``consumesCounters`` while it is off;
- 1.36: claims checked, partitions allocated (the scheduler simulation's own rules).

The snapshots are the two scenarios built for this (tests/scenarios/ca-1.34-* and
ca-1.35-*, whose comments hold the derivations); each figure below is worked out
from the steps named beside it.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.profiles import profile_names
from recommender.engine.evaluate.evaluation import evaluate
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 2, tzinfo=UTC)
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
CLAIMS_UNCHECKED = "ca-1.34-dra-claims-unchecked"
PARTITIONS = "ca-1.35-partitions-never-allocated"
VERSIONS = ("cluster-autoscaler:1.34", "cluster-autoscaler:1.35", "cluster-autoscaler:1.36")


def snapshot(name: str, extra: tuple[dict[str, Any], ...] = ()) -> Cluster:
    objects = [*read_objects(SCENARIOS / f"{name}.yaml"), *((name, o) for o in extra)]
    parsed = parse_objects(objects, cluster_name=name)
    assert [str(e) for e in parsed.errors] == []
    return parsed.cluster


def workload(cluster: Cluster, profile: str) -> dict[str, Any]:
    (only,) = evaluate(cluster, at=AT, autoscaler=profile).to_json()["workloads"]
    return dict(only)


def test_the_three_releases_are_registered() -> None:
    assert set(VERSIONS) <= set(profile_names())
    assert [CaSettings(version=v).dra_claims_checked for v in ("1.34", "1.35", "1.36")] == [
        False,
        True,
        True,
    ]
    assert [CaSettings(version=v).partitionable_devices for v in ("1.34", "1.35", "1.36")] == [
        False,
        False,
        True,
    ]


def test_1_34_buys_the_node_least_waste_picks_without_the_claim() -> None:
    # two groups, no node, a pod with 8 cpu, 32Gi and a claim for one GPU device.
    # 1.34 (claim unseen): both templates accept it; least-waste 1.0 (cpu-pool) beats
    # 1.885 (gpu-pool): one cpu-pool node, where the scheduler cannot allocate the claim.
    found = workload(snapshot(CLAIMS_UNCHECKED), "cluster-autoscaler:1.34")
    assert found["naive"] == {
        "addNodes": {"cpu-pool": 1},
        "schedulableAfter": False,
        "strandedGpus": 0,
    }
    assert found["disagreements"] == ["device-model"]
    assert any("kubernetes/autoscaler#8598" in r for r in found["reasons"])


@pytest.mark.parametrize("profile", ["cluster-autoscaler:1.35", "cluster-autoscaler:1.36"])
def test_1_35_and_later_check_the_claim_on_templates(profile: str) -> None:
    # cpu-pool's template has no device: "cannot allocate all claims"; gpu-pool's 8
    # devices take it: one gpu-pool node, on which the scheduler places the pod (1 of 8
    # GPUs used, 7 stranded); the joint plan buys the same: no disagreement, no caveat.
    found = workload(snapshot(CLAIMS_UNCHECKED), profile)
    assert found["naive"] == {
        "addNodes": {"gpu-pool": 1},
        "schedulableAfter": True,
        "strandedGpus": 7,
    }
    assert found["disagreements"] == []
    assert not any("naive autoscaler" in r for r in found["reasons"])


def test_1_34_believes_a_claim_fits_a_node_with_cpu_room() -> None:
    # a ready CPU node with 16 cpu free: 1.34's filter-out-schedulable fits the pod there
    # (its claim unseen), so CA adds nothing while the scheduler cannot place it (no
    # device on cpu-a): never-scales. 1.36 sees the claim: cpu-a refuses it, it buys
    # gpu-pool like the joint plan.
    cpu_node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "cpu-a", "labels": {"kubernetes.io/hostname": "cpu-a"}},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
    }
    cluster = snapshot(CLAIMS_UNCHECKED, (cpu_node,))
    old = workload(cluster, "cluster-autoscaler:1.34")
    assert old["naive"]["addNodes"] == {}
    assert old["joint"]["addNodes"] == {"gpu-pool": 1}
    assert old["disagreements"] == ["never-scales"]
    new = workload(cluster, "cluster-autoscaler:1.36")
    assert new["naive"]["addNodes"] == {"gpu-pool": 1}
    assert new["disagreements"] == []


def test_1_35_never_allocates_partitions_and_1_36_does() -> None:
    # the template's seven 1g.10gb consume counters: 1.35 refuses them all (nothing can
    # help, the reason names the gate); 1.36 allocates one (compute 1 of 7): one node.
    cluster = snapshot(PARTITIONS)
    old = workload(cluster, "cluster-autoscaler:1.35")
    assert old["naive"]["addNodes"] == {}
    assert old["disagreements"] == ["never-scales", "sharing"]
    assert any("DRAPartitionableDevices" in r for r in old["reasons"])
    new = workload(cluster, "cluster-autoscaler:1.36")
    assert new["naive"] == {
        "addNodes": {"h100-mig": 1},
        "schedulableAfter": True,
        "strandedGpus": 0,
    }
    assert new["disagreements"] == []
    assert not any("naive autoscaler" in r for r in new["reasons"])


@pytest.mark.parametrize(
    "name", ["ca-least-waste-whole-option", "ca-upcoming-no-double-buy", "agreement-scale-up"]
)
def test_pods_without_claims_get_the_same_plan_from_every_release(name: str) -> None:
    # no claim anywhere: the DRA differences never apply, and nothing else differs
    # between the releases (least-waste is the default expander since 1.33)
    cluster = snapshot(name)
    assert not any(p.claims for p in cluster.pods)
    results = []
    for profile in VERSIONS:
        result = evaluate(cluster, at=AT, autoscaler=profile).to_json()
        result.pop("autoscalerProfile")
        results.append(result)
    assert results[0] == results[1] == results[2]
