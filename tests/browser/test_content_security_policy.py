"""Every page of the demo carries the Content-Security-Policy and breaks none of it.

Chromium opens each page (signed in, then the sign-in pages signed out), waits
until its scripts have drawn and its socket is open, and records every
``securitypolicyviolation`` event and every console error or warning: an inline
script, a script or socket of another origin, an ``eval`` would each show as
one. The header is read off each page's own response.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.integration]

DRAWN_TIMEOUT_MS = 15_000
LIVE = '[data-ws-path][data-state="open"]'
CLUSTER_PAGES = {  # path under /clusters/<id>/ → what the page draws once its scripts ran
    "topology/": "#heatmap[data-rendered]",
    "pending/": LIVE,
    "reservations/": LIVE,
    "recommendations/": LIVE,
    "utilisation/": None,
    "node-groups/": LIVE,
    "queues/": LIVE,
    "autoscaler-events/": LIVE,
    "teams/": LIVE,
    "workload/?workload=no-such/workload": None,
}
SITE_PAGES = {
    "/": LIVE,
    "/help/": None,
    "/api/docs/": "#swagger-ui .opblock",
    "/api/redoc/": "h1",
    "/api/v1/": None,
    "/api/v1/clusters/": None,
    "/admin/": None,
    "/admin/auth/user/": None,
    "/admin/auth/user/add/": None,
    "/no-such-page/": None,
}
SIGNED_OUT_PAGES = ("/accounts/login/", "/admin/login/")
NOT_FOUND = "Failed to load resource: the server responded with a status of 404"
REQUIRED_DIRECTIVES = (
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
)
RECORD_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  const where = `${event.sourceFile}:${event.lineNumber}`;
  window.reportViolation(`${event.violatedDirective} blocked ${event.blockedURI} at ${where}`);
});
"""


class PageWatch:
    """What one tab reports: policy violations, console errors and warnings, the header."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.complaints: list[str] = []  # violations, console errors, pages not drawn
        self.policies: dict[str, str | None] = {}
        page.expose_function("reportViolation", self.violation)
        page.add_init_script(RECORD_VIOLATIONS)
        page.on("console", self.console)
        page.on("pageerror", lambda error: self.complaints.append(f"page error: {error}"))

    def violation(self, text: str) -> None:
        self.complaints.append(f"{self.page.url}: violation: {text}")

    def console(self, message: Any) -> None:
        """Errors and warnings, but for a 404 (the 404 page asked for, the admin's favicon)."""
        if message.type in ("error", "warning") and not message.text.startswith(NOT_FOUND):
            self.complaints.append(f"{self.page.url}: {message.type}: {message.text}")

    def visit(self, url: str, drawn: str | None) -> None:
        """Open ``url`` and wait until its scripts have drawn ``drawn`` (else note it)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        response = self.page.goto(url)
        self.policies[url] = response.headers.get("content-security-policy")
        try:
            if drawn is not None:
                self.page.locator(drawn).first.wait_for(state="attached", timeout=DRAWN_TIMEOUT_MS)
        except PlaywrightTimeout:
            self.complaints.append(f"{url}: {drawn} never drawn")
        finally:
            self.page.wait_for_load_state("networkidle")


@pytest.fixture
def signed_in(browser: Any, live_url: str, transactional_db: None) -> Iterator[PageWatch]:
    from django.contrib.auth.models import User

    User.objects.create_user("csp", password=PASSWORD, is_staff=True, is_superuser=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        watch = PageWatch(context.new_page())
        watch.page.goto(f"{live_url}/accounts/login/")
        watch.page.fill("input[name=username]", "csp")
        watch.page.fill("input[name=password]", PASSWORD)
        watch.page.click("button[type=submit], input[type=submit]")
        watch.page.wait_for_url(f"{live_url}/")
        yield watch
    finally:
        context.close()


@pytest.fixture
def signed_out(browser: Any, live_url: str) -> Iterator[PageWatch]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield PageWatch(context.new_page())
    finally:
        context.close()


def demo_page_urls(watch: PageWatch, live_url: str, cluster_id: int) -> dict[str, str | None]:
    """Every page of the demo: the site's, each cluster page, a workload's own page."""
    cluster = f"{live_url}/clusters/{cluster_id}/"
    urls = {live_url + path: drawn for path, drawn in SITE_PAGES.items()}
    urls |= {cluster + path: drawn for path, drawn in CLUSTER_PAGES.items()}
    watch.page.goto(cluster + "pending/")
    workload = watch.page.locator("a.workload-link").first.get_attribute("href")
    urls[live_url + workload] = LIVE
    return urls


def policy_gaps(policies: dict[str, str | None]) -> list[str]:
    return [
        f"{url}: {policy!r}"
        for url, policy in policies.items()
        if policy is None or not all(directive in policy for directive in REQUIRED_DIRECTIVES)
    ]


def test_it_serves_every_demo_page_under_the_policy_without_a_violation(
    signed_in: PageWatch, live_url: str, demo: Any
) -> None:
    for url, drawn in demo_page_urls(signed_in, live_url, demo.id).items():
        signed_in.visit(url, drawn)

    assert policy_gaps(signed_in.policies) == []
    assert signed_in.complaints == []


def test_it_serves_the_sign_in_pages_under_the_policy_without_a_violation(
    signed_out: PageWatch, live_url: str
) -> None:
    for path in SIGNED_OUT_PAGES:
        signed_out.visit(live_url + path, None)

    assert policy_gaps(signed_out.policies) == []
    assert signed_out.complaints == []


def test_it_names_the_pages_websocket_origin_in_connect_src(
    signed_out: PageWatch, live_url: str
) -> None:
    signed_out.visit(f"{live_url}/accounts/login/", None)

    policy = signed_out.policies[f"{live_url}/accounts/login/"] or ""
    websocket_origin = live_url.replace("http://", "ws://")
    assert f"connect-src 'self' {websocket_origin}" in policy
