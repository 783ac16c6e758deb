"""Every scenario in tests/scenarios runs through parse_objects + evaluate and
matches its hand-derived ``<name>.expected.yaml``.

An expected file lists only what it asserts: per workload the keys given
(plus ``reasonsContain``: substrings of its reasons), the top-level
``cluster``, ``recommendations``, ``idleReservations``, ``cost``,
``nodeGroupTotals``, ``ignored``, ``unsupported``, ``jointSearch``, ``schedulerProfile``
and ``autoscalerProfile`` (also the profiles evaluated), ``whatIf`` and ``modelGaps``
exactly (each when the expected file gives it), and ``diagnoses``: the scheduler's summary for the
workloads named.
"""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.autoscaler.profiles import DEFAULT_PROFILE
from recommender.engine.evaluate.evaluation import evaluate
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
EXPECTED_SUFFIX = ".expected.yaml"
EXACT_KEYS = (
    "cluster",
    "recommendations",
    "idleReservations",
    "cost",
    "nodeGroupTotals",
    "ignored",
    "unsupported",
    "jointSearch",
    "schedulerProfile",
    "autoscalerProfile",
    "whatIf",
    "modelGaps",
)


def scenario_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".yaml")
        for p in SCENARIOS.glob("*.yaml")
        if not p.name.endswith(EXPECTED_SUFFIX)
    )


def evaluated(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    expected = yaml.safe_load((SCENARIOS / f"{name}{EXPECTED_SUFFIX}").read_text())
    snapshot = parse_objects(read_objects(SCENARIOS / f"{name}.yaml"), cluster_name=name)
    assert [str(e) for e in snapshot.errors] == []
    at = datetime.fromisoformat(expected["at"].replace("Z", "+00:00"))
    profile = expected.get("schedulerProfile", "default")  # the setting's default otherwise
    autoscaler = expected.get("autoscalerProfile", DEFAULT_PROFILE)
    # the cluster-autoscaler command line the scenario runs with (upstream defaults if none)
    ca_flags = parse_flags(expected["autoscalerArgs"]) if "autoscalerArgs" in expected else None
    result = evaluate(
        snapshot.cluster, at=at, policy=profile, autoscaler=autoscaler, ca_flags=ca_flags
    )
    return result.to_json(), expected


def test_it_has_a_hand_derived_expectation_for_every_scenario() -> None:
    names = scenario_names()
    assert len(names) >= 10
    missing = [n for n in names if not (SCENARIOS / f"{n}{EXPECTED_SUFFIX}").exists()]
    assert missing == []


@pytest.mark.parametrize("name", scenario_names())
def test_it_matches_the_expected_outcome(name: str) -> None:
    result, expected = evaluated(name)
    for key in EXACT_KEYS:
        if key in expected:
            assert result[key] == expected[key], key
    for workload_name, summary in expected.get("diagnoses", {}).items():
        assert result["diagnoses"][workload_name]["summary"] == summary, workload_name
    workloads = {w["name"]: w for w in result["workloads"]}
    assert sorted(workloads) == sorted(expected["workloads"])
    for workload_name, wanted in expected["workloads"].items():
        actual = workloads[workload_name]
        for substring in wanted.pop("reasonsContain", []):
            assert any(substring in r for r in actual["reasons"]), (substring, actual["reasons"])
        assert {k: actual[k] for k in wanted} == wanted, workload_name


@pytest.mark.parametrize("name", scenario_names()[:3])
def test_it_gives_byte_identical_json_for_the_same_input(name: str) -> None:
    first, _ = evaluated(name)
    second, _ = evaluated(name)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
