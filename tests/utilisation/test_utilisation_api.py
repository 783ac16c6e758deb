"""The utilisation report and the Prometheus sources over the REST API (figures: stored.py)."""

from __future__ import annotations

import csv
import io

import pytest

from reservations.models import PrometheusSource
from tests.utilisation.stored import stored_report

pytestmark = pytest.mark.django_db
REPORT = "/api/v1/reports/utilisation/"


@pytest.fixture
def client(db):  # type: ignore[no-untyped-def]
    from tests.api.builders import make_user, token_client

    return token_client(make_user("alice", teams=("ml",)))


@pytest.fixture
def staff(db):  # type: ignore[no-untyped-def]
    from tests.api.builders import make_user, token_client

    return token_client(make_user("root", staff=True))


@pytest.fixture
def cluster(db):  # type: ignore[no-untyped-def]
    from topology.models import Cluster

    return Cluster.objects.create(name="prod-gpu", source_kind="files")


def test_it_reports_the_idle_notebook_per_pod(client, cluster) -> None:
    stored_report(cluster)
    rows = client.get(REPORT).json()["rows"]
    notebook = next(row for row in rows if row["pod"] == "notebook")
    assert (notebook["idle_gpu_hours"], notebook["idle_cost"], notebook["currency"]) == (
        2.0,
        20.0,
        "USD",
    )


def test_it_says_unknown_for_a_pod_without_data(client, cluster) -> None:
    stored_report(cluster)
    ghost = next(row for row in client.get(REPORT).json()["rows"] if row["pod"] == "ghost")
    assert (ghost["utilisation"], ghost["activity_mean_percent"]) == ("utilisation unknown", None)


def test_it_states_coverage_per_cluster(client, cluster) -> None:
    stored_report(cluster)
    (summary,) = client.get(REPORT).json()["clusters"]
    assert (summary["coverage"], summary["idle_gpus_now"]) == (
        "2 of 2 GPUs have utilisation data",
        1.0,
    )


def test_it_groups_by_team(client, cluster) -> None:
    stored_report(cluster)
    rows = client.get(REPORT, {"group_by": "team"}).json()["rows"]
    assert [(r["team"], r["pods"], r["pods_unknown"], r["idle_cost"]) for r in rows] == [
        ("ml", 2, 0, 20.0),
        ("web", 1, 1, 0.0),
    ]


def test_it_serves_csv_with_units_and_currency_columns(client, cluster) -> None:
    stored_report(cluster)
    response = client.get(REPORT, {"format": "csv", "group_by": "pod", "team": "ml"})
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["pod"], r["idle_gpu_hours"], r["currency"], r["data_source"]) for r in table] == [
        ("notebook", "2.0", "USD", "prometheus"),
        ("trainer", "0.0", "USD", "prometheus"),
    ]


def test_it_marks_demo_data(client, cluster) -> None:
    stored_report(cluster, source="demo")
    (summary,) = client.get(REPORT).json()["clusters"]
    assert (summary["data_source"], summary["demo"]) == ("demo", True)


def test_it_rejects_an_unknown_grouping(client, cluster) -> None:
    response = client.get(REPORT, {"group_by": "rack"})
    assert response.status_code == 400 and "group_by" in response.json()


def test_it_hides_the_bearer_token(staff, cluster) -> None:
    created = staff.post(
        "/api/v1/prometheus-sources/",
        {"cluster": cluster.pk, "url": "https://prom.example:9090", "bearer_token": "s3cret"},
        format="json",
    )
    body = created.json()
    assert (created.status_code, body["has_bearer_token"], "bearer_token" in body) == (
        201,
        True,
        False,
    )


def test_it_rejects_a_zero_query_timeout(staff, cluster) -> None:
    response = staff.post(
        "/api/v1/prometheus-sources/",
        {"cluster": cluster.pk, "url": "http://prom:9090", "query_timeout_seconds": 0},
        format="json",
    )
    assert response.json() == {
        "query_timeout_seconds": [
            "PrometheusSource: query_timeout_seconds: must be in (0, 300], got 0"
        ]
    }
    assert not PrometheusSource.objects.exists()


def test_it_lets_only_operators_add_a_source(client, cluster) -> None:
    response = client.post(
        "/api/v1/prometheus-sources/",
        {"cluster": cluster.pk, "url": "http://prom:9090"},
        format="json",
    )
    assert response.status_code == 403


def test_it_accepts_an_in_cluster_service_url(staff, cluster) -> None:
    response = staff.post(
        "/api/v1/prometheus-sources/",
        {"cluster": cluster.pk, "url": "http://prometheus:9090"},
        format="json",
    )
    assert response.status_code == 201


def test_it_rejects_a_url_without_a_scheme(staff, cluster) -> None:
    response = staff.post(
        "/api/v1/prometheus-sources/",
        {"cluster": cluster.pk, "url": "prometheus:9090"},
        format="json",
    )
    assert response.json() == {
        "url": ["must be an http:// or https:// URL with a host, got 'prometheus:9090'"]
    }


def test_it_keeps_the_detail_on_the_latest_report_only(client, cluster) -> None:
    from datetime import timedelta

    from tests.utilisation.stored import END

    first = stored_report(cluster)
    stored_report(cluster, end=END + timedelta(hours=2))
    first.refresh_from_db()
    # the older window keeps what the digest sums: its idle pod, 2 GPU-hours, 20.0
    assert (first.result, first.summary["idle_pods"]) == ({}, {"ml/notebook": [2.0, 20.0]})


def test_it_deletes_reports_past_the_retention(cluster, settings) -> None:
    from datetime import timedelta

    from reservations import tasks
    from reservations.models import UtilisationReport
    from tests.utilisation.stored import END

    settings.SNAPSHOT_RETENTION_DAYS = 30
    stored_report(cluster, end=END - timedelta(days=400))  # stored.py's window, long ago
    stored_report(cluster, end=END + timedelta(days=400))  # ends in the future: kept
    tasks.measure_utilisation()  # no Prometheus source: measures nothing, prunes
    assert list(UtilisationReport.objects.values_list("window_end", flat=True)) == [
        END + timedelta(days=400)
    ]
