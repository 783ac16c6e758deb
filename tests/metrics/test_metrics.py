"""``/metrics`` scraped with Prometheus' own parser, against figures worked out by hand
in the scenarios' expected files (tests/scenarios/*.expected.yaml)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REPO_ROOT
from tests.web.fixtures import TAKEN_AT, ingest_and_evaluate, make_cluster, scenario_objects

GRAFANA_DASHBOARD = REPO_ROOT / "deploy" / "grafana" / "capacityweb.json"


@pytest.fixture
def clusters(db: None) -> dict[str, Any]:
    """``block``: topology-block (32 GPUs, 16 allocated; one gang runs after a scale-up, the
    naive autoscaler strands 160/h: class topology). ``reserve``: reservation-idle-nodes
    (16 GPUs, 8 allocated, 8 idle reserved at 20/h; one pod uses the reservation: class
    reservation). ``new``: no snapshot yet."""
    block = ingest_and_evaluate(make_cluster("block"), scenario_objects("topology-block"))
    reserve = ingest_and_evaluate(
        make_cluster("reserve"), scenario_objects("reservation-idle-nodes")
    )
    make_cluster("new")
    return {"block": block, "reserve": reserve}


def scrape(client: Any, **extra: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def test_it_reports_each_clusters_gpus_from_its_latest_evaluation(
    client: Any, clusters: dict[str, Any]
) -> None:
    samples = scrape(client)
    assert value(samples, "capacityweb_gpus", cluster="block") == 32
    assert value(samples, "capacityweb_gpus_allocated", cluster="block") == 16
    assert value(samples, "capacityweb_gpus_idle_reserved", cluster="block") == 0
    assert value(samples, "capacityweb_gpus_stranded", cluster="block") == 16
    assert value(samples, "capacityweb_gpus", cluster="reserve") == 16
    assert value(samples, "capacityweb_gpus_allocated", cluster="reserve") == 8
    assert value(samples, "capacityweb_gpus_idle_reserved", cluster="reserve") == 8


def test_it_reports_waste_and_idle_reservations_per_hour_in_the_currency(
    client: Any, clusters: dict[str, Any], settings: Any
) -> None:
    settings.CURRENCY = "EUR"
    samples = scrape(client)
    block, reserve = (
        {"cluster": "block", "currency": "EUR"},
        {"cluster": "reserve", "currency": "EUR"},
    )
    assert value(samples, "capacityweb_stranded_cost_per_hour", **block) == 160.0
    assert value(samples, "capacityweb_idle_reserved_cost_per_hour", **block) == 0.0
    assert value(samples, "capacityweb_stranded_cost_per_hour", **reserve) == 0.0
    assert value(samples, "capacityweb_idle_reserved_cost_per_hour", **reserve) == 20.0


def test_it_counts_pending_workloads_by_verdict_and_by_disagreement_class(
    client: Any, clusters: dict[str, Any]
) -> None:
    samples = scrape(client)
    pending = "capacityweb_pending_workloads"
    assert value(samples, pending, cluster="block", verdict="runs_after_scale_up") == 1
    assert value(samples, pending, cluster="block", verdict="uses_reservation") == 0
    assert value(samples, pending, cluster="reserve", verdict="uses_reservation") == 1
    assert value(samples, pending, cluster="reserve", verdict="blocked") == 0
    disagreeing = "capacityweb_pending_workloads_disagreeing"
    assert value(samples, disagreeing, cluster="block", **{"class": "topology"}) == 1
    assert value(samples, disagreeing, cluster="block", **{"class": "reservation"}) == 0
    # reservation-idle-nodes.expected.yaml: CA's template from the tainted member r1 refuses
    # the pod, so CA buys nothing while it cannot run: never-scales, not reservation
    assert value(samples, disagreeing, cluster="reserve", **{"class": "reservation"}) == 0
    assert value(samples, disagreeing, cluster="reserve", **{"class": "never-scales"}) == 1


def test_it_reports_ages_and_durations_of_ingest_and_evaluation(
    client: Any, clusters: dict[str, Any]
) -> None:
    before = timezone.now()
    samples = scrape(client)
    after = timezone.now()
    evaluation = clusters["block"]
    snapshot = evaluation.snapshot
    age = value(samples, "capacityweb_snapshot_age_seconds", cluster="block")
    assert (before - TAKEN_AT).total_seconds() <= age <= (after - TAKEN_AT).total_seconds()
    assert value(samples, "capacityweb_ingest_duration_seconds", cluster="block") == (
        pytest.approx((snapshot.created_at - snapshot.taken_at).total_seconds())
    )
    evaluation_age = value(samples, "capacityweb_evaluation_age_seconds", cluster="block")
    assert (before - evaluation.stored_at).total_seconds() <= evaluation_age
    assert evaluation_age <= (after - evaluation.stored_at).total_seconds()
    duration = value(samples, "capacityweb_evaluation_duration_seconds", cluster="block")
    assert duration == pytest.approx((evaluation.created_at - snapshot.created_at).total_seconds())
    assert 0 <= duration < 60


def test_a_cluster_without_a_snapshot_reports_no_figure_rather_than_zero(
    client: Any, clusters: dict[str, Any]
) -> None:
    samples = scrape(client)
    assert not [key for key in samples if ("cluster", "new") in key[1]]


def test_it_serves_loopback_and_refuses_other_addresses_by_default(
    client: Any, clusters: dict[str, Any]
) -> None:
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403
    forwarded = client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert forwarded.status_code == 403


def test_it_serves_a_configured_network(
    client: Any, clusters: dict[str, Any], settings: Any
) -> None:
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.1").status_code == 403


def test_it_serves_anyone_with_the_bearer_token_and_no_one_with_another(
    client: Any, clusters: dict[str, Any], settings: Any
) -> None:
    settings.METRICS_TOKEN = "scrape-token-1"
    remote = {"REMOTE_ADDR": "10.1.2.3"}
    good = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-token-1", **remote)
    assert good.status_code == 200
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-token-2", **remote)
    assert wrong.status_code == 401
    assert wrong["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", **remote).status_code == 401


def test_the_scrape_takes_a_bounded_number_of_queries(
    client: Any, clusters: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    # 5 for the evaluated figures, 1 for the latest utilisation reports, 1 for the
    # latest evaluations' move reports
    with django_assert_max_num_queries(7):
        client.get("/metrics")


def grafana_metric_names() -> set[str]:
    dashboard = json.loads(GRAFANA_DASHBOARD.read_text())
    expressions = [
        target["expr"]
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
        if "expr" in target
    ]
    assert expressions, "the dashboard has no Prometheus query"
    return {name for expr in expressions for name in re.findall(r"\bcapacityweb_\w+", expr)}


def test_every_metric_the_grafana_dashboard_queries_is_served(
    client: Any, clusters: dict[str, Any]
) -> None:
    served = {name for name, _labels in scrape(client)}
    missing = grafana_metric_names() - served
    assert not missing, f"deploy/grafana/capacityweb.json queries unknown metrics: {missing}"
