"""Issue 21: an open page says a newer snapshot is being evaluated as soon as it is
ingested, and the evaluation's live update clears the note (no reload, no sleep).

The real path: the ingest task (in a real Celery worker) commits the snapshot, the
``snapshot_ingested`` signal publishes "snapshot.ingested" to the cluster's group and
enqueues the evaluation; the worker then stores and publishes it. Messages on one
socket arrive in order, so the note is shown before the evaluation's update; a
MutationObserver records every text the note had, so a note shown and cleared between
two polls is still seen.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.browser.test_dashboard import write_objects
from tests.web.fixtures import gpu_node, path_of

pytestmark = [pytest.mark.browser, pytest.mark.integration]

UPDATE_TIMEOUT_MS = 30_000
RECORD_NOTES = """() => {
  window.notes = [];
  const box = document.getElementById("newer-snapshot");
  new MutationObserver(() => window.notes.push(box.innerText.trim()))
    .observe(box, {childList: true, subtree: true, characterData: true});
  window.notReloaded = true;
}"""


@pytest.fixture
def files_cluster(tmp_path: Any, transactional_db: None) -> Any:
    """topology-block from a files source, ingested and evaluated by the real services."""
    from django.utils import timezone

    from recommender.services import store_evaluation
    from topology import services

    source = tmp_path / "cluster"
    source.mkdir()
    shutil.copy(path_of("topology-block"), source / "scenario.yaml")
    cluster = services.save_cluster(
        name="newer-note", source_kind="files", source_settings={"path": str(source)}
    )
    snapshot = services.ingest_from_source(cluster=cluster, now=timezone.now())
    store_evaluation(snapshot=snapshot)
    cluster.source_dir = source
    return cluster


def test_an_open_page_shows_the_newer_snapshot_note_until_its_evaluation(
    page: Any, live_url: str, files_cluster: Any, celery_worker_process: str
) -> None:
    from topology.models import Snapshot
    from topology.tasks import ingest_cluster

    shown = Snapshot.objects.get(cluster=files_cluster).pk
    page.goto(f"{live_url}/clusters/{files_cluster.id}/pending/")
    page.wait_for_selector('#live-status[data-state="open"]')
    assert page.locator("#newer-snapshot").inner_text().strip() == ""
    page.evaluate(RECORD_NOTES)
    write_objects(files_cluster.source_dir / "late.yaml", [gpu_node("late-1", 4)])
    ingest_cluster.delay(files_cluster.id)
    page.wait_for_function(
        "() => window.capacityweb.updates > 0 && "
        "document.getElementById('newer-snapshot').innerText.trim() === ''",
        timeout=UPDATE_TIMEOUT_MS,
    )
    newer = Snapshot.objects.filter(cluster=files_cluster).exclude(pk=shown).get().pk
    assert newer > shown
    notes = [note for note in page.evaluate("() => window.notes") if note]
    assert notes, "the note never appeared"
    assert notes[0].startswith(f"Newer snapshot #{newer} (")
    assert f"is being evaluated: this page shows #{shown}, the latest evaluated" in notes[0]
    assert page.get_attribute("#live-status", "data-snapshot") == str(newer)
    assert page.evaluate("() => window.notReloaded") is True
    assert page.errors == []
