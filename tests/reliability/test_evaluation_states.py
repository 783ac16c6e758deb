"""Issue 27 items 3-4 (and issue 28's time limit): no snapshot left "being evaluated" for good.

- Coalescing: of a cluster's waiting snapshots only the newest is evaluated; the
  older ones are marked skipped, which their pages and the snapshot picker say.
- Time limit: an evaluation past EVALUATION_SOFT_TIME_LIMIT_SECONDS stops and is
  recorded as failed with the reason, shown on the live page instead of the
  "being evaluated" note.
- An ingest that finds nothing new evaluates the latest snapshot if it has none
  (the evaluation task lost, or failed on a database that was down).
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.embedded_server import gpu_cluster_objects, write_cluster
from tests.web.fixtures import TAKEN_AT, gpu_node, make_cluster, scenario_objects

WORKER_WAIT_SECONDS = 60


def ingest(cluster: Any, objects: list[Any], minutes: int) -> Any:
    from topology import services

    taken_at = TAKEN_AT + timedelta(minutes=minutes)
    snapshot = services.ingest_snapshot(cluster=cluster, taken_at=taken_at, objects=objects)
    assert snapshot is not None
    return snapshot


def large_objects() -> list[Any]:
    """300 nodes and 20 pending pods: an evaluation of well over 50 ms."""
    return [("test", item) for item in gpu_cluster_objects(nodes=300, pending=20, tag="t")["items"]]


@pytest.fixture
def waiting(db: None) -> dict[str, Any]:
    """Three snapshots of one cluster ingested a minute apart, none evaluated yet."""
    cluster = make_cluster("coalesce")
    base = scenario_objects("reservation-idle-nodes")
    snapshots = [ingest(cluster, [*base, gpu_node(f"extra-{n}", 4)], minutes=n) for n in range(3)]
    return {"cluster": cluster, "snapshots": snapshots}


@pytest.fixture
def signed_in(client: Any, db: None) -> Any:
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("viewer", password="viewer-password-1"))
    return client


def test_it_evaluates_only_the_newest_of_the_waiting_snapshots(waiting: dict[str, Any]) -> None:
    from recommender.models import Evaluation
    from recommender.tasks import evaluate_snapshot

    for snapshot in waiting["snapshots"]:  # the tasks, in the order the ingests queued them
        evaluate_snapshot(snapshot.pk)
    newest = waiting["snapshots"][-1]
    assert list(Evaluation.objects.values_list("snapshot_id", flat=True)) == [newest.pk]


def test_it_marks_the_older_waiting_snapshots_skipped_naming_the_newer(
    waiting: dict[str, Any],
) -> None:
    from recommender.tasks import evaluate_snapshot
    from topology.models import Snapshot

    first, second, newest = waiting["snapshots"]
    evaluate_snapshot(first.pk)
    evaluate_snapshot(second.pk)
    states = dict(Snapshot.objects.values_list("id", "evaluation_state"))
    assert states == {first.pk: "skipped", second.pk: "skipped", newest.pk: ""}
    assert (
        f"newer snapshot #{newest.pk} was waiting"
        in Snapshot.objects.get(pk=first.pk).evaluation_note
    )


def test_it_shows_a_skipped_snapshot_as_skipped_in_the_history(
    waiting: dict[str, Any], signed_in: Any
) -> None:
    from recommender.tasks import evaluate_snapshot

    first, _second, newest = waiting["snapshots"]
    evaluate_snapshot(first.pk)
    evaluate_snapshot(newest.pk)
    cluster_id = waiting["cluster"].pk
    page = signed_in.get(f"/clusters/{cluster_id}/pending/?snapshot={first.pk}")
    text = page.content.decode()
    assert page.status_code == 200
    assert f"Snapshot #{first.pk} was not evaluated: skipped: newer snapshot #{newest.pk}" in text
    assert "UTC · skipped</option>" in text
    assert "has not been evaluated yet" not in text


def test_it_still_evaluates_a_snapshot_whose_newer_one_is_already_evaluated(
    waiting: dict[str, Any],
) -> None:
    # clock skew: the older snapshot's task comes last; nothing newer waits, so it is kept
    from recommender.models import Evaluation
    from recommender.tasks import evaluate_snapshot

    _first, second, newest = waiting["snapshots"]
    evaluate_snapshot(newest.pk)
    evaluate_snapshot(second.pk)
    assert Evaluation.objects.filter(snapshot_id=second.pk).exists()


def test_it_records_an_evaluation_past_its_time_limit_as_failed_with_the_reason(
    db: None, settings: Any
) -> None:
    from recommender.models import Evaluation
    from recommender.tasks import evaluate_snapshot
    from topology.models import Snapshot

    settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS = 0.05
    snapshot = ingest(make_cluster("slow"), large_objects(), minutes=0)
    started = time.monotonic()
    assert evaluate_snapshot(snapshot.pk) is None
    assert time.monotonic() - started < 5
    snapshot.refresh_from_db()
    assert snapshot.evaluation_state == Snapshot.EvaluationState.FAILED
    assert snapshot.evaluation_note == (
        "timed out: still running after EVALUATION_SOFT_TIME_LIMIT_SECONDS=0.05 s"
    )
    assert not Evaluation.objects.filter(snapshot=snapshot).exists()


def test_it_names_the_failed_evaluation_and_its_reason_on_the_live_page(
    signed_in: Any, settings: Any
) -> None:
    from recommender.services import store_evaluation
    from recommender.tasks import evaluate_snapshot

    cluster = make_cluster("slow-page")
    shown = ingest(cluster, scenario_objects("reservation-idle-nodes"), minutes=0)
    store_evaluation(snapshot=shown)
    settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS = 0.05
    failed = ingest(cluster, large_objects(), minutes=1)
    evaluate_snapshot(failed.pk)
    text = signed_in.get(f"/clusters/{cluster.pk}/pending/").content.decode()
    assert f"The evaluation of newer snapshot #{failed.pk}" in text
    assert "failed: timed out: still running after EVALUATION_SOFT_TIME_LIMIT_SECONDS" in text
    assert f"This page shows #{shown.pk}, the latest evaluated." in text
    assert "is being evaluated" not in text


def test_it_names_the_failed_evaluation_on_the_overview_card(signed_in: Any, settings: Any) -> None:
    from recommender.services import store_evaluation
    from recommender.tasks import evaluate_snapshot

    cluster = make_cluster("slow-card")
    shown = ingest(cluster, scenario_objects("reservation-idle-nodes"), minutes=0)
    store_evaluation(snapshot=shown)
    settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS = 0.05
    failed = ingest(cluster, large_objects(), minutes=1)
    evaluate_snapshot(failed.pk)
    text = signed_in.get("/").content.decode()
    assert f"The evaluation of newer snapshot #{failed.pk} failed: timed out" in text
    assert "is being evaluated" not in text


def test_it_evaluates_the_latest_snapshot_again_once_the_failure_is_gone(
    db: None, settings: Any
) -> None:
    # a failed snapshot evaluated later (by the CLI, or a task with a longer limit) is clean
    from recommender.tasks import evaluate_snapshot

    settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS = 0.05
    snapshot = ingest(make_cluster("slow-then-fast"), large_objects(), minutes=0)
    evaluate_snapshot(snapshot.pk)
    settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS = 300
    assert evaluate_snapshot(snapshot.pk) is not None
    snapshot.refresh_from_db()
    assert (snapshot.evaluation_state, snapshot.evaluation_note) == ("", "")


@pytest.fixture
def unevaluated_files_cluster(tmp_path: Path, transactional_db: None) -> Any:
    """A files-source cluster whose one snapshot was stored but never evaluated."""
    from django.utils import timezone

    from topology import services

    write_cluster(tmp_path / "objects.json", nodes=4, pending=2, tag="once")
    cluster = services.save_cluster(
        name="unevaluated", source_kind="files", source_settings={"path": str(tmp_path)}
    )
    assert services.ingest_from_source(cluster=cluster, now=timezone.now()) is not None
    return cluster


@pytest.mark.integration
def test_it_evaluates_the_latest_snapshot_when_an_ingest_task_finds_nothing_new(
    unevaluated_files_cluster: Any, celery_worker_process: str
) -> None:
    from recommender.models import Evaluation
    from topology.tasks import ingest_cluster

    assert ingest_cluster(unevaluated_files_cluster.pk) is None  # the content is unchanged
    deadline = time.monotonic() + WORKER_WAIT_SECONDS
    while not Evaluation.objects.filter(cluster=unevaluated_files_cluster).exists():
        assert time.monotonic() < deadline, "the latest snapshot was never evaluated"
        time.sleep(0.2)


def test_it_evaluates_the_latest_snapshot_when_a_cli_ingest_finds_nothing_new(
    unevaluated_files_cluster: Any, capsys: Any
) -> None:
    from recommender.models import Evaluation

    call_command("ingest", unevaluated_files_cluster.name)
    assert "unevaluated: unchanged" in capsys.readouterr().out
    assert Evaluation.objects.filter(cluster=unevaluated_files_cluster).count() == 1
