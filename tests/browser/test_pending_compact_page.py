"""The demo's pending page in Chromium (issue 34): 34 workloads were 8,676 px tall, each
row repeating the demo's taints. Now one line each, grouped by cause, the taints said
once, the details opened by a click that needs no JavaScript."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.integration]

LINE_PX = 60  # a collapsed row, at most
HEADING_PX = 70  # a cause's heading and its margins, at most
PAGE_TOP_PX = 600  # navigation, pickers, filters, summary, the shared reasons, at most
DEMO_TAINT = "{capacityweb.io/demo-case: split}"


def test_it_fits_the_demo_in_one_line_per_workload(page: Any, live_url: str, demo: Any) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/pending/")
    rows = page.locator("details.pending-row")
    headings = page.locator("section.cause-group h2")
    assert rows.count() == demo.evaluation.pending_count == 34
    heights = rows.evaluate_all("rows => rows.map(r => r.getBoundingClientRect().height)")
    assert max(heights) <= LINE_PX
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height <= PAGE_TOP_PX + HEADING_PX * headings.count() + LINE_PX * rows.count()
    assert page.errors == []


def test_it_says_the_demo_taints_once(page: Any, live_url: str, demo: Any) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/pending/")
    page.locator("details.pending-row").evaluate_all("rows => rows.forEach(r => r.open = true)")
    text = page.locator("main").inner_text()
    assert text.count(DEMO_TAINT) == 1
    assert DEMO_TAINT in page.locator("#shared-reasons").inner_text()


def test_it_opens_a_row_without_javascript(
    browser: Any, live_url: str, demo: Any, transactional_db: None
) -> None:
    from django.contrib.auth.models import User

    User.objects.create_user("nojs", password=PASSWORD, is_staff=True)
    context = browser.new_context(java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.goto(f"{live_url}/accounts/login/")
        tab.fill("input[name=username]", "nojs")
        tab.fill("input[name=password]", PASSWORD)
        tab.click("button[type=submit], input[type=submit]")
        tab.goto(f"{live_url}/clusters/{demo.id}/pending/")
        row = tab.locator('details.pending-row[data-workload="team-q/train"]')
        details = row.locator("dl.pending-details")
        assert not details.is_visible()
        row.locator("summary .plain-verdict").click()
        assert details.is_visible()
        assert "ClusterQueue/team-q-cq" in details.inner_text()
    finally:
        context.close()
