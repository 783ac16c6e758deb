"""Issue 27: `make run` (SQLite) holds concurrent writers.

Two shells run `manage.py ingest` (each a new snapshot and its evaluation, a few
thousand rows) while the server's embedded worker ingests and evaluates on request and
four readers load pages and API lists, all on one SQLite file. Before WAL, a busy
timeout and IMMEDIATE transactions, pages answered 500 "database is locked" and CLI
ingests failed the same way.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.embedded_server import ingest, rundemo, signed_in, sqlite_environment, write_cluster

NODES = 300
PENDING = 20
INGEST_ROUNDS = 4
READERS = 4


def page_urls(base_url: str, cluster_id: int) -> list[str]:
    return [
        f"{base_url}/",
        f"{base_url}/clusters/{cluster_id}/pending/",
        f"{base_url}/clusters/{cluster_id}/topology/",
        f"{base_url}/clusters/{cluster_id}/recommendations/",
        f"{base_url}/api/v1/pending-workloads/?cluster={cluster_id}",
        f"{base_url}/api/v1/evaluations/?cluster={cluster_id}",
    ]


def read_pages(session: Any, urls: list[str], stop: threading.Event, statuses: list) -> None:
    while not stop.is_set():
        for url in urls:
            statuses.append((url, session.get(url, timeout=120).status_code))


def ingest_rounds(environment: dict[str, str], name: str, source: Path, outcomes: list) -> None:
    for round_number in range(INGEST_ROUNDS):
        write_cluster(source / "objects.json", nodes=NODES, pending=PENDING, tag=f"r{round_number}")
        done = ingest(environment, name)
        outcomes.append((name, round_number, done.returncode, done.stderr[-2000:]))


def request_ingests(session: Any, base_url: str, cluster_id: int, statuses: list) -> None:
    """The server's own worker ingests too (as beat has it do), between the CLI's."""
    token = session.cookies.get("csrftoken")
    for _ in range(INGEST_ROUNDS):
        response = session.post(
            f"{base_url}/api/v1/clusters/{cluster_id}/ingest/",
            headers={"X-CSRFToken": token, "Referer": f"{base_url}/"},
            timeout=120,
        )
        statuses.append(("POST ingest", response.status_code))


@pytest.fixture
def two_clusters(tmp_path: Path) -> dict[str, Any]:
    """A migrated SQLite file with two files-source clusters, each ingested once."""
    environment = sqlite_environment(tmp_path)
    sources = {}
    for name in ("lab-a", "lab-b"):
        source = tmp_path / name
        source.mkdir()
        write_cluster(source / "objects.json", nodes=NODES, pending=PENDING, tag="r-first")
        created = ingest(environment, name, "--source", "files", "--path", str(source))
        assert created.returncode == 0, created.stderr
        sources[name] = source
    return {"environment": environment, "sources": sources}


def test_it_answers_every_page_while_two_shells_and_the_worker_write(
    two_clusters: dict[str, Any], tmp_path: Path
) -> None:
    environment = two_clusters["environment"]
    log_path = tmp_path / "rundemo.log"
    with rundemo(environment, log_path) as base_url:
        session = signed_in(base_url)
        clusters = session.get(f"{base_url}/api/v1/clusters/", timeout=30).json()["results"]
        ids = {cluster["name"]: cluster["id"] for cluster in clusters}
        statuses: list = []
        outcomes: list = []
        stop = threading.Event()
        readers = [
            threading.Thread(
                target=read_pages,
                args=(signed_in(base_url), page_urls(base_url, ids["lab-a"]), stop, statuses),
            )
            for _ in range(READERS)
        ]
        writers = [
            threading.Thread(target=ingest_rounds, args=(environment, name, source, outcomes))
            for name, source in two_clusters["sources"].items()
        ]
        writers.append(
            threading.Thread(
                target=request_ingests, args=(session, base_url, ids["lab-b"], statuses)
            )
        )
        for thread in [*readers, *writers]:
            thread.start()
        for thread in writers:
            thread.join()
        stop.set()
        for thread in readers:
            thread.join()
    failed = [(url, status) for url, status in statuses if status >= 500]
    assert len(statuses) > 50 and failed == [], failed[:10]
    assert [o for o in outcomes if o[2] != 0] == []
    assert len(outcomes) == 2 * INGEST_ROUNDS
    assert "database is locked" not in log_path.read_text()
