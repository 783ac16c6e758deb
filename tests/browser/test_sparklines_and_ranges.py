"""Issue 21 item 6 in Chromium: the overview's sparklines, the reservations chart scaled
to its samples, and date inputs read in the page's time zone."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_dashboard import cluster  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_it_draws_a_pending_and_a_waste_sparkline_per_cluster(
    page: Any,
    live_url: str,
    cluster: Any,  # noqa: F811
) -> None:
    page.goto(f"{live_url}/")
    card = page.locator(f'article[data-cluster="{cluster.id}"]')
    for name in ("pending-gpus", "waste"):
        line = card.locator(f'[data-sparkline="{name}"] svg polyline')
        assert line.count() == 1
        box = line.bounding_box()
        assert box is not None and box["width"] > 0  # drawn, not an empty element
    screenshot(page, "scenario-overview-sparklines")
    assert page.errors == []


def test_it_spans_the_idle_chart_over_the_samples_of_a_30_day_window(
    page: Any, live_url: str
) -> None:
    from django.utils import timezone

    from tests.web.fixtures import ingest_and_evaluate, make_cluster, running_pod, scenario_objects

    reserved = make_cluster("reserved")  # idle samples 3 h and 1 h ago
    for hours, extra in ((3, []), (1, [running_pod("uses-r1", "team-a", "r1", 8)])):
        objects = [*scenario_objects("reservation-idle-nodes"), *extra]
        ingest_and_evaluate(reserved, objects, taken_at=timezone.now() - timedelta(hours=hours))
    page.goto(f"{live_url}/clusters/{reserved.id}/reservations/?range=30d")
    page.wait_for_function("() => document.getElementById('idle-chart')._fullLayout")
    first, last = page.evaluate(
        "() => document.getElementById('idle-chart')._fullLayout.xaxis.range"
    )
    shown = datetime.fromisoformat(last) - datetime.fromisoformat(first)
    assert timedelta(hours=1) < shown < timedelta(hours=3), f"the x axis spans {shown}"
    screenshot(page, "scenario-reservations-30d")


def test_it_reads_the_custom_range_in_the_zone_the_page_names(
    page: Any,
    live_url: str,
    cluster: Any,  # noqa: F811
) -> None:
    page.goto(f"{live_url}/clusters/{cluster.id}/reservations/")
    page.check("input[name=range][value=custom]")
    page.fill("input[name=start]", "2026-03-28T12:00")
    page.fill("input[name=end]", "2026-03-29T12:00")
    page.fill("input[name=tz]", "Europe/Berlin")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("#range-shown")
    assert "From 2026-03-28 12:00 to 2026-03-29 12:00 Europe/Berlin" in page.inner_text(
        "#range-shown"
    )
    csv = page.get_attribute("#range-shown a[download]", "href")
    assert "start=2026-03-28T11%3A00%3A00%2B00%3A00" in csv  # CET, +1
    assert "end=2026-03-29T10%3A00%3A00%2B00%3A00" in csv  # CEST, +2 after the DST change
    assert "read as Europe/Berlin wall-clock times" in page.inner_text("form.filters")
