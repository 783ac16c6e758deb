"""The waiting-per-team page in Chromium: one click from the overview's demo card (issue 34)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_it_opens_the_demo_waiting_per_team_from_the_overview(
    page: Any, live_url: str, demo: Any
) -> None:
    page.goto(f"{live_url}/")
    page.click(f'article[data-cluster="{demo.id}"] a:text-is("Waiting per team")')
    page.wait_for_selector("#teams")
    shown = page.locator("#teams tbody tr[data-namespace]").evaluate_all(
        "rows => rows.map(r => r.dataset.namespace)"
    )
    pending = {w["name"].split("/")[0] for w in demo.evaluation.result["workloads"]}
    assert shown == sorted(pending)
    assert page.errors == []
