"""The OpenAPI schema is valid, and the live API keeps to it under schemathesis.

The schemathesis run targets only the live server pytest-django starts on
127.0.0.1 and ends by example count (``--max-examples`` per operation and phase,
a fixed seed): with ``--max-time`` its fuzzing phase repeats until the time is
spent. It runs as a user exempt from throttling (THROTTLE_EXEMPT_USERNAMES), or
most requests to the throttled operations would be 429s that exercise nothing (the token
endpoint, called without a credential, keeps its rate per address).

It runs every check (``--checks all``) with tests/api/schemathesis.toml: the fuzzer's
token goes through the schema's tokenAuth scheme, and bodies with rules beyond JSON
Schema may answer 400 to schema-valid data (the file says why).
The fuzzer's webhook hosts are resolved by a stand-in that resolves none (the guard
answers 400): the suite looks up no name beyond this machine (tests/conftest.py).
The rates are lowered below the examples per operation, so that a broken exemption
shows as 429s on any machine, fast or slow; the HAR report must show every
operation answered, none with 429.
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
from builders import make_reservation, make_user, token_client

from tests.conftest import is_local_host

SCHEMATHESIS_CHECKS = "all"
SCHEMATHESIS_EXAMPLES = 10  # per operation and phase: ~310 requests
LOW_RATES = {"writes": "3/minute", "reports": "3/minute", "test-sends": "3/minute"}
SCHEMATHESIS_TIMEOUT_SECONDS = 600  # a hang guard only: the run ends by example count
EXCLUDED_PATHS = "test-email|test-webhook|ingest"
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


def test_it_keeps_to_its_schema_under_a_bounded_schemathesis_run(
    live_server, tmp_path, settings, client, monkeypatch
):
    from rest_framework.throttling import SimpleRateThrottle

    from topology.models import Cluster

    cluster = Cluster.objects.create(name="prod-gpu", source_kind="files")
    make_reservation(cluster, "a-h100", "team-a")
    user = make_user("fuzzer", teams=("team-a",))
    token_client(user)
    settings.THROTTLE_EXEMPT_USERNAMES = ["fuzzer"]
    # DRF binds the rates to the class when it is imported: the settings fixture cannot.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", LOW_RATES)
    monkeypatch.setattr(socket, "getaddrinfo", resolving_no_outside_name(socket.getaddrinfo))
    har_path = tmp_path / "run.har"
    schemathesis = Path(sys.executable).with_name("schemathesis")
    arguments = [str(schemathesis), "--config-file", str(SCHEMATHESIS_CONFIG), "run"]
    arguments += [f"{live_server.url}/api/schema/?format=json"]
    arguments += ["--checks", SCHEMATHESIS_CHECKS, "--seed", "1"]
    arguments += ["--max-examples", str(SCHEMATHESIS_EXAMPLES)]
    arguments += ["--phases", "examples,fuzzing", "--workers", "1", "--no-shrink"]
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
            "CAPACITYWEB_FUZZER_TOKEN": user.auth_token.key,
        },
    )

    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    operations = schema_operations(client)
    entries = json.loads(har_path.read_text())["log"]["entries"]
    statuses = Counter(
        (
            operation_of(entry["request"]["method"], entry["request"]["url"], operations),
            entry["response"]["status"],
        )
        for entry in entries
    )
    throttled = {operation for (operation, status) in statuses if status == 429}
    exercised = {operation for (operation, status) in statuses if status != 429}
    # the token endpoint is called anonymously (no credential to exempt): throttled by address
    assert throttled <= {("POST", "/api/v1/auth-token/")}
    assert exercised == operations


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
