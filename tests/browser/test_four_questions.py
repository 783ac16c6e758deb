"""A new user's four questions, answered from the overview in at most 3 clicks on the demo
(issue 34), each figure met on the way agreeing with the overview's:

(a) why is it pending      overview → Pending → the workload: its verdict and diagnosis
(b) would scaling help, at what cost   overview → Recommendations: the joint plan's nodes
(c) what do I apply        overview → Recommendations: a card's patch (YAML)
(d) which reserved GPUs sit idle       overview → Reservations: idle reserved GPUs now
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def open_card_link(page: Any, live_url: str, demo: Any, label: str) -> None:
    page.goto(f"{live_url}/")
    page.click(f'article[data-cluster="{demo.id}"] p.links a:text-is("{label}")')


def test_it_answers_why_a_workload_is_pending_in_two_clicks(
    page: Any, live_url: str, demo: Any
) -> None:
    open_card_link(page, live_url, demo, "Pending")  # click 1
    page.locator("details.pending-row summary a.workload-link").first.click()  # click 2
    story = page.locator("#workload-story")
    assert story.locator(".verdict").inner_text().strip() != ""
    assert story.locator("#workload-diagnosis").inner_text().strip() not in ("", "—")
    assert page.errors == []


def test_it_answers_whether_scaling_helps_and_its_cost_in_one_click(
    page: Any, live_url: str, demo: Any
) -> None:
    open_card_link(page, live_url, demo, "Recommendations")  # click 1
    joint = page.locator('[data-figure="joint-per-hour"]').first.inner_text()  # "$420.00/h"
    assert float("".join(c for c in joint if c.isdigit() or c == ".")) == pytest.approx(
        demo.evaluation.result["cost"]["jointPerHour"]
    )
    assert page.errors == []


def test_it_answers_what_to_apply_in_one_click(page: Any, live_url: str, demo: Any) -> None:
    open_card_link(page, live_url, demo, "Recommendations")  # click 1
    patch = page.locator("article.recommendation pre code").first.inner_text()
    assert "kind:" in patch and "metadata:" in patch
    assert page.errors == []


def test_it_answers_which_reserved_gpus_sit_idle_in_one_click(
    page: Any, live_url: str, demo: Any
) -> None:
    page.goto(f"{live_url}/")
    card = page.locator(f'article[data-cluster="{demo.id}"]')
    on_overview = card.locator('dd[data-counter="gpusIdleReserved"]').inner_text()
    open_card_link(page, live_url, demo, "Reservations")  # click 1
    on_reservations = page.locator('dd[data-counter="gpusIdleReserved"]').inner_text()
    assert on_reservations == on_overview != "0"
    assert page.errors == []
