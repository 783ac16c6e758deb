"""Every page works offline: Chromium records each request a page makes, none leaves the host.

A dashboard behind a firewall, or a laptop on a train, must not depend on a CDN:
the API docs once loaded Swagger UI and ReDoc ``@latest`` from one and were
blank without it. The pages are visited as a user would, signed in and signed
out, and every request and WebSocket they open is recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects

pytestmark = [pytest.mark.browser, pytest.mark.integration]

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
NOT_NETWORK_SCHEMES = {"data", "blob", "about"}
DRAWN_TIMEOUT_MS = 15_000
LIVE = '#live-status[data-state="open"]'
SIGNED_IN_PAGES = {  # path → what the page draws once its scripts have run (None: plain HTML)
    "/": None,
    "/clusters/{cluster}/topology/": LIVE,
    "/clusters/{cluster}/pending/": LIVE,
    "/clusters/{cluster}/reservations/": LIVE,
    "/clusters/{cluster}/recommendations/": LIVE,
    "/clusters/{cluster}/workloads/team-a/finetune/": LIVE,
    "/help/": None,
    "/api/docs/": "#swagger-ui .opblock",
    "/api/redoc/": 'a[href="https://redocly.com/redoc/"]',  # ReDoc's sidebar credit and logo
    "/api/v1/": None,
    "/admin/": None,
}
SIGNED_OUT_PAGES = ("/accounts/login/", "/admin/login/")


@pytest.fixture
def cluster(transactional_db: None) -> Any:
    """The reservation scenario (an idle reservation, a pending pod), ingested and evaluated."""
    cluster = make_cluster("offline")
    ingest_and_evaluate(cluster, scenario_objects("reservation-idle-nodes"))
    return cluster


@pytest.fixture
def signed_out_page(browser: Any, live_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def record_requests(page: Any) -> list[str]:
    """URLs of every request and WebSocket the page's context opens from now on."""
    urls: list[str] = []
    page.context.on("request", lambda request: urls.append(request.url))
    page.on("websocket", lambda socket: urls.append(socket.url))
    return urls


def leaving_the_host(urls: list[str]) -> list[str]:
    return [
        url
        for url in urls
        if urlsplit(url).scheme not in NOT_NETWORK_SCHEMES
        and urlsplit(url).hostname not in LOCAL_HOSTS
    ]


def visit(page: Any, url: str, drawn: str | None = None) -> bool:
    """Open ``url``, wait until its scripts have drawn ``drawn`` and fetched all they were
    going to; False when ``drawn`` never appeared."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(url)
    try:
        if drawn is not None:
            page.locator(drawn).first.wait_for(state="attached", timeout=DRAWN_TIMEOUT_MS)
    except PlaywrightTimeout:
        return False
    finally:
        page.wait_for_load_state("networkidle")
    return True


def test_it_requests_nothing_beyond_the_host_from_any_signed_in_page(
    page: Any, live_url: str, cluster: Any
) -> None:
    urls = record_requests(page)

    not_drawn = [
        path
        for path, drawn in SIGNED_IN_PAGES.items()
        if not visit(page, live_url + path.format(cluster=cluster.id), drawn)
    ]

    visited = {urlsplit(url).path for url in urls}
    assert {path.format(cluster=cluster.id) for path in SIGNED_IN_PAGES} <= visited
    leaving = leaving_the_host(urls)
    assert leaving == [], "requests beyond the host:\n" + "\n".join(leaving)
    assert not_drawn == []


def test_it_requests_nothing_beyond_the_host_from_the_sign_in_pages(
    signed_out_page: Any, live_url: str
) -> None:
    urls = record_requests(signed_out_page)

    for path in SIGNED_OUT_PAGES:
        visit(signed_out_page, live_url + path)

    assert {urlsplit(url).path for url in urls} >= set(SIGNED_OUT_PAGES)
    leaving = leaving_the_host(urls)
    assert leaving == [], "requests beyond the host:\n" + "\n".join(leaving)


def test_it_draws_the_api_operations_in_swagger_ui(page: Any, live_url: str) -> None:
    page.goto(f"{live_url}/api/docs/")

    title = page.locator("#swagger-ui .info .title")
    title.wait_for(state="visible")
    operation = page.locator("#swagger-ui .opblock-summary-path", has_text="/api/v1/clusters/")
    operation.first.wait_for(state="visible")
    assert "capacityweb API" in title.inner_text()
    assert page.errors == []


def test_it_draws_the_api_reference_in_redoc(page: Any, live_url: str) -> None:
    page.goto(f"{live_url}/api/redoc/")

    heading = page.locator("h1", has_text="capacityweb API")
    heading.wait_for(state="visible")
    search = page.get_by_placeholder("Search...")
    search.wait_for(state="visible")
    assert page.errors == []
