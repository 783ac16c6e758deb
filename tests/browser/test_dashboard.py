"""The dashboard in Chromium against a real Daphne server, Postgres, Redis and a Celery worker."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser.conftest import screenshot
from tests.browser.heatmap_js import STACKED_TRACES
from tests.web.fixtures import SCRIPT_POD_NAME, gpu_node, path_of, running_pod

pytestmark = [pytest.mark.browser, pytest.mark.integration]

LIVE_UPDATE_SECONDS = 2.0
PAGES = ("topology", "pending", "reservations", "recommendations")


def write_objects(path: Path, objects: list[tuple[str, dict[str, Any]]]) -> None:
    path.write_text(yaml.safe_dump_all([obj for _source, obj in objects]))


@pytest.fixture
def cluster(tmp_path: Path) -> Any:
    """A files-source cluster (the topology scenario plus node x1 running a script-named pod),
    ingested and evaluated by the real services."""
    from recommender.services import store_evaluation
    from reservations import services as reservation_services
    from topology import services
    from topology.ingest.files import read_objects

    source = tmp_path / "cluster"
    source.mkdir()
    shutil.copy(path_of("topology-block"), source / "scenario.yaml")
    write_objects(
        source / "x1.yaml", [gpu_node("x1", 2), running_pod(SCRIPT_POD_NAME, "team-x", "x1", 1)]
    )
    cluster = services.save_cluster(
        name="browser-demo", source_kind="files", source_settings={"path": str(source)}
    )
    configuration = [
        o for o in read_objects(source) if o[1]["kind"] in {"NodeGroup", "Reservation"}
    ]
    reservation_services.load_configuration(cluster=cluster, objects=configuration)
    from django.utils import timezone

    snapshot = services.ingest_from_source(cluster=cluster, now=timezone.now())
    cluster.evaluation = store_evaluation(snapshot=snapshot)
    cluster.source_dir = source
    return cluster


def open_topology(page: Any, live_url: str, cluster: Any, query: str = "") -> None:
    page.goto(f"{live_url}/clusters/{cluster.id}/topology/{query}")
    page.wait_for_selector("#heatmap[data-rendered]")
    page.wait_for_selector('#live-status[data-state="open"]')


def drawn_gpus(page: Any) -> float:
    """GPUs the domain bars add up to (free + idle reserved + allocated + unknown)."""
    return page.evaluate(
        f"() => {STACKED_TRACES}"
        ".reduce((sum, trace) => sum + trace.x.reduce((a, b) => a + b, 0), 0)"
    )


def bar_position(page: Any, target: str) -> tuple[float, float]:
    """Page coordinates of the middle of the domain bar that opens ``target``."""
    return tuple(
        page.evaluate(
            """(target) => {
              const gd = document.getElementById('heatmap');
              const row = gd.data[0].customdata.indexOf(target);
              const total = gd.data.filter((t) => t.meta !== 'idle-reserved-panel')
                .reduce((sum, trace) => sum + trace.x[row], 0);
              const box = gd.getBoundingClientRect();
              const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
              const y = box.top + ya._offset + ya.c2p(row);
              return [box.left + xa._offset + xa.c2p(total / 2), y];
            }""",
            target,
        )
    )


def click_bar(page: Any, target: str) -> None:
    """Hover the bar until Plotly names it, then click: Plotly throttles hover to one per
    50 ms and a click takes the last hovered point, so an instant move-and-click (as a
    script does, never a hand) would click what was under the pointer before."""
    label = page.evaluate(
        "(target) => { const gd = document.getElementById('heatmap');"
        " return gd.data[0].y[gd.data[0].customdata.indexOf(target)]; }",
        target,
    )
    page.mouse.move(*bar_position(page, target))
    page.wait_for_function(
        "(label) => [...document.querySelectorAll('.hoverlayer .hovertext')]"
        ".some(h => h.textContent.startsWith(label + ':'))",
        arg=label,
    )
    page.mouse.down()
    page.mouse.up()


def cell_position(page: Any, row: int, column: int) -> tuple[float, float]:
    """Page coordinates of a heatmap cell's centre, from Plotly's own axis mapping."""
    return tuple(
        page.evaluate(
            """([row, column]) => {
              const gd = document.getElementById('heatmap');
              const box = gd.getBoundingClientRect();
              const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
              return [box.left + xa._offset + xa.c2p(column), box.top + ya._offset + ya.c2p(row)];
            }""",
            [row, column],
        )
    )


def row_of(page: Any, label_suffix: str) -> int:
    rows = page.evaluate("() => document.getElementById('heatmap').data[0].y")
    return next(index for index, label in enumerate(rows) if label.endswith(label_suffix))


def test_it_signs_in_and_lists_the_cluster(page: Any, live_url: str, cluster: Any) -> None:
    page.goto(f"{live_url}/")
    assert page.locator(f'article[data-cluster="{cluster.id}"] h2').inner_text() == cluster.name
    page.wait_for_selector('.live-status[data-state="open"]')
    screenshot(page, "scenario-overview")
    assert page.errors == []


def test_it_accounts_for_every_gpu_in_the_cluster_level_bars(
    page: Any, live_url: str, cluster: Any
) -> None:
    open_topology(page, live_url, cluster)
    assert drawn_gpus(page) == pytest.approx(cluster.evaluation.result["cluster"]["gpus"])
    screenshot(page, "scenario-topology")


def test_it_names_the_pod_when_hovering_a_gpu(page: Any, live_url: str, cluster: Any) -> None:
    open_topology(page, live_url, cluster, "?domain=~")  # x1 has no zone label
    page.mouse.move(*cell_position(page, row_of(page, "x1"), 0))
    hover = page.wait_for_selector(".hoverlayer .hovertext")
    assert SCRIPT_POD_NAME in hover.text_content()
    assert page.evaluate("() => document.querySelectorAll('script').length") == len(
        page.query_selector_all("script")
    )  # the pod name stayed text: no script element was injected
    assert page.evaluate("() => window.alerted === undefined")


def test_it_drills_down_to_a_node_and_a_device_and_back(
    page: Any, live_url: str, cluster: Any
) -> None:
    open_topology(page, live_url, cluster)
    click_bar(page, "~")
    page.wait_for_selector('#heatmap[data-depth="1"]')  # x1 has no zone label
    assert page.locator("#heatmap-breadcrumb [aria-current]").inner_text() == "unknown zone"
    page.mouse.click(*cell_position(page, 0, 0))  # only x1 there: straight to the node
    page.wait_for_selector('#heatmap[data-depth="4"]')
    assert page.locator("#heatmap-breadcrumb [aria-current]").inner_text() == "node x1"
    page.mouse.click(*cell_position(page, 0, 0))
    page.wait_for_selector('#heatmap[data-depth="5"]')
    assert SCRIPT_POD_NAME in page.locator("#device-pods").inner_text()
    screenshot(page, "scenario-topology-device")
    page.click("#heatmap-breadcrumb a[data-domain='']")
    page.wait_for_selector('#heatmap[data-depth="0"]')
    assert drawn_gpus(page) == pytest.approx(cluster.evaluation.result["cluster"]["gpus"])
    page.go_back()
    page.wait_for_selector('#heatmap[data-depth="5"]')


def test_it_updates_the_open_heatmap_after_an_ingest(
    page: Any, live_url: str, cluster: Any, celery_worker_process: str
) -> None:
    from topology.tasks import ingest_cluster

    open_topology(page, live_url, cluster)
    before = int(page.get_attribute("#heatmap", "data-gpus"))
    page.evaluate("() => { window.notReloaded = true; }")
    write_objects(cluster.source_dir / "new.yaml", [gpu_node("new-1", 4)])
    started = time.monotonic()
    ingest_cluster.delay(cluster.id)
    page.wait_for_function(
        f"() => document.getElementById('heatmap').dataset.gpus === '{before + 4}'",
        timeout=(LIVE_UPDATE_SECONDS + 8) * 1000,
    )
    elapsed = time.monotonic() - started
    assert page.evaluate("() => window.notReloaded") is True
    assert elapsed < LIVE_UPDATE_SECONDS, f"the page updated {elapsed:.2f} s after the ingest"


def test_it_updates_the_totals_line_with_the_bars_after_an_ingest(
    page: Any, live_url: str, cluster: Any, celery_worker_process: str
) -> None:
    from topology.tasks import ingest_cluster

    open_topology(page, live_url, cluster)
    free = '#topology-figures [data-figure="free"]'
    before = int(page.locator(free).inner_text())
    write_objects(cluster.source_dir / "new.yaml", [gpu_node("new-1", 4)])
    ingest_cluster.delay(cluster.id)
    page.wait_for_function(
        f"() => document.querySelector('{free}').textContent === '{before + 4}'",
        timeout=(LIVE_UPDATE_SECONDS + 8) * 1000,
    )
    bars = page.evaluate(
        "() => document.getElementById('heatmap').data"
        ".find(t => t.name === 'free').x.reduce((a, b) => a + b, 0)"
    )
    assert bars == before + 4


@pytest.mark.parametrize("name", PAGES)
def test_it_shows_each_cluster_page_without_console_errors(
    page: Any, live_url: str, cluster: Any, name: str
) -> None:
    page.goto(f"{live_url}/clusters/{cluster.id}/{name}/")
    page.wait_for_selector('#live-status[data-state="open"]')
    page.wait_for_load_state("networkidle")
    screenshot(page, f"scenario-{name}")
    assert page.errors == []


def test_it_ignores_a_message_of_an_unknown_version_with_a_warning(
    page: Any, live_url: str, cluster: Any
) -> None:
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    open_topology(page, live_url, cluster)
    message = {"type": "heatmap.update", "version": 99, "evaluation": 0, "data": {}}
    page.evaluate(
        "(m) => { const s = document.getElementById('live-status'); "
        "s.dispatchEvent(new CustomEvent('capacityweb:test')); "
        "window.capacityweb.sockets[0].socket.dispatchEvent("
        "new MessageEvent('message', {data: JSON.stringify(m)})); }",
        message,
    )
    page.wait_for_timeout(200)
    assert any("unsupported version" in w for w in warnings)
    assert page.errors == []
    assert json.dumps(message)
