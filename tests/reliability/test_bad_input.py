"""Hostile and broken snapshots through ``manage.py evaluate``: exit 0 or 2, never a traceback.

The parser's own properties are in tests/engine/test_kube_properties.py and
tests/engine/test_kube_files.py; here the whole CLI (read → parse → engine →
report) gets fuzzed objects, mutated real scenarios, bombs and oversized input.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import REPO_ROOT, environment_without_services, run_manage
from tests.engine.test_kube_properties import json_like, objects

SCENARIOS = sorted((REPO_ROOT / "tests" / "scenarios").glob("*[!d].yaml"))
AT = "2026-12-02T00:00:00Z"
BAD_INPUT = 2
FUZZ_SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def evaluate_in_process(path: Path) -> int:
    """Run the command as manage.py would; its exit status (an exception fails the test)."""
    try:
        call_command("evaluate", str(path), "--format", "json", "--at", AT)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def scenario_documents() -> list[list[dict[str, Any]]]:
    return [[d for d in yaml.safe_load_all(p.read_text()) if d] for p in SCENARIOS]


def paths_into(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a JSON-like value (the places a mutation can hit)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths_into(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths_into(child, (*prefix, index))
    return found


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = replaced(value[path[0]], path[1:], new)
    return copied


@st.composite
def mutated_scenarios(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A real scenario with one to three values anywhere replaced by junk."""
    documents = draw(st.sampled_from(scenario_documents()))
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(documents) - 1))
        path = draw(st.sampled_from(paths_into(documents[index])[1:] or [()]))
        documents = [*documents]
        documents[index] = replaced(documents[index], path, draw(json_like))
    return documents


@FUZZ_SETTINGS
@given(st.lists(objects, max_size=6), st.booleans())
def test_it_exits_0_or_2_on_fuzzed_objects(tmp_path: Path, items: list[Any], as_yaml: bool) -> None:
    path = tmp_path / ("fuzz.yaml" if as_yaml else "fuzz.json")
    document = {"apiVersion": "v1", "kind": "List", "items": items}
    text = yaml.safe_dump(document) if as_yaml else json.dumps(document, allow_nan=True)
    path.write_text(text)
    assert evaluate_in_process(path) in (0, BAD_INPUT)


@FUZZ_SETTINGS
@given(mutated_scenarios())
def test_it_exits_0_or_2_on_mutated_real_scenarios(
    tmp_path: Path, documents: list[dict[str, Any]]
) -> None:
    path = tmp_path / "mutated.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    assert evaluate_in_process(path) in (0, BAD_INPUT)


# --- bombs and oversized input, in a fresh interpreter as a user runs it ----------------


def billion_laughs(levels: int = 9) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        previous = f"*l{level - 1}"
        lines.append(f"l{level}: &l{level} [{', '.join([previous] * 10)}]")
    return "\n".join(lines) + "\n"


def nested_json(depth: int) -> str:
    return '{"kind": "List", "items": [' + '{"a": ' * depth + "1" + "}" * depth + "]}"


def evaluate_cli(path: Path, **environment: str) -> Any:
    return run_manage(
        "evaluate", str(path), "--at", AT, environment=environment_without_services(**environment)
    )


def assert_refused(result: Any, reason: str) -> None:
    assert result.returncode == BAD_INPUT, result.stderr
    assert "Traceback" not in result.stderr
    assert reason in result.stderr


def test_it_refuses_a_billion_laughs_yaml_bomb(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(billion_laughs())
    assert_refused(evaluate_cli(path), "alias bomb")


def test_it_refuses_json_nested_deeper_than_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(nested_json(100_000))
    assert_refused(evaluate_cli(path), "nesting deeper than")


def test_it_refuses_a_snapshot_over_max_snapshot_bytes(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text((REPO_ROOT / "tests" / "scenarios" / "topology-block.yaml").read_text())
    assert_refused(evaluate_cli(path, MAX_SNAPSHOT_BYTES="200"), "max_bytes=200")


def test_it_refuses_a_snapshot_over_max_snapshot_objects(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text((REPO_ROOT / "tests" / "scenarios" / "topology-block.yaml").read_text())
    assert_refused(evaluate_cli(path, MAX_SNAPSHOT_OBJECTS="2"), "max_objects=2")


def test_it_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"kind: Node\nmetadata: {name: \xff\xfe}\n")
    assert_refused(evaluate_cli(path), "not UTF-8")


@pytest.mark.django_db
def test_it_refuses_an_api_body_over_the_upload_limit(admin_client: Any) -> None:
    """The API takes no snapshot uploads (ingest reads the cluster's source); its JSON
    bodies are bounded by DATA_UPLOAD_MAX_MEMORY_SIZE: an oversized one is a 4xx, not 5xx."""
    from django.conf import settings as django_settings

    oversized = "y" * django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = json.dumps({"name": "g", "spec": {"x": oversized}})
    response = admin_client.post("/api/v1/node-groups/", body, content_type="application/json")
    assert 400 <= response.status_code < 500


@pytest.mark.long
@settings(
    max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutated_scenarios())
def test_it_exits_0_or_2_on_2000_mutated_real_scenarios(
    tmp_path: Path, documents: list[dict[str, Any]]
) -> None:
    path = tmp_path / "mutated.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    assert evaluate_in_process(path) in (0, BAD_INPUT)
