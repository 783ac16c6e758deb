"""Issue 27 item 3: Postgres crashes and restarts mid-evaluation; the latest snapshot still
ends up evaluated, by the evaluation task's own retry.

A throwaway Postgres and Redis, a real `celery worker` process on them. The test
holds a SHARE lock on ``recommender_workloadverdict`` so the worker's evaluation
waits inside its write transaction, sees it waiting, and restarts Postgres with
``-m immediate`` (a crash). The task meets an OperationalError and retries after
its backoff; before the retry it failed for good and the snapshot stayed "being
evaluated" forever.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import REPO_ROOT, environment_without_services, run_manage, run_python
from tests.servers import ThrowawayPostgres, ThrowawayRedis

DATABASE = "capacityweb_retry"
SCENARIO = REPO_ROOT / "tests" / "scenarios" / "reservation-idle-nodes.yaml"
WAIT_SECONDS = 60.0
INGEST = f"""
import django
from datetime import UTC, datetime
django.setup()
from topology.ingest.files import read_objects
from topology.models import Cluster
from topology import services
cluster = Cluster.objects.create(name="retry", source_kind="files")
snapshot = services.ingest_snapshot(
    cluster=cluster, taken_at=datetime(2026, 12, 2, tzinfo=UTC),
    objects=read_objects({str(SCENARIO)!r}),
)
print(snapshot.pk)
"""
ENQUEUE = """
import django
django.setup()
from recommender.tasks import evaluate_snapshot
evaluate_snapshot.delay({snapshot_id})
"""


@pytest.fixture
def services(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A migrated throwaway Postgres, a throwaway Redis, and the environment naming them."""
    postgres = ThrowawayPostgres()
    redis = ThrowawayRedis()
    postgres.init()
    redis.start()
    try:
        with psycopg.connect(postgres.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        environment = environment_without_services(
            DATABASE_URL=postgres.url(DATABASE), REDIS_URL=redis.url(), EMBEDDED_WORKER="false"
        )
        migrated = run_manage("migrate", "--noinput", environment=environment)
        assert migrated.returncode == 0, migrated.stderr
        yield {"postgres": postgres, "environment": environment, "tmp": tmp_path}
    finally:
        redis.stop()
        redis.remove()
        postgres.stop()
        postgres.remove()


@pytest.fixture
def worker(services: dict[str, Any]) -> Iterator[Path]:
    """`celery worker` (solo pool) on the throwaway services; yields its log's path."""
    log_path = services["tmp"] / "worker.log"
    celery = Path(sys.executable).with_name("celery")
    arguments = [str(celery), "-A", "capacityweb", "worker", "--pool=solo", "-l", "INFO"]
    arguments += ["-n", f"retry-{uuid.uuid4().hex[:6]}@localhost", "--without-mingle"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*arguments, "--without-gossip"],
            cwd=REPO_ROOT,
            env=services["environment"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def query(postgres: ThrowawayPostgres, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(postgres.url(DATABASE), autocommit=True) as connection:
        return connection.execute(sql).fetchall()


def wait_for(condition: Any, what: str, log_path: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except psycopg.OperationalError:
            pass  # Postgres is restarting
        time.sleep(0.1)
    pytest.fail(f"{what} within {WAIT_SECONDS:.0f} s; worker log:\n{log_path.read_text()}")


def test_it_evaluates_the_snapshot_after_postgres_crashes_mid_evaluation(
    services: dict[str, Any], worker: Path
) -> None:
    postgres, environment = services["postgres"], services["environment"]
    ingested = run_python(INGEST, environment)
    assert ingested.returncode == 0, ingested.stderr
    snapshot_id = int(ingested.stdout.split()[-1])
    locker = psycopg.connect(postgres.url(DATABASE))
    try:
        locker.execute("LOCK TABLE recommender_workloadverdict IN SHARE MODE")
        enqueued = run_python(ENQUEUE.format(snapshot_id=snapshot_id), environment)
        assert enqueued.returncode == 0, enqueued.stderr
        waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        wait_for(lambda: query(postgres, waiting)[0][0], "no evaluation waited", worker)
        postgres.restart()
    finally:
        locker.close()
    evaluated = f"SELECT count(*) FROM recommender_evaluation WHERE snapshot_id = {snapshot_id}"
    wait_for(lambda: query(postgres, evaluated) == [(1,)], "no evaluation stored", worker)
    log = worker.read_text()
    assert "OperationalError" in log or "terminating connection" in log
    assert "retry in" in log
