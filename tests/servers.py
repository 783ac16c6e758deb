"""Helpers for tests that start servers of their own on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

SERVER_START_TIMEOUT_SECONDS = 60.0


def free_port() -> int:
    """A port nothing listens on now (the OS picks it), on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _log_tail(log_path: Path | None) -> str:
    return f":\n{log_path.read_text()}" if log_path else ""


def wait_for_http(url: str, server: subprocess.Popen[bytes], log_path: Path | None = None) -> None:
    """Return once ``url`` answers; fail (with the server's log) if it exits or never does."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"server exited with {server.returncode}{_log_tail(log_path)}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"server did not answer {url}{_log_tail(log_path)}")
