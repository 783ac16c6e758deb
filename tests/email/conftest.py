"""A real SMTP server (aiosmtpd on 127.0.0.1, a free port) and one hand-checkable period.

The fixture period, for a daily subscription at 08:00 UTC, is
[2026-03-09 08:00, 2026-03-10 08:00); the period before it starts 2026-03-08 08:00.

    reservation  price  samples (time: reserved, idle, $/h)
    r1 team-a    2.5    03-08 08:00: 8,1,2.5   03-09 06:00: 8,4,10   03-09 14:00: 8,2,5
                        03-10 02:00: 8,0,0
    r2 team-b    1.0    03-09 20:00: 4,3,3

    evaluations (naive, joint, stranded $/h): 03-08 08:00 (0,0,0); 03-09 06:00 and
    14:00 (30,20,10); 03-09 20:00 and 03-10 02:00 (12,8,4)

Builders in digest_period.py; figures derived in test_digest.py.
"""

from __future__ import annotations

import email
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.servers import free_port


@dataclass
class RecordingHandler:
    """Keeps every message it accepts; ``hold_seconds`` delays the reply to DATA."""

    messages: list[Message] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)
    hold_seconds: float = 0.0

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 — aiosmtpd's name
        import asyncio

        self.messages.append(email.message_from_bytes(envelope.original_content))
        self.received.set()
        if self.hold_seconds:
            await asyncio.sleep(self.hold_seconds)
        return "250 Message accepted for delivery"


@dataclass
class SmtpServer:
    host: str
    port: int
    handler: RecordingHandler

    @property
    def messages(self) -> list[Message]:
        return self.handler.messages

    @property
    def url(self) -> str:
        return f"smtp://{self.host}:{self.port}"


@pytest.fixture
def smtp_server(settings) -> Iterator[SmtpServer]:
    """A running aiosmtpd server; Django's email settings point at it for the test."""
    handler = RecordingHandler()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 30
    settings.DASHBOARD_BASE_URL = "https://capacity.example.test"
    try:
        yield SmtpServer("127.0.0.1", port, handler)
    finally:
        controller.stop()


@dataclass
class Receiver:
    url: str
    posts: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)
    status: int = 200
    location: str = ""


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    """An HTTP server on 127.0.0.1 that records every POST body and answers ``status``."""
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers["Content-Length"])
            state.posts.append(json.loads(self.rfile.read(length)))
            state.headers.append(dict(self.headers))
            self.send_response(state.status)
            if state.location:
                self.send_header("Location", state.location)
            self.end_headers()
            self.wfile.write(b"ok")

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            state.gets.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_port}/hooks/digest"
    settings.DASHBOARD_BASE_URL = "https://capacity.example.test"
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
