"""The node groups page in Chromium: one click from the overview's demo card (issue 34)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_it_opens_the_demo_node_groups_from_the_overview(
    page: Any, live_url: str, demo: Any
) -> None:
    page.goto(f"{live_url}/")
    page.click(f'article[data-cluster="{demo.id}"] a:text-is("Node groups")')
    page.wait_for_selector("#node-groups")
    names = page.locator("#node-groups tbody tr[data-node-group] th").all_inner_texts()
    groups = demo.evaluation.snapshot.model_json["cluster"]["node_groups"]
    assert names == sorted(group["name"] for group in groups)
    assert page.errors == []
