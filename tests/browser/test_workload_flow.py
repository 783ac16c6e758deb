"""Issue 21 in Chromium: no empty table while a snapshot is evaluated, the workload page
from a pending row, the pending list's search and sort, the glossary and /help/.

"Being evaluated" is made deterministic: a newer snapshot is ingested and its
evaluation is stored only when the test says so (no worker, no sleep).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, TypeVar

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_dashboard import drawn_gpus
from tests.web.fixtures import (
    TAKEN_AT,
    gpu_node,
    ingest_and_evaluate,
    make_cluster,
    scenario_objects,
)

pytestmark = [pytest.mark.browser, pytest.mark.integration]

LIVE = '#live-status[data-state="open"]'
UPDATE_TIMEOUT_MS = 15_000
T = TypeVar("T")


def off_thread(work: Callable[[], T]) -> T:
    """Run ORM work (which may publish through async_to_sync) outside Playwright's loop."""
    from django.db import connection

    def run() -> T:
        try:
            return work()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(run).result()


def rows(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "details.pending-row", "rows => rows.map(r => r.dataset.workload)"
    )


@pytest.fixture
def gang_cluster(transactional_db: None) -> Any:
    """topology-block: gang ml/train (2 × 8 GPUs in one block) is pending; evaluated."""
    return off_thread(
        lambda: ingest_and_evaluate(make_cluster("gang"), scenario_objects("topology-block"))
    )


@pytest.fixture
def two_pods_cluster(transactional_db: None) -> Any:
    """mixed-priorities: team-a/urgent runs now (0/h); team-b/batch-old needs one a100 (32/h)."""
    return off_thread(
        lambda: ingest_and_evaluate(make_cluster("pods"), scenario_objects("mixed-priorities"))
    )


def test_no_page_shows_an_empty_table_while_a_newer_snapshot_is_evaluated(
    page: Any, live_url: str, gang_cluster: Any
) -> None:
    from recommender.tasks import evaluate_snapshot
    from topology import services

    evaluation = gang_cluster
    cluster_id = evaluation.cluster_id
    objects = scenario_objects("topology-block") + [gpu_node("late-1", 4)]
    newer = off_thread(
        lambda: services.ingest_snapshot(
            cluster=evaluation.snapshot.cluster,
            taken_at=TAKEN_AT + timedelta(minutes=1),
            objects=objects,
        )
    )
    note = f"Newer snapshot #{newer.id}"
    page.goto(f"{live_url}/clusters/{cluster_id}/topology/")
    page.wait_for_selector("#heatmap[data-rendered]")
    assert drawn_gpus(page) == pytest.approx(evaluation.result["cluster"]["gpus"])
    assert note in page.locator("#newer-snapshot").inner_text()
    page.goto(f"{live_url}/clusters/{cluster_id}/recommendations/")
    assert page.locator("article.recommendation").count() == 1
    page.goto(f"{live_url}/clusters/{cluster_id}/reservations/")
    assert "has not been evaluated" not in page.content()
    page.goto(f"{live_url}/clusters/{cluster_id}/pending/")
    page.wait_for_selector(LIVE)
    assert rows(page) == ["ml/train"]
    assert note in page.locator("#newer-snapshot").inner_text()
    screenshot(page, "scenario-pending-being-evaluated")
    updates = page.evaluate("() => window.capacityweb.updates")
    off_thread(lambda: evaluate_snapshot(newer.id))  # the worker's task, run here: store, publish
    page.wait_for_function(
        f"() => window.capacityweb.updates > {updates}", timeout=UPDATE_TIMEOUT_MS
    )
    assert page.locator("#newer-snapshot").inner_text().strip() == ""  # the update cleared it
    assert rows(page) == ["ml/train"]
    assert page.errors == []


def test_an_opened_pending_line_stays_open_through_a_live_update(
    page: Any, live_url: str, gang_cluster: Any
) -> None:
    from recommender.tasks import evaluate_snapshot
    from topology import services

    evaluation = gang_cluster
    newer = off_thread(
        lambda: services.ingest_snapshot(
            cluster=evaluation.snapshot.cluster,
            taken_at=TAKEN_AT + timedelta(minutes=1),
            objects=scenario_objects("topology-block") + [gpu_node("late-1", 4)],
        )
    )
    page.goto(f"{live_url}/clusters/{evaluation.cluster_id}/pending/")
    page.wait_for_selector(LIVE)
    page.click('details[data-workload="ml/train"] summary .plain-verdict')
    updates = page.evaluate("() => window.capacityweb.updates")
    off_thread(lambda: evaluate_snapshot(newer.id))
    page.wait_for_function(
        f"() => window.capacityweb.updates > {updates}", timeout=UPDATE_TIMEOUT_MS
    )
    line = page.locator('details[data-workload="ml/train"]')
    assert line.get_attribute("open") is not None
    assert line.locator("dl.pending-details").is_visible()
    assert page.errors == []


def test_a_pending_row_leads_to_the_workload_page_and_its_block_on_the_heatmap(
    page: Any, live_url: str, gang_cluster: Any
) -> None:
    cluster_id = gang_cluster.cluster_id
    page.goto(f"{live_url}/clusters/{cluster_id}/pending/")
    page.click('details[data-workload="ml/train"] summary a.workload-link')
    page.wait_for_url(f"{live_url}/clusters/{cluster_id}/workloads/ml/train/")
    assert page.locator("h1").inner_text().endswith("ml/train")
    domains = page.eval_on_selector_all(
        "#per-domain tbody th", "cells => cells.map(c => c.textContent)"
    )
    assert sorted(domains) == ["z1/b1", "z1/b2"]
    page.click("#per-node summary")
    assert page.locator("#per-node tbody tr").count() == 4
    screenshot(page, "scenario-workload")
    page.click("#workload-heatmap")
    page.wait_for_selector('#heatmap[data-depth="2"][data-rendered]')  # one block
    assert page.errors == []


def test_it_searches_and_sorts_the_pending_list(
    page: Any, live_url: str, two_pods_cluster: Any
) -> None:
    cluster_id = two_pods_cluster.cluster_id
    page.goto(f"{live_url}/clusters/{cluster_id}/pending/")
    # grouped by cause: "waits for new nodes" comes before "fits now"
    assert rows(page) == ["team-b/batch-old", "team-a/urgent"]
    page.select_option("#pending-filters select[name=sort]", "age")
    page.click("#pending-filters button[type=submit]")
    page.wait_for_url("**sort=age**")
    assert rows(page) == ["team-a/urgent", "team-b/batch-old"]  # first seen together: by name
    page.select_option("#pending-filters select[name=sort]", "cost")
    page.click("#pending-filters button[type=submit]")
    page.wait_for_url("**sort=cost**")
    assert rows(page) == ["team-b/batch-old", "team-a/urgent"]
    page.fill("#pending-filters input[name=q]", "batch")
    page.click("#pending-filters button[type=submit]")
    page.wait_for_url("**q=batch**")
    assert rows(page) == ["team-b/batch-old"]
    assert page.errors == []


def test_terms_carry_their_definition_and_lead_to_the_help_page(
    page: Any, live_url: str, gang_cluster: Any
) -> None:
    from recommender.glossary import TERMS

    page.goto(f"{live_url}/clusters/{gang_cluster.cluster_id}/pending/")
    for key in ("naive", "joint", "stranded", "topology"):
        title = page.get_attribute(f'[data-term="{key}"]', "title")
        assert title == TERMS[key].text
    page.hover('abbr[data-term="naive"]')
    page.click('abbr[data-term="naive"]')
    page.wait_for_url(f"{live_url}/help/#term-naive")
    assert page.locator("#term-naive").is_visible()
    assert page.locator("dl.glossary dt").count() == len(TERMS)
    screenshot(page, "scenario-help")
    assert page.errors == []
