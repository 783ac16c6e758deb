"""A real dashboard for Chromium: `manage.py rundemo` (Daphne) on a free 127.0.0.1 port.

    pytest process ──(test DB on Postgres, Redis)──► rundemo subprocess: pages + sockets
         │                                                ▲
         └─ ingest_cluster.delay ─► celery worker ─► publish via Redis ─┘

The server and the worker read pytest-django's test database, so browser tests
are transactional (their rows are committed). Needs DATABASE_URL (Postgres),
REDIS_URL and Chromium; missing ones make the tests fail, naming what to set up.

Screenshots are always taken (and checked to be PNG images) but written only
when ``SCREENSHOTS_DIR`` is set (``make screenshots`` sets it to
docs/screenshots), so a test run never rewrites tracked files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from capacityweb.browser import CHROMIUM_ARGS, missing_chromium_message
from tests.conftest import (
    REPO_ROOT,
    chromium_path,
    services_missing,
    with_database_name,
)
from tests.servers import free_port, manage_py_server

PASSWORD = "browser-password-1"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def screenshot(page: Any, name: str, *, full_page: bool = True) -> bytes:
    """A PNG of ``page``; saved as ``SCREENSHOTS_DIR/<name>.png`` when that is set."""
    image: bytes = page.screenshot(full_page=full_page)
    assert image.startswith(PNG_SIGNATURE) and len(image) > 1000, f"{name}: not a PNG image"
    if folder := os.environ.get("SCREENSHOTS_DIR"):
        target = Path(folder)
        if not target.is_absolute():
            target = REPO_ROOT / target
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{name}.png").write_bytes(image)
    return image


@pytest.fixture(scope="session")
def live_url(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a Daphne server (rundemo, static files served) on the test database."""
    if missing := services_missing():
        pytest.fail(f"browser tests need {', '.join(missing)}", pytrace=False)
    from django.conf import settings

    port = free_port()
    log_path = tmp_path_factory.mktemp("rundemo") / "server.log"
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        ),
        "EMBEDDED_WORKER": "false",
        "DEBUG": "true",
    }
    arguments = ["rundemo", "--port", str(port)]
    ready = f"http://127.0.0.1:{port}/accounts/login/"
    with manage_py_server(arguments, environment, log_path, ready):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Chromium for one test.

    Playwright's sync API runs an event loop in this thread while it is open, which
    breaks every later ``async_to_sync`` call in the process (pytest-django reorders
    transactional tests, so other packages' tests run between browser tests). So the
    driver lives for one test only, and so does the async-unsafe allowance the ORM
    calls between page actions need.
    """
    executable = chromium_path()
    if executable is None:
        pytest.fail(missing_chromium_message(), pytrace=False)
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, live_url: str, transactional_db: None) -> Iterator[Any]:
    """A signed-in page whose console errors and page errors are collected in ``page.errors``."""
    from django.contrib.auth.models import User

    User.objects.create_user("viewer", password=PASSWORD, is_staff=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.errors = []
    tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    tab.goto(f"{live_url}/accounts/login/")
    tab.fill("input[name=username]", "viewer")
    tab.fill("input[name=password]", PASSWORD)
    tab.click("button[type=submit], input[type=submit]")
    tab.wait_for_url(f"{live_url}/")
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture
def demo(transactional_db: None) -> Any:
    """The demo cluster (``load_demo``) with its evaluation as ``.evaluation``."""
    from django.db import connection
    from django.utils import timezone

    from capacityweb.demo import load_demo

    def load() -> Any:
        try:
            return load_demo(now=timezone.now())
        finally:
            connection.close()

    # Playwright's event loop runs in this thread; load_demo publishes through async_to_sync.
    with ThreadPoolExecutor(max_workers=1) as worker:
        cluster, evaluation = worker.submit(load).result()
    cluster.evaluation = evaluation
    return cluster
