"""Helpers for tests that start servers of their own on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

SERVER_START_TIMEOUT_SECONDS = 60.0


def free_port() -> int:
    """A port nothing listens on now (the OS picks it), on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def manage_py_server(
    arguments: list[str], environment: Mapping[str, str], log_path: Path, ready_url: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``python manage.py <arguments>`` from the repository, its output in ``log_path``;
    yields once ``ready_url`` answers, stops it (by its PID) afterwards."""
    from tests.conftest import REPO_ROOT, stop_process

    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", *arguments],
            cwd=REPO_ROOT,
            env=dict(environment),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_http(ready_url, server, log_path)
        yield server
    finally:
        stop_process(server)


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
