"""Live cluster pages show the latest *evaluated* snapshot while a newer one is evaluated."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.web.fixtures import TAKEN_AT, gpu_node, scenario_objects

pytestmark = pytest.mark.django_db

PAGES = ("topology", "pending", "reservations", "recommendations")


@pytest.fixture
def newer_snapshot(evaluation: Any) -> Any:
    """A snapshot ingested after ``evaluation``'s, whose evaluation has not been stored."""
    from topology import services

    objects = scenario_objects("reservation-idle-nodes") + [gpu_node("late-1", 4)]
    snapshot = services.ingest_snapshot(
        cluster=evaluation.snapshot.cluster,
        taken_at=TAKEN_AT + timedelta(minutes=1),
        objects=objects,
    )
    from recommender.models import Evaluation

    assert snapshot is not None
    assert not Evaluation.objects.filter(snapshot=snapshot).exists()
    return snapshot


@pytest.mark.parametrize("page", PAGES)
def test_it_shows_the_evaluated_snapshot_and_names_the_newer_one(
    signed_in: Any, evaluation: Any, newer_snapshot: Any, page: str
) -> None:
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/{page}/").content.decode()
    assert "has not been evaluated yet" not in content
    assert f'data-evaluation="{evaluation.id}"' in content
    assert f"Newer snapshot #{newer_snapshot.id}" in content
    assert f"this page shows #{evaluation.snapshot_id}" in content


def test_it_still_lists_the_pending_workloads_of_the_evaluated_snapshot(
    signed_in: Any, evaluation: Any, newer_snapshot: Any
) -> None:
    workload = evaluation.verdicts.first().workload
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/pending/").content.decode()
    assert f'data-workload="{workload}"' in content


def test_it_says_nothing_of_a_newer_snapshot_when_the_latest_is_evaluated(
    signed_in: Any, evaluation: Any
) -> None:
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/pending/").content.decode()
    assert "Newer snapshot" not in content
    assert 'id="newer-snapshot"' in content  # the region the live update refreshes


def test_it_shows_the_unevaluated_snapshot_when_asked_for_by_id(
    signed_in: Any, evaluation: Any, newer_snapshot: Any
) -> None:
    url = f"/clusters/{evaluation.cluster_id}/pending/?snapshot={newer_snapshot.id}"
    content = signed_in.get(url).content.decode()
    assert f"Snapshot #{newer_snapshot.id} has not been evaluated yet" in content


def test_the_heatmap_data_is_the_evaluated_snapshots(
    signed_in: Any, evaluation: Any, newer_snapshot: Any
) -> None:
    response = signed_in.get(f"/clusters/{evaluation.cluster_id}/topology/data.json")
    assert response.status_code == 200
    assert response["ETag"]  # served from an evaluation, not the empty not-evaluated view


def test_the_overview_keeps_the_evaluated_figures_and_names_the_newer_snapshot(
    signed_in: Any, evaluation: Any, newer_snapshot: Any
) -> None:
    content = signed_in.get("/").content.decode()
    assert f'data-counter="gpus">{evaluation.result["cluster"]["gpus"]}<' in content
    assert f"Newer snapshot #{newer_snapshot.id} is being evaluated" in content
    assert f"figures of snapshot #{evaluation.snapshot_id}" in content
