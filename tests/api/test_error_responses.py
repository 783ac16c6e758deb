"""What the API answers when a request cannot be served, and that the schema says so
(issue 28 item 12)."""

from urllib.parse import urlencode

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/nodes/?cluster=999999",
        "/api/v1/pending-workloads/?cluster=999999",
        "/api/v1/reservations/?cluster=999999",
        "/api/v1/snapshots/?cluster=999999",
        "/api/v1/reports/idle-reservations/?cluster=999999",
    ],
)
def test_it_answers_404_for_an_unknown_cluster_id(team_a_client, url):
    response = team_a_client.get(url)

    assert response.status_code == 404
    assert response.json() == {"detail": "cluster 999999: no such object"}


def test_it_answers_400_for_a_cluster_parameter_that_is_not_an_id(team_a_client):
    response = team_a_client.get("/api/v1/nodes/", {"cluster": "prod"})

    assert response.status_code == 400
    assert response.json() == {"cluster": ["'prod': not an id"]}


def test_it_refuses_a_boolean_parameter_that_is_neither_true_nor_false(team_a_client):
    response = team_a_client.get("/api/v1/clusters/", {"enabled": "maybe"})

    assert response.status_code == 400
    assert response.json() == {"enabled": ["'maybe': true or false"]}


@pytest.mark.parametrize(
    ("url", "parameter", "refusal"),
    [
        ("/api/v1/clusters/", "enabled", "'%s': true or false"),
        ("/api/v1/nodes/", "cluster", "'%s': not an id"),
    ],
)
def test_it_refuses_a_parameter_holding_a_format_placeholder_with_400(
    team_a_client, url, parameter, refusal
):
    response = team_a_client.get(url, {parameter: "%s"})

    assert response.status_code == 400
    assert response.json() == {parameter: [refusal]}


def test_it_refuses_a_page_size_out_of_range(team_a_client):
    response = team_a_client.get("/api/v1/clusters/", {"page_size": "0"})

    assert response.status_code == 400
    assert response.json() == {"page_size": ["'0': a whole number from 1 to 500"]}


@pytest.mark.parametrize(
    "page_size",
    [
        "\u00b2",  # superscript two: str.isdigit() holds, int() refuses it
        "\u0663",  # Arabic-Indic three: int() reads it as 3, the schema's integer does not
        "1" * 5000,  # past int()'s 4,300 digits
    ],
)
def test_it_refuses_a_page_size_of_digits_that_are_not_ascii_or_too_many(team_a_client, page_size):
    response = team_a_client.get("/api/v1/subscriptions/", {"page_size": page_size})

    assert response.status_code == 400
    assert list(response.json()) == ["page_size"]


def test_it_reads_the_last_of_several_page_sizes_as_djangos_query_dict_does(team_a_client):
    response = team_a_client.get("/api/v1/subscriptions/", {"page_size": ["\u00b2", "false"]})

    assert response.status_code == 400
    assert response.json() == {"page_size": ["'false': a whole number from 1 to 500"]}


def test_it_answers_json_404_for_an_api_path_no_route_matches(team_a_client, settings):
    settings.DEBUG = False

    response = team_a_client.get("/api/v1/reservations/1/2/")

    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_it_answers_415_to_a_reservation_written_as_form_data(team_a_client, cluster):
    response = team_a_client.post(
        "/api/v1/reservations/", {"cluster": cluster.id, "name": "r"}, format="multipart"
    )

    assert response.status_code == 415


def test_the_schema_declares_the_error_responses_of_each_operation(client):
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]

    def codes(path, method):
        return sorted(code for code in paths[path][method]["responses"] if code >= "400")

    assert codes("/api/v1/auth-token/", "post") == ["400", "415", "429"]
    assert codes("/api/v1/clusters/", "get") == ["400", "403", "404"]
    assert codes("/api/v1/clusters/{id}/", "get") == ["403", "404"]
    assert codes("/api/v1/reservations/{id}/", "patch") == ["400", "403", "404", "415", "429"]
    assert codes("/api/v1/node-groups/{id}/", "delete") == ["403", "404", "429"]
    assert codes("/api/v1/reports/waste/", "get") == ["400", "403", "404", "429"]
    assert codes("/api/v1/subscriptions/{id}/test-email/", "post") == ["403", "404", "429", "503"]
    assert codes("/api/v1/subscriptions/{id}/test-webhook/", "post") == [
        "400",
        "403",
        "404",
        "429",
        "502",
    ]


def schema_operation(client, path, method="get"):
    return client.get("/api/schema/", {"format": "json"}).json()["paths"][path][method]


def test_a_csv_operation_documents_its_errors_in_csv_as_it_answers_them(team_a_client, client):
    """DRF picks the renderer before the view runs, so a refusal of ``?format=csv`` is CSV
    (``field,message``); the schema listed only JSON for the errors (schemathesis's
    coverage phase: "Undocumented Content-Type" on moves/rows/)."""
    response = team_a_client.get("/api/v1/moves/rows/", {"format": "csv", "cluster": 999999})

    assert (response.status_code, response["Content-Type"]) == (404, "text/csv; charset=utf-8")
    assert response.content == b"field,message\r\ndetail,cluster 999999: no such object\r\n"
    responses = schema_operation(client, "/api/v1/moves/rows/")["responses"]
    for code in ("400", "403", "404"):
        assert set(responses[code]["content"]) == {"application/json", "text/csv", "text/html"}


@pytest.mark.parametrize(
    "path", ["/api/v1/reports/idle-reservations/", "/api/v1/reports/waste/", "/api/v1/moves/rows/"]
)
def test_it_answers_each_format_as_drf_negotiates_it_and_the_schema_says_so(
    team_a_client, client, path
):
    """DRF's DefaultContentNegotiation: a format no renderer has is a 404, an empty one is
    none given, ``api`` the browsable API (HTML). The schema's enum listed csv and json
    only, so ``format=`` and ``format=api`` were "schema-violating requests accepted"."""
    answers = {
        value: team_a_client.get(path, {"format": value})
        for value in ("api", "csv", "json", "", "xml")
    }

    media_types = {
        value: (response.status_code, response["Content-Type"].split(";")[0])
        for value, response in answers.items()
    }
    assert media_types == {
        "api": (200, "text/html"),
        "csv": (200, "text/csv"),
        "json": (200, "application/json"),
        "": (200, "application/json"),
        "xml": (404, "application/json"),
    }
    operation = schema_operation(client, path)
    [parameter] = [p for p in operation["parameters"] if p["name"] == "format"]
    assert (parameter["schema"]["enum"], parameter.get("allowEmptyValue")) == (
        ["api", "csv", "json"],
        True,
    )
    assert "404" in operation["responses"]
    assert set(operation["responses"]["200"]["content"]) == {
        "application/json",
        "text/csv",
        "text/html",
    }


@pytest.mark.parametrize("query", [{"name": "\x00"}, {"name": "other"}, {"cluster": "x"}])
def test_a_detail_route_reads_no_list_filter(team_a_client, client, cluster, query):
    """DRF's get_object filters the queryset with the list's filters: ``?name=<NUL>`` on
    ``reservations/{id}/`` was a 400 its schema does not list (it lists no query parameter),
    ``?name=other`` a 404 for a row the caller sees (schemathesis's coverage phase)."""
    from builders import make_reservation

    reservation = make_reservation(cluster, "a-h100", "team-a")
    url = f"/api/v1/reservations/{reservation.id}/"

    read = team_a_client.get(url, query)
    patched = team_a_client.patch(f"{url}?{urlencode(query)}", {}, format="json")

    assert (read.status_code, read.json()["name"]) == (200, "a-h100")
    assert (patched.status_code, patched.json()["name"]) == (200, "a-h100")
    operation = schema_operation(client, "/api/v1/reservations/{id}/")
    assert [p["name"] for p in operation["parameters"] if p["in"] == "query"] == []
    assert "400" not in operation["responses"]


def test_the_list_still_refuses_a_nul_in_its_filter_with_the_documented_400(
    team_a_client, client, cluster
):
    response = team_a_client.get("/api/v1/reservations/", {"name": "\x00"})

    assert (response.status_code, response.json()) == (
        400,
        {"name": ["Null characters are not allowed."]},
    )
    assert "400" in schema_operation(client, "/api/v1/reservations/")["responses"]


def test_it_reads_an_empty_optional_parameter_as_not_given_as_the_schema_says(staff_client, client):
    """Each optional query parameter of each list, given empty: 200, and the schema says
    ``allowEmptyValue`` (django-filter skips a value in EMPTY_VALUES; DRF reads ``page=``
    and ``format=`` as none). Schemathesis's coverage phase sent ``taken_before=`` to
    evaluations/ and snapshots/ as "schema-violating" (not a date-time) and it was
    accepted. ``page_size=`` is a 400, and the schema admits no empty value there."""
    from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects

    evaluation = ingest_and_evaluate(make_cluster(), scenario_objects("reservation-idle-nodes"))
    required = {"cluster": evaluation.cluster_id}  # queue-usage/ and team-waiting/ need one
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]
    answers, documented = {}, {}
    for path, operations in paths.items():
        parameters = operations.get("get", {}).get("parameters", [])
        if "{" in path:
            continue  # a detail: no query parameter
        needed = {p["name"]: required[p["name"]] for p in parameters if p.get("required")}
        for parameter in parameters:
            if parameter["in"] == "query" and not parameter.get("required"):
                query = {**needed, parameter["name"]: ""}
                answers[path, parameter["name"]] = staff_client.get(path, query).status_code
                documented[path, parameter["name"]] = parameter.get("allowEmptyValue", False)

    assert ("/api/v1/evaluations/", "taken_before") in answers
    assert answers == {key: 400 if key[1] == "page_size" else 200 for key in answers}
    assert documented == {key: key[1] != "page_size" for key in documented}
