"""At most one digest when a real Celery worker is SIGKILLed in the middle of sending.

The SMTP server holds its reply to DATA, so the worker is inside the SMTP
exchange — the message already received — when it is killed. A new worker
then runs the same task again (as a redelivery would): the delivery row
claimed before sending stops it, and the inbox holds exactly one copy.
"""

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from digest_period import PERIOD_START, make_period

from reservations.models import DigestDelivery

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
SMTP_HOLD_SECONDS = 20.0
TASK_TIMEOUT_SECONDS = 120.0


def start_worker(root, queue: str, smtp_url: str, log_path: Path) -> tuple[subprocess.Popen, str]:
    """A real ``celery worker`` on the test database, consuming only ``queue``."""
    from django.conf import settings

    node_name = f"digest-crash-{uuid.uuid4().hex[:8]}@localhost"
    environment = {
        **os.environ,
        "DATABASE_URL": root.with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        ),
        "EMBEDDED_WORKER": "false",
        "EMAIL_URL": smtp_url,
        "DASHBOARD_BASE_URL": "https://capacity.example.test",
    }
    celery = Path(sys.executable).with_name("celery")
    arguments = [str(celery), "-A", "capacityweb", "worker", "--pool=solo", "-Q", queue]
    arguments += ["-n", node_name, "--without-mingle", "--without-gossip", "-l", "INFO"]
    with log_path.open("ab") as log:
        worker = subprocess.Popen(
            arguments, cwd=root.REPO_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    root.wait_for_worker(worker, node_name, log_path)
    return worker, node_name


def test_it_sends_once_when_the_worker_is_killed_mid_send_and_restarted(
    request, smtp_server, tmp_path
):
    from capacityweb.celery import app
    from reservations.tasks import send_digest

    root = request.config.pluginmanager.get_plugin(str(ROOT_CONFTEST))
    period = make_period()
    smtp_server.handler.hold_seconds = SMTP_HOLD_SECONDS
    queue = f"digest-crash-{uuid.uuid4().hex[:8]}"
    log_path = tmp_path / "worker.log"
    arguments = (period.subscription.id, PERIOD_START.isoformat())

    worker, node_name = start_worker(root, queue, smtp_server.url, log_path)
    try:
        pid = app.control.inspect([node_name]).stats()[node_name]["pid"]
        send_digest.apply_async(arguments, queue=queue)
        assert smtp_server.handler.received.wait(TASK_TIMEOUT_SECONDS), log_path.read_text()
        os.kill(pid, signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        root.stop_process(worker)
    claimed = DigestDelivery.objects.get(subscription=period.subscription)
    assert claimed.sent_at is None  # killed before it could record the send

    restarted, _ = start_worker(root, queue, smtp_server.url, log_path)
    try:
        rerun = send_digest.apply_async(arguments, queue=queue)
        assert rerun.get(timeout=TASK_TIMEOUT_SECONDS) == "already_claimed"
    finally:
        root.stop_process(restarted)
    assert len(smtp_server.messages) == 1
