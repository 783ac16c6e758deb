"""Liveness/readiness probes and the embedded worker they rely on in dev mode."""

import pytest
from django.test import Client, override_settings

from tests.conftest import environment_without_services, run_python

UNREACHABLE_BROKER_URL = "redis://127.0.0.1:9/0"


def test_it_answers_live_with_ok(client: Client) -> None:
    response = client.get("/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_it_reports_ready_when_every_check_passes(client: Client) -> None:
    response = client.get("/health/ready")
    assert response.status_code == 200, response.json()
    assert response.json()["checks"] == {
        "database": "ok",
        "broker": "ok",
        "channel_layer": "ok",
    }


@pytest.mark.django_db
def test_it_answers_503_naming_the_broker_when_it_is_unreachable(client: Client) -> None:
    with override_settings(CELERY_BROKER_URL=UNREACHABLE_BROKER_URL):
        response = client.get("/health/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"].startswith("error:")
    assert body["checks"]["database"] == "ok"


EMBEDDED_PING = """
import django, threading
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from capacityweb.celery import app
from capacityweb.embedded import start_embedded
from capacityweb.tasks import ping
from django.test import Client
embedded = start_embedded(app)
try:
    print("answer", ping.delay().get(timeout=20))
    print("broker", app.conf.broker_url)
    print("threads", sorted(t.name for t in threading.enumerate()))
    readiness = Client(HTTP_HOST="127.0.0.1").get("/health/ready?deep=1").json()
    print("deep", readiness["checks"]["worker"])
finally:
    embedded.stop()
print("worker-alive-after-stop", embedded.worker_thread.is_alive())
"""


@pytest.fixture(scope="module")
def embedded_run_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Output of a zero-config process that starts the embedded worker and sends ping."""
    database_path = tmp_path_factory.mktemp("embedded") / "db.sqlite3"
    environment = environment_without_services(DATABASE_URL=f"sqlite:///{database_path}")
    result = run_python(EMBEDDED_PING, environment)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_it_runs_a_delayed_task_on_the_embedded_worker(embedded_run_output: str) -> None:
    assert "answer pong" in embedded_run_output
    assert "broker memory://" in embedded_run_output


def test_it_runs_worker_and_beat_as_threads_of_the_process(embedded_run_output: str) -> None:
    threads_line = next(line for line in embedded_run_output.splitlines() if "threads" in line)
    assert "celery-embedded-worker" in threads_line
    assert "Beat" in threads_line


def test_it_reports_the_embedded_worker_in_deep_readiness(embedded_run_output: str) -> None:
    assert "deep ok" in embedded_run_output


def test_it_stops_the_embedded_worker_thread(embedded_run_output: str) -> None:
    assert "worker-alive-after-stop False" in embedded_run_output


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_it_runs_ping_on_a_separate_worker_over_redis(celery_worker_process: str) -> None:
    from capacityweb.tasks import ping

    result = ping.delay()
    assert result.get(timeout=30) == "pong"
    assert result.backend.__class__.__name__ == "RedisBackend"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_it_reports_the_separate_worker_in_deep_readiness(
    client: Client, celery_worker_process: str
) -> None:
    response = client.get("/health/ready?deep=1")
    assert response.status_code == 200, response.json()
    assert response.json()["checks"]["worker"] == "ok"
