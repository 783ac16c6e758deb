"""The OpenAPI schema is valid, and the live API keeps to it under schemathesis.

Two runs, both against the live server pytest-django starts on 127.0.0.1, on real rows
(two clusters with a snapshot and an evaluation each, a reservation, a node group, a
recommendation, a verdict, a subscription): the ``id`` of each detail path but DELETE
is a real one, and the fuzzing phase puts the real ``cluster``, ``snapshot`` and
``evaluation`` ids in those parameters half the time (the 500s of issue 42 item 4
needed a valid ``?snapshot=``). Both end by example count (``--max-examples`` per
operation in the fuzzing phase; the coverage phase runs every case the schema defines),
with a fixed seed: with ``--max-time`` the fuzzing phase repeats until the time is spent.

- In the default suite: the coverage phase (each parameter's and body field's
  boundaries, invalid values, unexpected methods) and 5 fuzzed cases per operation,
  about 3,000 requests (about 45 s of CPU, single worker).
- ``-m long``: examples, coverage and fuzzing at 100 cases per operation (the run of
  issue 42: about 8,500 requests, some 140 s of CPU).

Each runs as a user exempt from throttling (THROTTLE_EXEMPT_USERNAMES), or most requests
to the throttled operations would be 429s that exercise nothing (the token endpoint,
called without a credential, keeps its rate per address).

Each runs every check (``--checks all``) with tests/api/schemathesis.toml: the fuzzer's
token goes through the schema's tokenAuth scheme, and bodies with rules beyond JSON
Schema may answer 400 to schema-valid data (the file says why). Any failed check (a
500, an undocumented status or media type, a body off its schema, invalid data
accepted...) fails the test.
The fuzzer's webhook hosts are resolved by a stand-in that resolves none (the guard
answers 400): the suite looks up no name beyond this machine (tests/conftest.py).
The rates are lowered below the examples per operation, so that a broken exemption
shows as 429s on any machine, fast or slow; the HAR report must show every
operation answered other than by a throttle's 429 (what-if/'s own 429, one running and
one waiting, is an answer).
"""

import json
import os
import re
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from builders import make_user, token_client
from django.test import Client

from tests.conftest import is_local_host

SCHEMATHESIS_CHECKS = "all"
SCHEMATHESIS_EXAMPLES = 5  # fuzzing cases per operation in the default suite
SCHEMATHESIS_LONG_EXAMPLES = 100  # schemathesis's default, in the long run
LOW_RATES = {"writes": "3/minute", "reports": "3/minute", "test-sends": "3/minute"}
SCHEMATHESIS_TIMEOUT_SECONDS = 1500  # a hang guard only: the run ends by example count
SCHEMATHESIS_LONG_TIMEOUT_SECONDS = 1800  # pytest-timeout's, above the subprocess's
EXCLUDED_PATHS = "test-email|test-webhook|ingest"
THROTTLED = "throttled"  # in the HAR's counts: a 429 of DRF's throttles
SCHEMATHESIS_CONFIG = Path(__file__).with_name("schemathesis.toml")
PATH_PARAMETER = re.compile(r"\{[^}]+\}")


@pytest.mark.django_db
def test_it_serves_a_valid_openapi_schema(client):
    from openapi_spec_validator import validate

    response = client.get("/api/schema/", {"format": "json"})

    schema = response.json()
    validate(schema)
    assert "/api/v1/reports/idle-reservations/" in schema["paths"]


def schema_operations(client) -> set[tuple[str, str]]:
    """(METHOD, path pattern) of every operation the run covers (not the excluded ones)."""
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]
    return {
        (method.upper(), path)
        for path, operations in paths.items()
        if not re.search(EXCLUDED_PATHS, path)
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    }


def operation_of(method: str, url: str, operations: Iterable[tuple[str, str]]) -> tuple[str, str]:
    """The schema operation a request of the run went to (path parameters matched).

    The router tries a list route's actions before the detail route (DRF's
    SimpleRouter.routes), so ``/moves/rows/`` is the ``rows`` action, never ``/moves/{id}/``
    with id "rows": operations with fewer path parameters are tried first (in a set's
    order, which changes with PYTHONHASHSEED, the rows were sometimes counted as the
    detail's, and the rows operation looked never answered)."""
    path = urlsplit(url).path
    for operation in sorted(operations, key=lambda op: (len(PATH_PARAMETER.findall(op[1])), op)):
        literal_parts = PATH_PARAMETER.split(operation[1])
        pattern = "[^/]+".join(re.escape(part) for part in literal_parts)
        if operation[0] == method and re.fullmatch(pattern, path):
            return operation
    return method, path


def test_it_counts_a_list_routes_action_as_its_own_operation_not_the_detail():
    """Whatever the set's order: the detail operation first in it, then last."""
    rows, detail = ("GET", "/api/v1/moves/rows/"), ("GET", "/api/v1/moves/{id}/")

    for ordered in ([detail, rows], [rows, detail]):
        operations = dict.fromkeys(ordered)  # insertion-ordered, as a set may iterate
        assert operation_of("GET", "http://127.0.0.1/api/v1/moves/rows/", operations) == rows
        assert operation_of("GET", "http://127.0.0.1/api/v1/moves/7/", operations) == detail


def resolving_no_outside_name(real_getaddrinfo: Any) -> Any:
    """The webhook guard's resolver for the run: the fuzzer's webhook hosts do not resolve
    (the guard answers 400, documented), local names as before; no lookup leaves the host."""

    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        if is_local_host(host):
            return real_getaddrinfo(host, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, f"{host}: not resolved in the schemathesis run")

    return resolver


@pytest.fixture
def real_ids(db) -> dict[str, list[int]]:
    """Two clusters with a stored snapshot and evaluation each (the reservation scenario:
    a node group, team-a's reservation, a pending pod the reservation takes; the scale-up
    scenario: a recommendation), a subscription of the fuzzer's: the ids the run puts in
    paths and in the ``cluster``/``snapshot``/``evaluation`` parameters, so its requests
    reach past the 404 of an unknown id (the 500s of issue 42 item 4 needed them)."""
    from recommender.models import Recommendation, WorkloadVerdict
    from reservations.models import Reservation, Subscription
    from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects
    from topology.models import NodeGroup

    user = make_user("fuzzer", teams=("team-a",))
    token_client(user)
    evaluations = [
        ingest_and_evaluate(make_cluster(name), scenario_objects(scenario))
        for name, scenario in (
            ("prod-gpu", "reservation-idle-nodes"),
            ("scale", "agreement-scale-up"),
        )
    ]
    subscription = Subscription.objects.create(user=user, recipients="fuzzer@example.com")
    subscription.clusters.add(evaluations[0].cluster)
    return {
        "cluster": [evaluation.cluster_id for evaluation in evaluations],
        "snapshot": [evaluation.snapshot_id for evaluation in evaluations],
        "evaluation": [evaluation.id for evaluation in evaluations],
        "reservation": [Reservation.objects.get().id],
        "node_group": list(NodeGroup.objects.values_list("id", flat=True)[:1]),
        "recommendation": list(Recommendation.objects.values_list("id", flat=True)[:1]),
        "verdict": list(WorkloadVerdict.objects.values_list("id", flat=True)[:1]),
        "subscription": [subscription.id],
    }


# Each operation whose path names a row gets a real one (DELETE keeps a random id: deleting
# the row would turn every later case of the operation into a 404).
PATH_IDS = {
    "clusters": "cluster",
    "cluster-autoscalers": "cluster",
    "snapshots": "snapshot",
    "evaluations": "evaluation",
    "reservations": "reservation",
    "node-groups": "node_group",
    "recommendations": "recommendation",
    "pending-workloads": "verdict",
    "subscriptions": "subscription",
}
QUERY_IDS = ("cluster", "snapshot", "evaluation")
# The fuzzer is a team member: a Prometheus source's writes are the operators', a 403 before
# the body is read, so the coverage phase's ~520 bodies there test the permission alone
# (a sixth of the phase). The default run fuzzes them; the long run covers them too.
OPERATOR_WRITES_FUZZED_ONLY = """
[[operations]]
include-name-regex = "^(POST|PUT|PATCH) /api/v1/prometheus-sources/"
phases.coverage.enabled = false
"""
REAL_ID_PROBABILITY = 0.5  # fuzzing: half the values a real id, half generated


def config_with_real_ids(ids: dict[str, list[int]], extra: str = "") -> str:
    """tests/api/schemathesis.toml plus the real ids: a path's ``id`` fixed per operation
    (every phase), and the query ids from a dictionary the fuzzing phase draws from half
    the time (the coverage phase keeps its own values: their 400s and 404s)."""
    lines = [SCHEMATHESIS_CONFIG.read_text(), extra, ""]
    for name in QUERY_IDS:
        lines += [f"[dictionaries.{name}]", f"values = {ids[name]}", ""]
    for route, name in PATH_IDS.items():
        lines += [
            "[[operations]]",
            f'include-name-regex = "^(GET|PUT|PATCH) /api/v1/{route}/\\\\{{id\\\\}}/$"',
            f'parameters = {{ "path.id" = {ids[name][0]} }}',
            "",
        ]
    lines.append("[parameters]")
    for name in QUERY_IDS:
        binding = f'{{ dictionary = "{name}", probability = {REAL_ID_PROBABILITY} }}'
        lines.append(f'"query.{name}" = {binding}')
    return "\n".join(lines)


def run_schemathesis(
    live_server: Any,
    tmp_path: Path,
    ids: dict[str, list[int]],
    *,
    phases: str,
    max_examples: int,
    extra_config: str = "",
) -> tuple[subprocess.CompletedProcess[str], Counter[tuple[tuple[str, str], int | str]]]:
    """schemathesis run against the live server with the real ids; the run and its
    (operation, status) counts from the HAR report."""
    from rest_framework.authtoken.models import Token

    config = tmp_path / "schemathesis.toml"
    config.write_text(config_with_real_ids(ids, extra_config))
    har_path = tmp_path / "run.har"
    schemathesis = Path(sys.executable).with_name("schemathesis")
    arguments = [str(schemathesis), "--config-file", str(config), "run"]
    arguments += [f"{live_server.url}/api/schema/?format=json"]
    arguments += ["--checks", SCHEMATHESIS_CHECKS, "--seed", "1"]
    arguments += ["--max-examples", str(max_examples)]
    arguments += ["--phases", phases, "--workers", "1", "--no-shrink"]
    arguments += ["--exclude-path-regex", EXCLUDED_PATHS]
    arguments += ["--report", "har", "--report-har-path", str(har_path)]
    run = subprocess.run(
        arguments,
        capture_output=True,
        text=True,
        timeout=SCHEMATHESIS_TIMEOUT_SECONDS,
        cwd=tmp_path,
        env={
            **os.environ,
            "CAPACITYWEB_FUZZER_TOKEN": Token.objects.get(user__username="fuzzer").key,
        },
    )
    operations = schema_operations(Client())
    entries = json.loads(har_path.read_text())["log"]["entries"] if har_path.exists() else []
    statuses = Counter(
        (
            operation_of(entry["request"]["method"], entry["request"]["url"], operations),
            THROTTLED if throttled(entry["response"]) else entry["response"]["status"],
        )
        for entry in entries
    )
    return run, statuses


def throttled(response: dict[str, Any]) -> bool:
    """A 429 of DRF's throttles ("Request was throttled. Expected available in N seconds."),
    not a 429 an operation answers of itself (what-if/: one running and one waiting)."""
    text = response.get("content", {}).get("text", "")
    return response["status"] == 429 and "Request was throttled" in text


@pytest.fixture
def fuzzed_server(live_server, settings, monkeypatch) -> Any:
    """The live server as the run needs it: the fuzzer exempt from throttling, the rates
    low (a broken exemption shows as 429s), no outside name resolved."""
    from rest_framework.throttling import SimpleRateThrottle

    settings.THROTTLE_EXEMPT_USERNAMES = ["fuzzer"]
    # DRF binds the rates to the class when it is imported: the settings fixture cannot.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", LOW_RATES)
    monkeypatch.setattr(socket, "getaddrinfo", resolving_no_outside_name(socket.getaddrinfo))
    return live_server


def assert_every_operation_answered(
    run: subprocess.CompletedProcess[str], statuses: Counter[tuple[tuple[str, str], int | str]]
) -> None:
    """No check failed (a 500, an undocumented status or media type, a body off its
    schema...), and every operation answered something other than a throttle's 429."""
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    limited = {operation for (operation, status) in statuses if status == THROTTLED}
    exercised = {operation for (operation, status) in statuses if status != THROTTLED}
    # the token endpoint is called anonymously (no credential to exempt): throttled by
    # address, its own method and the coverage phase's unexpected ones (GET, PUT, TRACE...)
    assert {path for (method, path) in limited} <= {"/api/v1/auth-token/"}
    assert schema_operations(Client()) <= exercised


def test_it_keeps_to_its_schema_under_coverage_and_some_fuzzing_with_real_ids(
    fuzzed_server, tmp_path, real_ids
):
    """Every case of the coverage phase (each parameter's and body field's boundary and
    invalid values) and a few fuzzed ones per operation, on real rows."""
    run, statuses = run_schemathesis(
        fuzzed_server,
        tmp_path,
        real_ids,
        phases="coverage,fuzzing",
        max_examples=SCHEMATHESIS_EXAMPLES,
        extra_config=OPERATOR_WRITES_FUZZED_ONLY,
    )

    assert_every_operation_answered(run, statuses)
    assert_real_ids_reached(statuses, tmp_path / "run.har", real_ids)


@pytest.mark.long
@pytest.mark.timeout(SCHEMATHESIS_LONG_TIMEOUT_SECONDS)
def test_it_keeps_to_its_schema_under_a_full_schemathesis_run_with_real_ids(
    fuzzed_server, tmp_path, real_ids
):
    """The run of issue 42 (its 3,957 cases found the 500s): examples, coverage and
    fuzzing at schemathesis's default 100 examples per operation (about 8,500 requests,
    some 140 s of CPU)."""
    run, statuses = run_schemathesis(
        fuzzed_server,
        tmp_path,
        real_ids,
        phases="examples,coverage,fuzzing",
        max_examples=SCHEMATHESIS_LONG_EXAMPLES,
    )

    assert_every_operation_answered(run, statuses)
    assert_real_ids_reached(statuses, tmp_path / "run.har", real_ids)


def assert_real_ids_reached(
    statuses: Counter[tuple[tuple[str, str], int | str]], har_path: Path, ids: dict[str, list[int]]
) -> None:
    """Each detail GET answered 200 at least once (its real id), and the fuzzing phase
    sent a real cluster and a real snapshot id."""
    answered = {operation for (operation, status) in statuses if status == 200}
    assert {("GET", f"/api/v1/{route}/{{id}}/") for route in PATH_IDS} <= answered
    urls = [entry["request"]["url"] for entry in json.loads(har_path.read_text())["log"]["entries"]]
    for name in ("cluster", "snapshot"):
        sent = {f"{name}={value}&" for value in ids[name]}
        assert any(query in f"{url}&" for url in urls for query in sent), name


@pytest.mark.django_db
def test_the_schema_describes_the_verdict_columns(client):
    """pending-workloads/ rows: GPUs asked for (fractions), each plan's price, pending
    since (nullable date-time) and the evicted pods (strings)."""
    schema = client.get("/api/schema/", {"format": "json"}).json()
    properties = schema["components"]["schemas"]["WorkloadVerdict"]["properties"]
    assert properties["requested_gpus"]["type"] == "number"
    assert properties["naive_cost_per_hour"]["type"] == "number"
    assert properties["joint_cost_per_hour"]["type"] == "number"
    assert properties["pending_since"]["format"] == "date-time"
    assert properties["pending_since"].get("nullable") is True
    assert properties["preempts"] == {
        "type": "array",
        "items": {"type": "string"},
        "readOnly": True,
    }
    assert properties["verdict"] == {"$ref": "#/components/schemas/VerdictEnum"}
    assert "preempts" in schema["components"]["schemas"]["VerdictEnum"]["enum"]


@pytest.mark.django_db
def test_it_documents_the_filters_and_errors_of_the_move_rows(client):
    """moves/rows/ takes the list's filters, so it answers their 400 and 404."""
    schema = client.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/moves/rows/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    assert {"cluster", "evaluation", "latest"} <= names
    assert {"400", "404"} <= set(operation["responses"])
