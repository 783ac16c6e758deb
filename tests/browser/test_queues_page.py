"""The queues page in Chromium: one click from the overview's demo card (issue 34). The
demo's ClusterQueue team-q-cq (8 GPUs) is full and team-q/train waits for its quota."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def test_it_opens_the_demo_queues_from_the_overview(page: Any, live_url: str, demo: Any) -> None:
    page.goto(f"{live_url}/")
    page.click(f'article[data-cluster="{demo.id}"] a:text-is("Queues")')
    queue = page.locator('section[data-queue="ClusterQueue/team-q-cq"]')
    gpus = queue.locator('tr[data-resource="nvidia.com/gpu"] td').all_inner_texts()
    waiting = queue.locator("ol.queue-waiting li[data-workload]").all_inner_texts()
    assert gpus[:3] == ["8", "8", "0"]  # limit, used by running pods, free
    assert [line.split(":")[0] for line in waiting] == ["team-q/train"]
    assert page.errors == []
