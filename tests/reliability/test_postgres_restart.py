"""Postgres crashes and restarts in the middle of an ingest and of an evaluation write.

A throwaway Postgres (its own data directory and port) is migrated; a fresh
interpreter then ingests a scenario into it. To hit the write itself, not
just "some time during the run", the test holds a SHARE lock on the table the
child writes next: the child's INSERT/DELETE waits inside its transaction, the
test sees it waiting in pg_stat_activity, and restarts Postgres with
``-m immediate`` (a crash). The child fails; no row of the aborted write is
left; a retry completes with the whole snapshot / evaluation.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.conftest import REPO_ROOT, environment_without_services, run_manage
from tests.servers import ThrowawayPostgres

DATABASE = "capacityweb_fault"
SCENARIO = REPO_ROOT / "tests" / "scenarios" / "reservation-idle-nodes.yaml"
WAIT_SECONDS = 30.0
CHILD = """
import sys, django
from datetime import UTC, datetime
django.setup()
from topology.ingest.files import read_objects
from topology.models import Cluster, Snapshot
from topology import services
from recommender.services import store_evaluation
step, scenario = sys.argv[1], sys.argv[2]
cluster, _ = Cluster.objects.get_or_create(name="fault", defaults={"source_kind": "files"})
if step == "ingest":
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=datetime(2026, 12, 2, tzinfo=UTC), objects=read_objects(scenario)
    )
else:
    snapshot = store_evaluation(snapshot=Snapshot.objects.get(cluster=cluster))
print("stored", snapshot.pk)
"""


@pytest.fixture(scope="module")
def postgres() -> Iterator[ThrowawayPostgres]:
    server = ThrowawayPostgres()
    server.init()
    try:
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        migrated = run_manage("migrate", "--noinput", environment=child_environment(server))
        assert migrated.returncode == 0, migrated.stderr
        yield server
    finally:
        server.stop()
        server.remove()


def child_environment(server: ThrowawayPostgres) -> dict[str, str]:
    return environment_without_services(DATABASE_URL=server.url(DATABASE), EMBEDDED_WORKER="false")


def start_child(server: ThrowawayPostgres, step: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, step, str(SCENARIO)],
        cwd=REPO_ROOT,
        env=child_environment(server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def query(server: ThrowawayPostgres, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(server.url(DATABASE), autocommit=True) as connection:
        return connection.execute(sql).fetchall()


def wait_until_blocked(server: ThrowawayPostgres, child: subprocess.Popen[str]) -> None:
    """Poll from a connection of its own: pg_stat_activity is frozen inside a transaction."""
    deadline = time.monotonic() + WAIT_SECONDS
    sql = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    while time.monotonic() < deadline:
        if child.poll() is not None:
            pytest.fail(f"child finished before blocking: {child.communicate()}")
        if query(server, sql)[0][0]:
            return
        time.sleep(0.05)
    pytest.fail("the child never blocked on the locked table")


def crash_while_writing(server: ThrowawayPostgres, step: str, table: str) -> str:
    """Start ``step``, let it block writing ``table``, crash Postgres; the child's stderr."""
    locker = psycopg.connect(server.url(DATABASE))
    locker.execute(f"LOCK TABLE {table} IN SHARE MODE")
    child = start_child(server, step)
    try:
        wait_until_blocked(server, child)
        server.restart()
        _stdout, stderr = child.communicate(timeout=WAIT_SECONDS)
    finally:
        if child.poll() is None:
            child.kill()
        locker.close()
    assert child.returncode != 0, "the child committed although Postgres crashed under it"
    return stderr


def run_to_completion(server: ThrowawayPostgres, step: str) -> None:
    child = start_child(server, step)
    stdout, stderr = child.communicate(timeout=WAIT_SECONDS * 2)
    assert child.returncode == 0, stderr
    assert "stored" in stdout


def test_it_stores_no_snapshot_when_postgres_crashes_mid_insert_and_all_on_retry(
    postgres: ThrowawayPostgres,
) -> None:
    stderr = crash_while_writing(postgres, "ingest", "topology_snapshot")
    assert "OperationalError" in stderr
    assert query(postgres, "SELECT count(*) FROM topology_snapshot") == [(0,)]
    run_to_completion(postgres, "ingest")
    rows = query(
        postgres,
        "SELECT (object_counts->>'nodes')::int, jsonb_array_length(model_json->'cluster'->'nodes') "
        "FROM topology_snapshot",
    )
    assert len(rows) == 1
    assert rows[0][0] == rows[0][1] > 0


def test_it_stores_no_half_evaluation_when_postgres_crashes_mid_write_and_all_on_retry(
    postgres: ThrowawayPostgres,
) -> None:
    if query(postgres, "SELECT count(*) FROM topology_snapshot") == [(0,)]:
        run_to_completion(postgres, "ingest")
    crash_while_writing(postgres, "evaluate", "recommender_workloadverdict")
    assert query(postgres, "SELECT count(*) FROM recommender_evaluation") == [(0,)]
    run_to_completion(postgres, "evaluate")
    verdicts = query(postgres, "SELECT count(*) FROM recommender_workloadverdict")[0][0]
    workloads = query(
        postgres, "SELECT jsonb_array_length(result->'workloads') FROM recommender_evaluation"
    )
    assert workloads == [(verdicts,)]
    assert verdicts > 0
