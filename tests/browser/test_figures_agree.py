"""One definition per figure (recommender.glossary): on the demo, the same figure reads the
same on the overview, the topology, pending, recommendations and reservations pages and
in the API (issue 34)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def text_of(page: Any, selector: str) -> str:
    return page.locator(selector).first.inner_text().strip()


def number(text: str) -> float:
    return float("".join(c for c in text if c.isdigit() or c == "."))


def bar_totals(page: Any) -> dict[str, float]:
    """The cluster-level bars, summed per series (free, idle reserved, allocated, unknown)."""
    return page.evaluate(
        "() => Object.fromEntries(document.getElementById('heatmap').data"
        ".map(t => [t.name, t.x.reduce((a, b) => a + b, 0)]))"
    )


@pytest.fixture
def overview(page: Any, live_url: str, demo: Any) -> dict[str, float]:
    page.goto(f"{live_url}/")
    card = f'article[data-cluster="{demo.id}"] '
    return {
        key: number(text_of(page, f'{card}dd[data-counter="{key}"]'))
        for key in ("gpusAllocated", "gpusIdleReserved", "strandedPerHour")
    }


def api_evaluation(page: Any, live_url: str, demo: Any) -> dict[str, Any]:
    response = page.request.get(f"{live_url}/api/v1/evaluations/{demo.evaluation.id}/")
    assert response.status == 200
    return response.json()


def test_it_counts_allocated_gpus_alike_on_overview_topology_and_api(
    page: Any, live_url: str, demo: Any, overview: dict[str, float]
) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/topology/")
    page.wait_for_selector("#heatmap[data-rendered]")
    stated = number(text_of(page, '#topology-figures [data-figure="allocated"]'))
    api = api_evaluation(page, live_url, demo)["gpus_allocated"]
    assert overview["gpusAllocated"] == stated == bar_totals(page)["allocated"] == api


def test_it_counts_idle_reserved_gpus_alike_and_explains_the_unprovisioned_part(
    page: Any, live_url: str, demo: Any, overview: dict[str, float]
) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/topology/")
    page.wait_for_selector("#heatmap[data-rendered]")
    stated = number(text_of(page, '#topology-figures [data-figure="idle-reserved"]'))
    unprovisioned = number(
        text_of(page, '#topology-figures [data-figure="idle-reserved-unprovisioned"]')
    )
    on_bars = bar_totals(page)["idle reserved"]
    page.goto(f"{live_url}/clusters/{demo.id}/reservations/")
    on_reservations = number(text_of(page, 'dd[data-counter="gpusIdleReserved"]'))
    api = api_evaluation(page, live_url, demo)["gpus_idle_reserved"]
    assert unprovisioned > 0  # the demo has paid-but-not-started capacity
    assert overview["gpusIdleReserved"] == stated == on_reservations == api
    assert on_bars + unprovisioned == stated


def test_it_shows_the_same_stranded_cost_on_overview_pending_recommendations_and_api(
    page: Any, live_url: str, demo: Any, overview: dict[str, float]
) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/pending/")
    on_pending = number(text_of(page, '[data-figure="stranded-per-hour"]'))
    page.goto(f"{live_url}/clusters/{demo.id}/recommendations/")
    on_recommendations = number(text_of(page, '[data-figure="stranded-per-hour"]'))
    api = api_evaluation(page, live_url, demo)["stranded_cost_per_hour"]
    assert overview["strandedPerHour"] == on_pending == on_recommendations == api


def test_it_labels_the_joint_plan_cost_apart_from_the_stranded_cost(
    page: Any, live_url: str, demo: Any
) -> None:
    """The demo's joint plan costs as much per hour as the naive stranded nodes: each
    figure carries its own term, so the equal numbers cannot be read as one thing."""
    page.goto(f"{live_url}/clusters/{demo.id}/recommendations/")
    joint = page.locator('[data-figure="joint-per-hour"]').first
    label = joint.locator("xpath=preceding-sibling::a[1]").inner_text()
    stranded_label = page.locator('[data-figure="stranded-per-hour"] + a.term').first.inner_text()
    assert (label, stranded_label) == ("Joint plan's nodes", "stranded nodes")
