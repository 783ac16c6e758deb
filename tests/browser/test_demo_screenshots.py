"""The README's screenshots: every dashboard page on the demo cluster (``load_demo``).

``make screenshots`` runs this module with SCREENSHOTS_DIR=docs/screenshots;
without it the pages are still rendered, captured and checked, nothing is written.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import screenshot
from tests.browser.heatmap_js import STACKED_TRACES

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PAGES = (
    "pending",
    "reservations",
    "recommendations",
    "node-groups",
    "queues",
    "autoscaler-events",
    "teams",
)
DRILL_DEPTHS = ("1", "2", "3", "4", "5")  # zone › block › rack › node › device


def test_it_screenshots_every_demo_page(page: Any, live_url: str, demo: Any) -> None:
    page.goto(f"{live_url}/")
    page.wait_for_selector('.live-status[data-state="open"]')
    screenshot(page, "overview")
    page.goto(f"{live_url}/clusters/{demo.id}/topology/")
    page.wait_for_selector("#heatmap[data-rendered]")
    page.wait_for_selector('#live-status[data-state="open"]')
    gpus = page.evaluate(
        f"() => {STACKED_TRACES}"
        ".reduce((sum, trace) => sum + trace.x.reduce((a, b) => a + b, 0), 0)"
    )  # the cluster level: one bar per domain, free + idle reserved + allocated + unknown
    assert gpus == pytest.approx(demo.evaluation.result["cluster"]["gpus"])
    screenshot(page, "topology")
    for depth in DRILL_DEPTHS:  # through the no-JavaScript form: first child each time
        page.click("#drill-select + button")
        page.wait_for_selector(f'#heatmap[data-depth="{depth}"][data-rendered]')
    page.wait_for_selector("#device-pods")
    screenshot(page, "topology-device")
    for name in PAGES:
        page.goto(f"{live_url}/clusters/{demo.id}/{name}/")
        page.wait_for_selector('#live-status[data-state="open"]')
        page.wait_for_load_state("networkidle")
        screenshot(page, name)
    page.goto(f"{live_url}/clusters/{demo.id}/pending/")
    first = page.locator('details.pending-row[data-kind="gang"]').first
    first.locator("a.workload-link").click()
    page.wait_for_selector("#workload-story")
    screenshot(page, "workload")
    page.goto(f"{live_url}/help/")
    screenshot(page, "help")
    assert page.errors == []
