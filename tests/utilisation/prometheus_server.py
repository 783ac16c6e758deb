"""A real Prometheus server for the tests, scraping the stand-in dcgm-exporter every second.

Debian's ``prometheus`` package (``apt-get install prometheus``); the tests FAIL
with that hint when the binary is missing, never skip. Both processes listen on
127.0.0.1 on free ports, live in a temporary directory and are stopped by PID.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, stop_process
from tests.servers import free_port, wait_for_http

FIXTURE = Path(__file__).parent / "fixtures" / "dcgm-exporter-metrics.txt"
INSTALL_HINT = (
    "prometheus not found on PATH: the utilisation tests query a real Prometheus; "
    "install it (Debian/Ubuntu: `apt-get install prometheus`, macOS: `brew install "
    "prometheus`) or put its binary on PATH"
)
CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dcgm-exporter
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


@dataclass(frozen=True)
class RunningPrometheus:
    url: str
    first_scrape: float  # epoch seconds of the first sample it holds
    exporter_url: str  # the stand-in dcgm-exporter's base URL


def prometheus_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail(INSTALL_HINT)
    return binary


def _first_scrape(url: str, deadline: float) -> float:
    """Epoch seconds of the first scrape, once one has been stored."""
    query = f"{url}/api/v1/query?query=timestamp(up%7Bjob%3D%22dcgm-exporter%22%7D%3D%3D1)"
    while time.monotonic() < deadline:
        with urllib.request.urlopen(query, timeout=2) as response:
            result = json.load(response)["data"]["result"]
        if result:
            return float(result[0]["value"][1])
        time.sleep(0.2)
    pytest.fail("prometheus never scraped the stand-in dcgm-exporter")


@contextmanager
def prometheus_scraping_dcgm(fixture: Path = FIXTURE) -> Iterator[RunningPrometheus]:
    """Start the exporter and a Prometheus scraping it; yield once one scrape is stored."""
    binary = prometheus_binary()
    directory = Path(tempfile.mkdtemp(prefix="capacityweb-prometheus-"))
    exporter_port, port = free_port(), free_port()
    (directory / "prometheus.yml").write_text(CONFIG.format(port=exporter_port))
    exporter = subprocess.Popen(
        [sys.executable, "-m", "tests.utilisation.dcgm_exporter", str(fixture), str(exporter_port)],
        cwd=REPO_ROOT,
    )
    log_path = directory / "prometheus.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [
                binary,
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            cwd=directory,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"http://127.0.0.1:{exporter_port}/metrics", exporter)
        wait_for_http(f"{url}/-/ready", server, log_path)
        yield RunningPrometheus(
            url, _first_scrape(url, time.monotonic() + 30), f"http://127.0.0.1:{exporter_port}"
        )
    finally:
        stop_process(server)
        stop_process(exporter)
        shutil.rmtree(directory, ignore_errors=True)
