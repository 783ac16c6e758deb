"""Issue 28 item 6: a prefork worker's child past EVALUATION_TIME_LIMIT_SECONDS is killed,
and the snapshot is recorded as failed with the reason (by the worker's parent).

A real `celery worker` (prefork, one child) on REDIS_URL and the test database,
consuming a queue of its own so no other worker of the session takes the task; its
hard limit is 1 s (billiard checks it about once a second) and its soft limit far
above, so only the kill can stop the evaluation of a 2,000-node snapshot (several seconds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, stop_process, wait_for_worker, with_database_name
from tests.embedded_server import gpu_cluster_objects
from tests.web.fixtures import TAKEN_AT, make_cluster

pytestmark = [pytest.mark.integration]

QUEUE = f"hard-limit-{uuid.uuid4().hex[:6]}"
WAIT_SECONDS = 60


@pytest.fixture
def prefork_worker(transactional_db: None, tmp_path: Path) -> Iterator[Path]:
    from django.conf import settings

    node_name = f"hard-limit-{uuid.uuid4().hex[:6]}@localhost"
    log_path = tmp_path / "worker.log"
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        ),
        "EMBEDDED_WORKER": "false",
        "EVALUATION_TIME_LIMIT_SECONDS": "1",
    }
    celery = Path(sys.executable).with_name("celery")
    arguments = [str(celery), "-A", "capacityweb", "worker", "--pool=prefork", "-c", "1"]
    arguments += [
        "-Q",
        QUEUE,
        "-n",
        node_name,
        "--without-mingle",
        "--without-gossip",
        "-l",
        "INFO",
    ]
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            arguments, cwd=REPO_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        wait_for_worker(worker, node_name, log_path)
        yield log_path
    finally:
        stop_process(worker)


def test_it_records_an_evaluation_killed_at_the_hard_time_limit_as_failed(
    prefork_worker: Path,
) -> None:
    from recommender.tasks import evaluate_snapshot
    from topology import services
    from topology.models import Snapshot

    objects: list[Any] = [
        ("test", item) for item in gpu_cluster_objects(nodes=2000, pending=40, tag="k")["items"]
    ]
    snapshot = services.ingest_snapshot(
        cluster=make_cluster("hard-limit"), taken_at=TAKEN_AT, objects=objects
    )
    # the sender's limit travels in the message (Celery's timelimit header), so it is given
    # here as the worker has it: this process read the default (360 s)
    evaluate_snapshot.apply_async(args=[snapshot.pk], queue=QUEUE, time_limit=1)
    deadline = time.monotonic() + WAIT_SECONDS
    while not Snapshot.objects.filter(pk=snapshot.pk, evaluation_state="failed").exists():
        assert time.monotonic() < deadline, prefork_worker.read_text()
        time.sleep(0.2)
    snapshot.refresh_from_db()
    assert snapshot.evaluation_note == (
        "killed: still running after EVALUATION_TIME_LIMIT_SECONDS=1 s"
    )
