"""One definition per figure (recommender.glossary): on the demo, the same figure reads the
same on the overview, the topology, pending, workload, recommendations and reservations
pages and in the API (issue 34)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.heatmap_js import STACKED_TRACES

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def text_of(page: Any, selector: str) -> str:
    return page.locator(selector).first.inner_text().strip()


def number(text: str) -> float:
    return float("".join(c for c in text if c.isdigit() or c == "."))


def bar_totals(page: Any) -> dict[str, float]:
    """The cluster-level bars, summed per series (free, idle reserved, allocated, unknown)."""
    return page.evaluate(
        f"() => Object.fromEntries({STACKED_TRACES}"
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
    on_panel = page.evaluate(
        """() => {
          const gd = document.getElementById('heatmap');
          const panel = gd.data.find((t) => t.meta === 'idle-reserved-panel');
          const axis = gd._fullLayout.xaxis2;
          return {total: panel.x.reduce((a, b) => a + b, 0),
                  widest_px: axis.c2p(Math.max(...panel.x)) - axis.c2p(0)};
        }"""
    )
    page.goto(f"{live_url}/clusters/{demo.id}/reservations/")
    on_reservations = number(text_of(page, 'dd[data-counter="gpusIdleReserved"]'))
    api = api_evaluation(page, live_url, demo)["gpus_idle_reserved"]
    assert unprovisioned > 0  # the demo has paid-but-not-started capacity
    assert overview["gpusIdleReserved"] == stated == on_reservations == api
    assert on_bars + unprovisioned == stated
    assert on_panel["total"] == on_bars
    assert on_panel["widest_px"] >= 100  # readable, not a sliver of the stacked bar


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


def api_verdict(page: Any, live_url: str, demo: Any, workload: str) -> dict[str, Any]:
    response = page.request.get(
        f"{live_url}/api/v1/pending-workloads/?evaluation={demo.evaluation.id}&page_size=100"
    )
    assert response.status == 200
    [row] = [r for r in response.json()["results"] if r["workload"] == workload]
    return row


def workload_figures(page: Any, live_url: str, demo: Any, workload: str) -> dict[str, str]:
    """The figures of ``workload`` on its own page and on its (closed) pending line."""
    figures = {}
    page.goto(f"{live_url}/clusters/{demo.id}/workloads/{workload}/")
    for key in ("joint-per-hour", "naive-per-hour", "stranded-gpus"):
        cell = page.locator(f'#workload-story [data-figure="workload-{key}"]')
        figures[f"workload:{key}"] = cell.first.text_content() if cell.count() else ""
    figures["workload:gpus"] = page.locator("#workload-asks [data-gpus]").text_content()
    page.goto(f"{live_url}/clusters/{demo.id}/pending/")
    row = page.locator(f'details.pending-row[data-workload="{workload}"]')
    for key in ("joint-per-hour", "naive-per-hour", "stranded-gpus"):
        cell = row.locator(f'[data-figure="workload-{key}"]')
        figures[f"pending:{key}"] = cell.first.text_content() if cell.count() else ""
    figures["pending:gpus"] = row.locator("summary [data-gpus]").text_content()
    return figures


def test_it_prices_a_workloads_joint_plan_alike_on_its_page_pending_cards_and_api(
    page: Any, live_url: str, demo: Any
) -> None:
    """team-a/llm-pretrain: the joint plan adds 12 × g3-8gpu-pool for it alone."""
    workload = "team-a/llm-pretrain"
    figures = workload_figures(page, live_url, demo, workload)
    page.goto(f"{live_url}/clusters/{demo.id}/recommendations/")
    cards = page.locator("article.recommendation").filter(
        has=page.locator(f'a.workload-link:text-is("{workload}")')
    )
    prices = cards.locator('[data-figure="card-per-hour"]').all_inner_texts()
    on_cards = sum(number(price) for price in prices)
    api = api_verdict(page, live_url, demo, workload)["joint_cost_per_hour"]
    on_page = number(figures["workload:joint-per-hour"])
    assert api > 0
    assert on_page == number(figures["pending:joint-per-hour"]) == on_cards == api


def test_it_counts_a_workloads_stranded_gpus_and_naive_cost_alike_on_its_page_pending_and_api(
    page: Any, live_url: str, demo: Any
) -> None:
    """team-a/llm-pretrain: the naive autoscaler buys 12 × g3-8gpu-pool, topology-blind, so
    nodes outside the block the gang needs strand their GPUs. (A demo trace pod would
    do too, but which trace pods are pending depends on the replay's tick.)"""
    workload = "team-a/llm-pretrain"
    figures = workload_figures(page, live_url, demo, workload)
    api = api_verdict(page, live_url, demo, workload)
    assert api["naive"]["strandedGpus"] > 0
    assert figures["workload:stranded-gpus"] == figures["pending:stranded-gpus"]
    assert int(figures["workload:stranded-gpus"]) == api["naive"]["strandedGpus"]
    assert figures["workload:naive-per-hour"] == figures["pending:naive-per-hour"]
    assert number(figures["workload:naive-per-hour"]) == api["naive_cost_per_hour"]


def test_it_shows_a_gpu_share_alike_on_the_workload_page_pending_and_api(
    page: Any, live_url: str, demo: Any
) -> None:
    """openb/openb-pod-0391 asks for a share of one GPU: never rounded to 0 or 1."""
    workload = "openb/openb-pod-0391"
    figures = workload_figures(page, live_url, demo, workload)
    api = api_verdict(page, live_url, demo, workload)["requested_gpus"]
    assert 0 < api < 1
    assert figures["workload:gpus"] == figures["pending:gpus"]
    assert float(figures["workload:gpus"]) == pytest.approx(api, abs=0.005)


def test_it_counts_no_other_teams_reserved_gpu_as_free_on_the_workload_page(
    page: Any, live_url: str, demo: Any
) -> None:
    """team-a/llm-pretrain needs a block: each block's free GPUs on its page are at most the
    topology chart's free GPUs there plus team-a's own idle reserved ones (team-b's idle
    reservation in zone-1 is not free to it; earlier workloads may take some first)."""
    page.goto(f"{live_url}/clusters/{demo.id}/workloads/team-a/llm-pretrain/")
    rows = page.locator("#per-domain tbody tr")
    shown = {
        rows.nth(i).locator("th").inner_text(): int(rows.nth(i).locator("td").nth(2).inner_text())
        for i in range(rows.count())
    }
    cells = demo.evaluation.result["heatmap"]
    others = {"team-b-t4", "team-c-g3-capacity"}
    assert any(c["reservation"] in others and not c["allocatedMilli"] for c in cells)
    assert shown
    for domain, free in shown.items():
        block = domain.split("/")[-1]
        usable = [
            c
            for c in cells
            if c["block"] == block and not c["allocatedMilli"] and c["reservation"] not in others
        ]
        assert free <= len(usable), domain


def test_it_says_agree_only_where_naive_and_joint_do_the_same_for_the_workload(
    page: Any, live_url: str, demo: Any
) -> None:
    page.goto(f"{live_url}/clusters/{demo.id}/pending/")
    workloads = demo.evaluation.result["workloads"]
    differing = [
        w["name"]
        for w in workloads
        if not w["disagreements"]
        and not w["naive"].get("strandedGpus")
        and (w["naive"]["addNodes"] != w["joint"]["addNodes"] or w["joint"]["reservations"])
    ]
    assert differing
    for name in differing:
        row = page.locator(f'details.pending-row[data-workload="{name}"]')
        said = row.locator("[data-agreement]").text_content().strip()
        assert said != "agree" and "the joint plan" in said, name
