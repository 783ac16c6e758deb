"""Waiting per team (issue 34): two evaluations of tests/scenarios/reservation-idle-nodes.yaml
one hour apart (12:00 and 13:00; the second adds a CPU-only node so the snapshot differs).
team-a/finetune asks for 8 GPUs and is pending in both: pending_since 12:00."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.web.fixtures import TAKEN_AT, ingest_and_evaluate, scenario_objects

CPU_NODE = (
    "cpu-node",
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "cpu-1", "labels": {"pool": "cpu"}},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
    },
)


@pytest.fixture
def two_evaluations(cluster: Any) -> Any:
    ingest_and_evaluate(cluster, scenario_objects("reservation-idle-nodes"))
    later = TAKEN_AT + timedelta(hours=1)
    objects = [*scenario_objects("reservation-idle-nodes"), CPU_NODE]
    return ingest_and_evaluate(cluster, objects, taken_at=later)


def team_rows(signed_in: Any, cluster_id: int, hours: int = 2) -> dict[str, Any]:
    start, end = TAKEN_AT, TAKEN_AT + timedelta(hours=hours)
    query = f"cluster={cluster_id}&start={start.isoformat()}&end={end.isoformat()}"
    response = signed_in.get(f"/api/v1/team-waiting/?{query.replace('+', '%2B')}")
    assert response.status_code == 200, response.content
    return {row["namespace"]: row for row in response.json()}


def test_it_integrates_the_gpus_a_team_waits_for_over_the_period(
    signed_in: Any, two_evaluations: Any
) -> None:
    """8 GPUs from 12:00 to 13:00, then 8 until the period ends at 14:00: 16 GPU-hours."""
    rows = team_rows(signed_in, two_evaluations.cluster_id)
    assert rows["team-a"]["waiting_gpu_hours"] == 16.0


def test_it_measures_the_wait_from_pending_since_to_the_last_listing(
    signed_in: Any, two_evaluations: Any
) -> None:
    rows = team_rows(signed_in, two_evaluations.cluster_id)
    assert (rows["team-a"]["wait_p50_hours"], rows["team-a"]["wait_p95_hours"]) == (1.0, 1.0)


def test_it_counts_each_workload_once_per_team(signed_in: Any, two_evaluations: Any) -> None:
    assert team_rows(signed_in, two_evaluations.cluster_id)["team-a"]["workloads"] == 1


def test_it_answers_400_for_a_date_that_is_not_one(signed_in: Any, two_evaluations: Any) -> None:
    url = f"/api/v1/team-waiting/?cluster={two_evaluations.cluster_id}&start=yesterday"
    response = signed_in.get(url)
    assert response.status_code == 400
    assert list(response.json()) == ["start"]


def test_it_renders_the_teams_page_in_seven_queries(
    signed_in: Any, two_evaluations: Any, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(7):  # user, cluster_page's 4, evaluation times, verdicts
        response = signed_in.get(f"/clusters/{two_evaluations.cluster_id}/teams/?range=30d")
    assert response.status_code == 200


def test_it_links_the_teams_page_from_the_overview(signed_in: Any, two_evaluations: Any) -> None:
    content = signed_in.get("/").content.decode()
    assert f'href="/clusters/{two_evaluations.cluster_id}/teams/"' in content
