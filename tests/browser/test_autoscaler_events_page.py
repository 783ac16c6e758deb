"""The autoscaler events page in Chromium: one click from the overview's demo card (issue
34). The demo's cluster-autoscaler status reports every pool healthy with no scale-up or
scale-down under way (capacityweb/demo.py autoscaled_pools): no report to show, said."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_it_opens_the_demo_autoscaler_events_from_the_overview(
    page: Any, live_url: str, demo: Any
) -> None:
    page.goto(f"{live_url}/")
    page.click(f'article[data-cluster="{demo.id}"] a:text-is("Autoscaler events")')
    page.wait_for_selector("#autoscaler-events")
    assert page.locator("#what-is-read").is_visible()
    body = page.locator("#autoscaler-events tbody").inner_text()
    # the three demo pools are grown by cluster-autoscaler, which reports no activity
    assert "no scale-up in progress for the 3 groups an autoscaler grows" in body
    assert page.errors == []
