"""The demo login and the `rundemo` server that `make run` ends in."""

import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from capacityweb.services import ensure_demo_user
from tests.conftest import REPO_ROOT, environment_without_services, run_manage, stop_process
from tests.servers import free_port, wait_for_http


@pytest.mark.django_db
def test_it_creates_the_demo_user_able_to_log_in(client: Client) -> None:
    ensure_demo_user(password="first-password-123")
    assert client.login(username="demo", password="first-password-123")


@pytest.mark.django_db
def test_it_resets_the_demo_password_when_the_user_exists(client: Client) -> None:
    ensure_demo_user(password="first-password-123")
    ensure_demo_user(password="second-password-456")
    assert get_user_model().objects.filter(username="demo").count() == 1
    assert client.login(username="demo", password="second-password-456")


@pytest.mark.django_db
def test_it_sends_anonymous_visitors_of_home_to_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_it_renders_the_login_page(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in response.content


@pytest.fixture(scope="module")
def rundemo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A zero-config `rundemo` process on a free port, migrated SQLite of its own."""
    database_path = tmp_path_factory.mktemp("rundemo") / "db.sqlite3"
    environment = environment_without_services(DATABASE_URL=f"sqlite:///{database_path}")
    migrated = run_manage("migrate", "-v0", environment=environment)
    assert migrated.returncode == 0, migrated.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "rundemo", "--port", str(port)],
        cwd=REPO_ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{url}/health/live", server)
        yield url
    finally:
        stop_process(server)


def test_it_serves_readiness_from_rundemo(rundemo_url: str) -> None:
    with urllib.request.urlopen(f"{rundemo_url}/health/ready?deep=1", timeout=10) as response:
        assert response.status == 200


def test_it_serves_the_local_plotly_bundle_from_rundemo(rundemo_url: str) -> None:
    with urllib.request.urlopen(f"{rundemo_url}/static/vendor/plotly.min.js", timeout=10) as r:
        assert r.status == 200
        assert b"plotly" in r.read(4096).lower()
