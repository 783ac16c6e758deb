"""capacityweb.handlers through the real ASGI application (capacityweb.asgi), in process:
the request body as the server hands it over, Django's request signals on the request's
own thread, responses with their content in memory and streamed ones."""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator
from django.core import signals

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

TIMEOUT_SECONDS = 10
PASSWORD = "handler-password-1"  # last in the body: the view must read all of it


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


async def exchange(
    method: str,
    path: str,
    body_parts: list[bytes],
    headers: list[tuple[bytes, bytes]] = (),
    application: Any = None,
) -> tuple[dict[str, Any], bytes, int]:
    """Send the body in ``body_parts`` messages (capacityweb.asgi's application unless
    another is given); the start message, the body, and how many body messages the
    response took."""
    if application is None:
        from capacityweb.asgi import application
    headers = [*headers, (b"content-length", str(sum(map(len, body_parts))).encode())]
    app = ApplicationCommunicator(application, http_scope(method, path, headers))
    for index, part in enumerate(body_parts or [b""]):
        more = index < len(body_parts) - 1
        await app.send_input({"type": "http.request", "body": part, "more_body": more})
    start = await app.receive_output(TIMEOUT_SECONDS)
    body, messages = b"", 0
    while True:
        message = await app.receive_output(TIMEOUT_SECONDS)
        body, messages = body + message.get("body", b""), messages + 1
        if not message.get("more_body", False):
            break
    await app.wait(TIMEOUT_SECONDS)
    return start, body, messages


@pytest.fixture
def finished_on() -> Any:
    """Names of the threads request_finished was sent on, in order."""
    threads: list[str] = []

    def record(**kwargs: Any) -> None:
        threads.append(threading.current_thread().name)

    signals.request_finished.connect(record)
    yield threads
    signals.request_finished.disconnect(record)


@pytest.fixture
def token(db: None) -> str:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    user = User.objects.create_user("operator", password=PASSWORD)
    return Token.objects.create(user=user).key


@pytest.mark.parametrize(
    ("memory_limit", "part_size"),
    [
        (None, 9),  # within FILE_UPLOAD_MAX_MEMORY_SIZE: kept in memory
        (16, 7),  # past it: moved to a spooled file (on disk), still read whole
    ],
)
async def test_it_reassembles_a_body_sent_in_several_messages(
    token: str, settings: Any, memory_limit: int | None, part_size: int
) -> None:
    if memory_limit is not None:
        settings.FILE_UPLOAD_MAX_MEMORY_SIZE = memory_limit
    payload = json.dumps({"username": "operator", "password": PASSWORD})
    parts = [payload[i : i + part_size].encode() for i in range(0, len(payload), part_size)]

    start, body, _ = await exchange(
        "POST", "/api/v1/auth-token/", parts, [(b"content-type", b"application/json")]
    )

    assert start["status"] == 200, body
    assert json.loads(body) == {"token": token}


async def test_it_sends_request_finished_once_on_the_request_thread(finished_on: list[str]) -> None:
    start, body, messages = await exchange("GET", "/health/live", [])

    assert start["status"] == 200
    assert json.loads(body)["status"] == "ok"
    assert messages == 1  # content in memory: one body message
    assert len(finished_on) == 1
    assert finished_on[0].startswith("django-http")


async def test_it_streams_a_static_file_and_then_finishes_the_request(
    finished_on: list[str], settings: Any
) -> None:
    """WhiteNoise answers a static file with a streaming FileResponse (a synchronous
    iterator): sent chunk by chunk, request_finished once it is all sent."""
    from django.contrib.staticfiles import finders

    from capacityweb.handlers import ThreadPoolASGIHandler

    settings.WHITENOISE_USE_FINDERS = True  # no collectstatic in tests: from static/
    handler = ThreadPoolASGIHandler()
    handler.chunk_size = 1024  # FileResponse.block_size: several chunks of this file

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start, body, messages = await exchange(
            "GET", "/static/css/capacityweb.css", [], application=handler
        )

    assert start["status"] == 200
    with open(finders.find("css/capacityweb.css"), "rb") as on_disk:
        assert body == on_disk.read()
    assert messages > 2  # chunks, then the empty last message
    assert len(finished_on) == 1
    # Django's handler would read the file whole into a list first, and say so.
    assert not [w for w in caught if "consume synchronous iterators" in str(w.message)]
