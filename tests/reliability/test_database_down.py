"""Postgres goes down under the production web tier: requests answer 503 fast.

`manage.py serve` (pool on, as compose runs it) on a throwaway Postgres of its own
(free port, temporary directory; never the shared one), DATABASE_CONNECT_TIMEOUT_SECONDS=2.
Each test stops that Postgres (``pg_ctl stop -m immediate``: connections cut, as a crash)
and starts it again afterwards. Before the fix a request waited for the pool's 30 s
default and then answered 500 with a traceback page.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from tests.conftest import environment_without_services, run_manage, run_python
from tests.servers import ServerUnavailable, ThrowawayPostgres, free_port, manage_py_server

DATABASE = "capacityweb_down"
CONNECT_TIMEOUT_SECONDS = 2
FAST_SECONDS = CONNECT_TIMEOUT_SECONDS + 3  # the wait, plus a loaded CI machine's slack
RECOVERY_SECONDS = 30.0
PASSWORD = "down-test-password-1"
MAKE_USER = f"""
import django; django.setup()
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
user = User.objects.create_user("viewer", password="{PASSWORD}")
print(Token.objects.create(user=user).key)
"""


@dataclass
class Answer:
    status: int
    seconds: float
    body: str
    headers: dict[str, str]  # names in lower case


@dataclass
class Site:
    postgres: ThrowawayPostgres
    base_url: str
    token: str
    browser: urllib.request.OpenerDirector  # signed in (session cookie)

    def get(self, path: str, *, token: bool = False) -> Answer:
        headers = {"Authorization": f"Token {self.token}"} if token else {}
        request = urllib.request.Request(self.base_url + path, headers=headers)
        started = time.monotonic()
        try:
            with self.browser.open(request, timeout=60) as response:
                status, body, head = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, body, head = error.code, error.read(), error.headers
        headers = {name.lower(): value for name, value in head.items()}
        return Answer(status, time.monotonic() - started, body.decode(), headers)


def sign_in(base_url: str) -> urllib.request.OpenerDirector:
    """A browser with the session of user ``viewer`` (the login form, CSRF token and all)."""
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    browser.open(f"{base_url}/accounts/login/", timeout=30).read()
    csrf = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    form = {"username": "viewer", "password": PASSWORD, "csrfmiddlewaretoken": csrf}
    browser.open(f"{base_url}/accounts/login/", urllib.parse.urlencode(form).encode(), 30).read()
    assert any(cookie.name == "sessionid" for cookie in jar), "login failed"
    return browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    postgres = ThrowawayPostgres()
    postgres.init()
    try:
        with psycopg.connect(postgres.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        environment = environment_without_services(
            DATABASE_URL=postgres.url(DATABASE),
            DATABASE_POOL="true",
            DATABASE_CONNECT_TIMEOUT_SECONDS=str(CONNECT_TIMEOUT_SECONDS),
            EMBEDDED_WORKER="false",
            DEBUG="true",  # the failure it replaced was a traceback page
        )
        migrated = run_manage("migrate", "--noinput", environment=environment)
        assert migrated.returncode == 0, migrated.stderr
        made = run_python(MAKE_USER, environment)
        assert made.returncode == 0, made.stderr
        token = made.stdout.split()[-1]
        port = free_port()
        log_path = tmp_path_factory.mktemp("serve") / "serve.log"
        arguments = ["serve", "--port", str(port), "--workers", "1"]
        base_url = f"http://127.0.0.1:{port}"
        with manage_py_server(arguments, environment, log_path, f"{base_url}/health/live"):
            yield Site(postgres, base_url, token, sign_in(base_url))
        assert "Traceback" not in log_path.read_text(), log_path.read_text()
    finally:
        with contextlib.suppress(ServerUnavailable):  # already stopped by a failed test
            postgres.stop()
        postgres.remove()


def wait_until_answering(site: Site) -> None:
    """Block until the API answers 200 (the pool reconnects in the background)."""
    deadline = time.monotonic() + RECOVERY_SECONDS
    while (status := site.get("/api/v1/clusters/", token=True).status) != 200:
        assert time.monotonic() < deadline, f"still {status} after {RECOVERY_SECONDS:.0f} s"
        time.sleep(0.5)


@pytest.fixture
def postgres_down(site: Site) -> Iterator[Site]:
    wait_until_answering(site)
    site.postgres.stop(mode="immediate")
    try:
        yield site
    finally:
        site.postgres.start()


def test_it_answers_an_api_request_with_503_within_the_connect_timeout(
    postgres_down: Site,
) -> None:
    answer = postgres_down.get("/api/v1/clusters/", token=True)

    assert (answer.status, answer.body) == (
        503,
        '{"detail": "database unavailable; try again shortly"}',
    )
    assert answer.headers["retry-after"] == "10"
    assert answer.seconds < FAST_SECONDS


def test_it_answers_a_signed_in_page_with_503_within_the_connect_timeout(
    postgres_down: Site,
) -> None:
    answer = postgres_down.get("/")

    assert answer.status == 503
    assert "The database cannot be reached" in answer.body
    assert answer.seconds < FAST_SECONDS


def test_it_reports_not_ready_within_the_connect_timeout(postgres_down: Site) -> None:
    answer = postgres_down.get("/health/ready")

    assert answer.status == 503
    assert '"database": "error: OperationalError: ' in answer.body
    assert answer.seconds < FAST_SECONDS


def test_it_answers_again_once_postgres_is_back(site: Site) -> None:
    wait_until_answering(site)
    site.postgres.stop(mode="immediate")
    assert site.get("/api/v1/clusters/", token=True).status == 503
    site.postgres.start()

    wait_until_answering(site)
