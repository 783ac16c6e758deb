"""The OpenAPI schema is valid, and the live API keeps to it under schemathesis.

The schemathesis run is bounded (examples per operation, a fixed seed, a time
budget) and targets only the live server pytest-django starts on 127.0.0.1.
"""

import subprocess
import sys
from pathlib import Path

import pytest
from builders import make_reservation, make_user, token_client

SCHEMATHESIS_CHECKS = "not_a_server_error,response_schema_conformance,content_type_conformance"
SCHEMATHESIS_MAX_SECONDS = 150


@pytest.mark.django_db
def test_it_serves_a_valid_openapi_schema(client):
    from openapi_spec_validator import validate

    response = client.get("/api/schema/", {"format": "json"})

    schema = response.json()
    validate(schema)
    assert "/api/v1/reports/idle-reservations/" in schema["paths"]


def test_it_keeps_to_its_schema_under_a_bounded_schemathesis_run(live_server, tmp_path):
    from topology.models import Cluster

    cluster = Cluster.objects.create(name="prod-gpu", source_kind="files")
    make_reservation(cluster, "a-h100", "team-a")
    user = make_user("fuzzer", teams=("team-a",))
    token_client(user)
    schemathesis = Path(sys.executable).with_name("schemathesis")
    arguments = [str(schemathesis), "run", f"{live_server.url}/api/schema/?format=json"]
    arguments += ["--header", f"Authorization: Token {user.auth_token.key}"]
    arguments += ["--checks", SCHEMATHESIS_CHECKS, "--max-examples", "3", "--seed", "1"]
    arguments += ["--phases", "examples,fuzzing", "--workers", "1"]
    arguments += ["--max-time", str(SCHEMATHESIS_MAX_SECONDS), "--no-shrink"]
    arguments += ["--exclude-path-regex", "test-email|ingest"]

    run = subprocess.run(
        arguments,
        capture_output=True,
        text=True,
        timeout=SCHEMATHESIS_MAX_SECONDS + 60,
        cwd=tmp_path,
    )

    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
