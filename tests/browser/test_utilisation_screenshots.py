"""The utilisation page on the demo cluster in Chromium: the layer renders, demo data is said.

``SCREENSHOTS_DIR=docs/screenshots`` writes ``utilisation.png`` (the layer and the
per-team table) as ``make screenshots`` does for the other pages.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.browser.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.fixture
def demo(transactional_db: None) -> Any:
    from django.db import connection
    from django.utils import timezone

    from capacityweb.demo import load_demo

    def load() -> Any:
        try:
            return load_demo(now=timezone.now())[0]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as worker:  # Playwright's loop runs in this thread
        return worker.submit(load).result()


def test_it_draws_the_demos_utilisation_layer(page: Any, live_url: str, demo: Any) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/utilisation/")
    page.wait_for_selector("#utilisation-layer .main-svg")
    cells = page.evaluate(
        "() => document.getElementById('utilisation-layer').data[0].z"
        ".flat().filter(v => v !== null).length"
    )
    assert cells > 0
    assert page.locator("#utilisation-demo").inner_text().startswith("Demo data")
    screenshot(page, "utilisation")
    assert page.errors == []
