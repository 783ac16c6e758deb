"""JSON bodies nested too deep are refused before parsing (issue 28 item 8).

Python's JSON decoder recurses once per level: 2,000 ``[`` raised RecursionError, an
anonymous 500 on the token endpoint and every write. Now each operation whose schema
takes ``application/json`` answers 400 naming the limit (capacityweb.api.parsers).
"""

import re

import pytest
from builders import make_reservation

pytestmark = pytest.mark.django_db

DEEP = "[" * 2000 + "]" * 2000
PATH_PARAMETER = re.compile(r"\{[^}]+\}")


def test_it_refuses_json_nested_2000_deep_at_the_token_endpoint_with_400(client):
    response = client.post("/api/v1/auth-token/", DEEP, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - nesting deeper than 64 levels"}


def json_operations(client) -> list[tuple[str, str]]:
    """(method, path pattern) of every operation whose request body may be JSON."""
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]
    return sorted(
        (method, path)
        for path, operations in paths.items()
        for method, operation in operations.items()
        if "application/json" in (operation.get("requestBody") or {}).get("content", {})
    )


def test_it_refuses_json_nested_2000_deep_on_every_json_operation(staff_client, cluster, client):
    from reservations.models import PrometheusSource
    from topology.models import NodeGroup

    ids = {
        "cluster-autoscalers": cluster.id,
        "node-groups": NodeGroup.objects.create(cluster=cluster, name="g", spec={}).id,
        "prometheus-sources": PrometheusSource.objects.create(
            cluster=cluster, url="http://prometheus.example:9090"
        ).id,
        "reservations": make_reservation(cluster, "r", "team-a").id,
        "subscriptions": staff_client.post(
            "/api/v1/subscriptions/",
            {"recipients": "a@example.test", "clusters": [cluster.id]},
            format="json",
        ).json()["id"],
    }
    operations = json_operations(client)
    assert len(operations) == 16  # token, what-if, 4 creates, 5 PUT and 5 PATCH
    answers = {}
    for method, pattern in operations:
        collection = pattern.split("/")[3]
        url = PATH_PARAMETER.sub(str(ids.get(collection, 0)), pattern)
        response = getattr(staff_client, method)(url, DEEP, content_type="application/json")
        answers[(method, pattern)] = (response.status_code, response.json().get("detail"))

    refused = (400, "JSON parse error - nesting deeper than 64 levels")
    assert answers == {operation: refused for operation in operations}


def test_it_reads_brackets_inside_strings_as_text_not_nesting(team_a_client, cluster):
    team = '\\"' + "[" * 100  # in the body: "\\\"[[[...": an escaped quote ends no string
    response = team_a_client.post(
        "/api/v1/subscriptions/",
        {"recipients": "a@example.test", "clusters": [cluster.id], "team": team},
        format="json",
    )

    assert response.status_code == 201
    assert response.json()["team"] == team


def test_it_refuses_a_lone_surrogate_in_a_json_field_with_400(staff_client, cluster):
    """JSON may escape a lone surrogate; Postgres jsonb cannot store it: a 500 at the INSERT
    (found by schemathesis) before the parser refused it."""
    reservation = make_reservation(cluster, "r", "team-a")
    body = '{"spec": {"owner": {"namespaces": ["team-a"]}, "note": "\\udb3f"}}'

    response = staff_client.patch(
        f"/api/v1/reservations/{reservation.id}/", body, content_type="application/json"
    )

    assert response.status_code == 400
    assert "unpaired surrogate" in response.json()["detail"]
