"""Shared fixtures for the whole suite.

Nothing here imports Django at module level: tests/engine/ runs with
``-p no:django``. Integration and browser tests FAIL (never skip) when the
services they need are missing, naming what to set up; ``make test`` starts
Postgres and Redis itself (tests/with_services.py) when they are not configured.
"""

import ipaddress
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from capacityweb.browser import chromium_path, missing_chromium_message

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA_DIR = REPO_ROOT / "data"
SERVICE_VARIABLES = ("DATABASE_URL", "REDIS_URL")
WORKER_START_TIMEOUT_SECONDS = 60.0
WORKER_IDLE_TIMEOUT_SECONDS = 120.0
# The node name of the session's Celery worker once a test has started it.
_started_workers: list[str] = []
LOCAL_NAMES = {"localhost", "localhost.localdomain"}


def is_local_host(host: str | bytes | None) -> bool:
    """None (the wildcard), this machine's names, or an IP literal (nothing to look up)."""
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else host
    if name.lower() in LOCAL_NAMES:
        return True
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return True


@pytest.fixture(autouse=True)
def outside_lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The suite resolves no host name outside this machine, fuzzed webhook URLs included.

    ``socket.getaddrinfo`` (what the webhook guard, urllib, requests and redis-py call)
    answers local names and IP literals as before; any other name is refused as not
    resolving (the code under test goes on as it would without DNS) and the test
    fails at its end naming it. A test that needs a public name resolves it through
    a resolver of its own (e.g. ``monkeypatch.setattr(socket, "getaddrinfo", ...)``
    answering a fixed address). Threads of this process (the live server) are covered;
    subprocesses are started on 127.0.0.1. Yields the names asked for (a test of this
    very guard empties it).
    """
    real_getaddrinfo = socket.getaddrinfo
    asked: list[str] = []

    def local_only(host: str | bytes | None, *args: object, **kwargs: object) -> object:
        if is_local_host(host):
            return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]
        asked.append(str(host))
        raise socket.gaierror(socket.EAI_NONAME, f"{host}: the tests resolve no outside name")

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    yield asked
    if asked:
        pytest.fail(f"host names looked up beyond this machine: {sorted(set(asked))}")


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real data sets copied into the repository (data/, each folder with its SOURCES)."""
    if not SHARED_DATA_DIR.is_dir():
        pytest.fail(f"data not found at {SHARED_DATA_DIR}: the clone is incomplete")
    return SHARED_DATA_DIR


def services_missing() -> list[str]:
    """Name each service variable the integration tests need and the environment lacks."""
    missing = []
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        missing.append("Postgres: run `make test` (it starts one) or set DATABASE_URL")
    if not os.environ.get("REDIS_URL", "").startswith("redis://"):
        missing.append("Redis: run `make test` (it starts one) or set REDIS_URL")
    return missing


def pytest_collection_finish(session: pytest.Session) -> None:
    """Stop at once, with the install hint, when selected browser tests have no Chromium:
    a missing browser is found in the first minute, not after the rest of the suite."""
    if chromium_path() is None and any(
        item.get_closest_marker("browser") for item in session.items
    ):
        pytest.exit(f"browser tests selected: {missing_chromium_message()}", returncode=1)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail, not skip, a test whose services are absent, saying how to provide them."""
    if item.get_closest_marker("integration") and (missing := services_missing()):
        pytest.fail(f"needs {', '.join(missing)}", pytrace=False)
    if item.get_closest_marker("browser") and chromium_path() is None:
        pytest.fail(missing_chromium_message(), pytrace=False)


def environment_without_services(**overrides: str) -> dict[str, str]:
    """This process's environment minus DATABASE_URL/REDIS_URL: the zero-config default."""
    environment = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES}
    environment["DJANGO_SETTINGS_MODULE"] = "capacityweb.settings"
    environment.update(overrides)
    return environment


def run_python(
    code: str, environment: Mapping[str, str], timeout_seconds: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run Python code in a fresh interpreter at the repository root (settings read anew)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=dict(environment),
        capture_output=True,
        text=True,
        timeout=timeout_seconds,
    )


def run_manage(
    *arguments: str, environment: Mapping[str, str], timeout_seconds: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``manage.py`` with the given environment in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=REPO_ROOT,
        env=dict(environment),
        capture_output=True,
        text=True,
        timeout=timeout_seconds,
    )


def with_database_name(database_url: str, database_name: str) -> str:
    """The same DATABASE_URL pointing at another database (pytest-django's test_<name>)."""
    parts = urlsplit(database_url)
    return urlunsplit(parts._replace(path=f"/{database_name}"))


def wait_for_worker(worker: subprocess.Popen[bytes], node_name: str, log_path: Path) -> None:
    """Block until the worker answers a control ping, or fail with its log."""
    from capacityweb.celery import app

    deadline = time.monotonic() + WORKER_START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            pytest.fail(f"celery worker exited {worker.returncode}:\n{log_path.read_text()}")
        if app.control.ping(destination=[node_name], timeout=1.0):
            return
    pytest.fail(f"celery worker did not answer a ping:\n{log_path.read_text()}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Warm-stop a process we started (SIGTERM), then kill it if it lingers."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def celery_worker_process(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A real `celery worker` process on REDIS_URL and pytest's test database.

    Tests that hand it data must be transactional (``django_db(transaction=True)``)
    so their rows are committed and visible to the worker. Yields its node name.
    """
    if missing := services_missing():
        pytest.fail(f"needs {', '.join(missing)}", pytrace=False)
    from django.conf import settings

    test_database_name = settings.DATABASES["default"]["NAME"]
    node_name = f"pytest-{uuid.uuid4().hex[:8]}@localhost"
    log_path = tmp_path_factory.mktemp("celery") / "worker.log"
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(os.environ["DATABASE_URL"], test_database_name),
        "EMBEDDED_WORKER": "false",
    }
    celery = Path(sys.executable).with_name("celery")
    arguments = [str(celery), "-A", "capacityweb", "worker", "--pool=solo", "--concurrency=1"]
    arguments += ["-n", node_name, "--without-mingle", "--without-gossip", "-l", "INFO"]
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            arguments, cwd=REPO_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        wait_for_worker(worker, node_name, log_path)
        _started_workers.append(node_name)
        yield node_name
    finally:
        if node_name in _started_workers:
            _started_workers.remove(node_name)
        stop_process(worker)


def wait_until_worker_idle(node_name: str) -> None:
    """Block until the worker has no task running or reserved and the queues are empty.

    With ``--pool=solo`` the worker answers control messages between tasks only, so an
    answer with nothing active means it is between tasks.
    """
    import redis
    from django.conf import settings

    from capacityweb.celery import app

    broker = redis.Redis.from_url(os.environ["REDIS_URL"])
    deadline = time.monotonic() + WORKER_IDLE_TIMEOUT_SECONDS
    inspect = app.control.inspect(
        destination=[node_name], timeout=WORKER_IDLE_TIMEOUT_SECONDS, limit=1
    )
    while time.monotonic() < deadline:
        queued = sum(broker.llen(queue) for queue in settings.CELERY_TASK_QUEUES)
        active = (inspect.active() or {}).get(node_name, [])
        reserved = (inspect.reserved() or {}).get(node_name, [])
        if not queued and not active and not reserved:
            return
        time.sleep(0.05)
    pytest.fail(
        f"the celery worker {node_name} was still busy after {WORKER_IDLE_TIMEOUT_SECONDS:.0f} s"
    )


@pytest.fixture(autouse=True)
def worker_idle_before_flush(request: pytest.FixtureRequest) -> Iterator[None]:
    """A transactional test ends only once the session's worker is idle.

    The test's rows are committed, so their on_commit tasks reach the real worker, which
    may still be writing when pytest-django truncates every table: Postgres then
    answers the TRUNCATE with a deadlock and the next tests find the old rows. Requesting
    the database fixture here makes this teardown run before its flush.
    """
    marker = request.node.get_closest_marker("django_db")
    transactional = bool(
        marker is not None
        and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))
    ) or not {"transactional_db", "live_server"}.isdisjoint(request.fixturenames)
    if transactional:
        request.getfixturevalue("_django_db_helper")
    yield
    if transactional and _started_workers:
        wait_until_worker_idle(_started_workers[0])
