"""The system Chromium that pages are checked in (browser tests, the heatmap benchmark).

One place for the binary and its flags, so the tests and the benchmark render
in the same browser the same way: Debian's ``chromium`` package, headless,
without the sandbox (CI runs as root in a container) and without the
background services that would reach the network.
"""

from __future__ import annotations

import os

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def chromium_path() -> str:
    """``CHROMIUM_PATH``, or where Debian's ``chromium`` package installs the binary."""
    return os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
