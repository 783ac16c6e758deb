"""The utilisation page (per team, per pod) and the workload page's utilisation section.

Figures: tests/utilisation/stored.py (ml/notebook idle 2 h = 2 GPU-h, 20.00; ml/trainer
busy at 60 %; web/ghost holds a GPU the exporter never reported).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from reservations.utilisation.services import store_demo_report, store_failure
from tests.utilisation.stored import END, T0, stored_report

pytestmark = pytest.mark.django_db


def page(client: Any, cluster: Any, query: str = "") -> str:
    response = client.get(f"/clusters/{cluster.pk}/utilisation/{query}")
    assert response.status_code == 200
    return response.content.decode()


def table_rows(content: str, table_id: str) -> list[list[str]]:
    table = content.split(f'id="{table_id}"')[1].split("<tbody>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    return [
        [
            re.sub(r"<[^>]+>", "", cell).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        ]
        for row in rows
    ]


def test_it_says_unknown_before_any_measurement(signed_in: Any, cluster: Any) -> None:
    assert "Utilisation unknown: no measurement yet" in page(signed_in, cluster)


def test_it_tables_idle_gpu_hours_and_cost_per_team(signed_in: Any, cluster: Any) -> None:
    stored_report(cluster)
    assert table_rows(page(signed_in, cluster), "utilisation-teams") == [
        ["ml", "2", "0", "30.0", "2.0", "$20.00"],
        ["web", "1", "1", "unknown", "0.0", "$0.00"],
    ]


def test_it_lists_the_most_wasteful_pod_first_and_unknown_as_unknown(
    signed_in: Any, cluster: Any
) -> None:
    stored_report(cluster)
    rows = table_rows(page(signed_in, cluster), "utilisation-pods")
    assert [row[0] for row in rows] == ["ml/notebook", "ml/trainer", "web/ghost"]
    assert rows[2][2] == "utilisation unknown"


def test_it_states_the_coverage(signed_in: Any, cluster: Any) -> None:
    stored_report(cluster)
    assert '<span id="utilisation-coverage">2 of 2 GPUs have utilisation data</span>' in page(
        signed_in, cluster
    )


def test_it_keeps_one_team(signed_in: Any, cluster: Any) -> None:
    stored_report(cluster)
    rows = table_rows(page(signed_in, cluster, "?team=web"), "utilisation-pods")
    assert [row[0] for row in rows] == ["web/ghost"]


def test_it_says_why_the_latest_measurement_failed(signed_in: Any, cluster: Any) -> None:
    store_failure(cluster=cluster, start=T0, end=END, now=END, error="HTTP 503: overloaded")
    assert "failed: HTTP 503: overloaded" in page(signed_in, cluster)


def test_it_marks_the_demos_series_as_demo_data(signed_in: Any, topology_evaluation: Any) -> None:
    cluster = topology_evaluation.cluster
    store_demo_report(cluster=cluster, now=datetime(2026, 3, 1, 12, tzinfo=UTC))
    assert "<strong>Demo data</strong>: these series are generated" in page(signed_in, cluster)


def test_the_workload_page_says_unknown_without_a_measurement(
    signed_in: Any, topology_evaluation: Any
) -> None:
    url = f"/clusters/{topology_evaluation.cluster_id}/workloads/ml/train/"
    content = signed_in.get(url).content.decode()
    assert "Utilisation unknown: the cluster has no utilisation measurement" in content


def test_the_workload_page_says_a_pending_gang_holds_no_gpu(
    signed_in: Any, topology_evaluation: Any
) -> None:
    cluster = topology_evaluation.cluster
    store_demo_report(cluster=cluster, now=datetime(2026, 3, 1, 12, tzinfo=UTC))
    content = signed_in.get(f"/clusters/{cluster.pk}/workloads/ml/train/").content.decode()
    assert "None of its pods holds a GPU in the latest window." in content


def test_it_places_the_utilisation_layer_with_its_legend(signed_in: Any, cluster: Any) -> None:
    stored_report(cluster)
    content = page(signed_in, cluster)
    assert 'id="utilisation-layer-data"' in content and "grey = utilisation unknown" in content


def test_the_workload_page_reads_two_queries_of_utilisation_not_the_detail(
    signed_in: Any, topology_evaluation: Any, django_assert_num_queries: Any
) -> None:
    cluster = topology_evaluation.cluster
    store_demo_report(cluster=cluster, now=datetime(2026, 3, 1, 12, tzinfo=UTC))
    url = f"/clusters/{cluster.pk}/workloads/ml/train/"
    assert signed_in.get(url).status_code == 200  # the breakdown is worked out and kept
    with django_assert_num_queries(11):  # the page's 9 (move report incl.), the report, its pods
        assert signed_in.get(url).status_code == 200
