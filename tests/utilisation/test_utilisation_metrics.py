"""/metrics gauges of allocated-but-idle GPUs (figures: stored.py, Prometheus' own parser)."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from reservations.utilisation.services import store_failure
from tests.utilisation.stored import END, T0, stored_report

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster(db):  # type: ignore[no-untyped-def]
    from topology.models import Cluster

    return Cluster.objects.create(name="prod-gpu", source_kind="files")


def gauges(client: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = client.get("/metrics").content.decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if "utilisation" in sample.name or "allocated_idle" in sample.name
    }


def test_it_exports_the_idle_gpus_and_their_cost_per_hour(client: Any, cluster: Any) -> None:
    stored_report(cluster)
    scraped = gauges(client)
    labels = (("cluster", "prod-gpu"), ("source", "prometheus"))
    # the notebook's GPU: idle for the whole 2 h window, 10 per GPU-hour
    assert (
        scraped[("capacityweb_gpus_allocated_idle", labels)],
        scraped[
            (
                "capacityweb_allocated_idle_cost_per_hour",
                (("cluster", "prod-gpu"), ("currency", "USD"), ("source", "prometheus")),
            )
        ],
        scraped[("capacityweb_gpus_utilisation_measured", labels)],
        scraped[("capacityweb_gpus_utilisation_total", labels)],
    ) == (1.0, 10.0, 2.0, 2.0)


def test_it_exports_no_figure_when_the_measurement_failed(client: Any, cluster: Any) -> None:
    store_failure(cluster=cluster, start=T0, end=END, now=END, error="connection refused")
    assert [name for name, _ in gauges(client)] == ["capacityweb_utilisation_age_seconds"]
