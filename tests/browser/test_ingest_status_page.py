"""A refused source, as a person sees it on the cluster's page in Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser.conftest import screenshot
from tests.ingest.kubeobjects import openb_rows, trace_node_object

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_it_shows_why_the_source_was_refused_above_the_last_snapshot(
    page: object, live_url: str, tmp_path: Path
) -> None:
    from django.utils import timezone

    from recommender.services import store_evaluation
    from topology import services
    from topology.model.hardware import ModelError

    path = tmp_path / "nodes.json"
    nodes = [trace_node_object(r) for r in openb_rows("openb_node_list_gpu_node.csv", 8)]
    path.write_text(json.dumps({"kind": "List", "items": nodes}))
    cluster = services.save_cluster(
        name="refused-files", source_kind="files", source_settings={"path": str(path)}
    )
    store_evaluation(snapshot=services.ingest_from_source(cluster=cluster, now=timezone.now()))
    path.write_text(path.read_text()[:300])  # the exporter is still writing
    with pytest.raises(ModelError):
        services.ingest_from_source(cluster=cluster, now=timezone.now())
    page.goto(f"{live_url}/clusters/{cluster.pk}/topology/")  # type: ignore[attr-defined]
    alert = page.locator('[data-ingest-state="refused"]')  # type: ignore[attr-defined]
    assert alert.is_visible()
    assert f"{path}: not valid YAML" in alert.inner_text()
    assert page.locator("#heatmap, .heatmap, svg").count() > 0  # type: ignore[attr-defined]
    screenshot(page, "ingest-refused")
    assert page.errors == []  # type: ignore[attr-defined]
