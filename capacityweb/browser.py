"""The Chromium that pages are checked and charts are drawn in (browser tests, the
heatmap benchmark, the digest's chart through kaleido).

One place for the binary and its flags, so every user renders in the same
browser the same way: headless, without the sandbox (CI runs as root in a
container) and without the background services that would reach the network.

Which binary, first found wins::

    CHROMIUM_PATH                  set by the operator (must exist)
    the system's                   chromium / chromium-browser / google-chrome on PATH,
                                   /usr/bin/chromium, macOS's Chromium or Chrome app
    Playwright's                   what `playwright install chromium` downloaded
                                   (PLAYWRIGHT_BROWSERS_PATH or its default cache)
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
INSTALL_HINT = (
    "needs Chromium: `sudo apt-get install chromium` (Debian; Ubuntu: chromium-browser), "
    "`brew install --cask chromium` (macOS), or `.venv/bin/playwright install chromium`; "
    "or set CHROMIUM_PATH"
)
SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
SYSTEM_PATHS = (
    "/usr/bin/chromium",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
)
# Playwright's download layout: chromium-<revision>/<platform dir>/<binary>.
PLAYWRIGHT_BINARIES = (
    "chrome-linux64/chrome",
    "chrome-linux/chrome",
    "chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
    "chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
    "chrome-mac/Chromium.app/Contents/MacOS/Chromium",
)


def _executable(path: str | Path) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def _system_chromium() -> str | None:
    for name in SYSTEM_NAMES:
        if found := shutil.which(name):
            return found
    return next((path for path in SYSTEM_PATHS if _executable(path)), None)


def _playwright_cache() -> Path:
    if configured := os.environ.get("PLAYWRIGHT_BROWSERS_PATH"):
        return Path(configured)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ms-playwright"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ms-playwright"


def _revision(directory: Path) -> int:
    number = directory.name.rpartition("-")[2]
    return int(number) if number.isdigit() else 0


def _playwright_chromium() -> str | None:
    """The newest Chromium revision `playwright install chromium` left in its cache."""
    revisions = sorted(_playwright_cache().glob("chromium-*"), key=_revision, reverse=True)
    for revision in revisions:
        for binary in PLAYWRIGHT_BINARIES:
            if _executable(revision / binary):
                return str(revision / binary)
    return None


def chromium_path() -> str | None:
    """The Chromium binary to use, or None when there is none (see INSTALL_HINT).

    A CHROMIUM_PATH that does not exist is None too: a wrong setting is not
    quietly replaced by another browser.
    """
    if configured := os.environ.get("CHROMIUM_PATH"):
        return configured if _executable(configured) else None
    return _system_chromium() or _playwright_chromium()


def missing_chromium_message() -> str:
    """One line saying why there is no Chromium and how to install one."""
    if configured := os.environ.get("CHROMIUM_PATH"):
        return f"CHROMIUM_PATH={configured} is not an executable file; {INSTALL_HINT}"
    return INSTALL_HINT
