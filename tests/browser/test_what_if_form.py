"""Issue 34 item 6 in Chromium: the workload page's what-if form changes the verdict,
answered by a real worker (issue 41 item 3): the page says queued / working, then fills in.

blocked-block-too-small (hand derivation in tests/web/test_what_if.py): gang ml/big is
blocked; raising group h100's max size (and its domains' slots) by 2 lets 4 new nodes
land in block b1, so the gang runs after that scale-up.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_workload_flow import off_thread
from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects

pytestmark = [pytest.mark.browser, pytest.mark.integration]


@pytest.fixture
def blocked_cluster(transactional_db: None) -> Any:
    return off_thread(
        lambda: ingest_and_evaluate(
            make_cluster("blocked"), scenario_objects("blocked-block-too-small")
        )
    )


def test_it_submits_the_what_if_and_sees_the_verdict_change(
    page: Any, live_url: str, blocked_cluster: Any, celery_worker_process: str
) -> None:
    page.goto(f"{live_url}/clusters/{blocked_cluster.cluster_id}/workloads/ml/big/")
    assert page.get_attribute("[data-relaxation=raise-max]", "data-relaxation") == "raise-max"
    page.select_option("#what-if-kind", "raise-max")
    page.fill("#what-if-target", "h100")
    page.fill("#what-if-amount", "2")
    page.click("#what-if-form button[type=submit]")
    page.wait_for_selector("#what-if-answer")
    before = page.get_attribute("#what-if-answer [data-before]", "data-before")
    after = page.get_attribute("#what-if-answer [data-after]", "data-after")
    assert (before, after) == ("blocked", "runs_after_scale_up")
    screenshot(page, "what-if")
    assert page.errors == []
