"""Issue 27 item 5: `manage.py ingest` in a second shell reaches a page open on `make run`.

Two processes, as a user has them: `rundemo` (SQLite, embedded worker, in-process
channel layer) serving Chromium, and `manage.py ingest` run beside it. The CLI's
publish goes to its own in-process layer, which no browser listens to; the page
learns of the new evaluation by asking its socket after LIVE_POLL_SECONDS without a
message (static/js/live.js). Before that, the page received nothing (measured: 0
messages in 175 s).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.embedded_server import DEMO_PASSWORD, ingest, rundemo, sqlite_environment, write_cluster

pytestmark = [pytest.mark.browser]

POLL_SECONDS = 2
UPDATE_TIMEOUT_MS = 30_000


@pytest.fixture
def lab(tmp_path: Path) -> dict[str, Any]:
    """A files-source cluster `lab` ingested (and evaluated) once by the CLI."""
    environment = sqlite_environment(tmp_path, LIVE_POLL_SECONDS=str(POLL_SECONDS))
    source = tmp_path / "lab"
    source.mkdir()
    write_cluster(source / "objects.json", nodes=4, pending=2, tag="first")
    created = ingest(environment, "lab", "--source", "files", "--path", str(source))
    assert created.returncode == 0, created.stderr
    return {"environment": environment, "source": source, "tmp": tmp_path}


def sign_in(page: Any, base_url: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(f"{base_url}/")


def test_an_open_page_shows_the_evaluation_of_an_ingest_run_from_a_second_shell(
    browser: Any, lab: dict[str, Any]
) -> None:
    with rundemo(lab["environment"], lab["tmp"] / "rundemo.log") as base_url:
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_in(page, base_url)
        page.goto(f"{base_url}/clusters/1/pending/")
        page.wait_for_selector('#live-status[data-state="open"]')
        shown = page.get_attribute("#live-status", "data-evaluation")
        assert "wait-002" not in page.inner_text("main")
        write_cluster(lab["source"] / "objects.json", nodes=4, pending=3, tag="second")
        done = ingest(lab["environment"], "lab")
        assert done.returncode == 0, done.stderr
        (newer,) = re.findall(r"evaluation (\d+):", done.stdout)
        assert newer != shown
        page.wait_for_function(
            f"() => document.getElementById('live-status').dataset.evaluation === '{newer}' "
            "&& window.capacityweb.updates > 0",
            timeout=UPDATE_TIMEOUT_MS,
        )
        assert "wait-002" in page.inner_text("main")  # the pod only the new snapshot has
        assert errors == []
