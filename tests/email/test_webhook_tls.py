"""An https webhook through the pinned connection: the socket goes to the checked address,
TLS still verifies the URL's host name (server name and certificate).

A real TLS server on 127.0.0.1 with a self-signed certificate for ``hooks.tls.test``;
the name resolves to 127.0.0.1 through a stand-in for the system resolver and the
certificate is trusted through SSL_CERT_FILE (read by Python's default TLS context).
"""

from __future__ import annotations

import datetime as dt
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from digest_period import PERIOD_START, make_period

from reservations import webhook
from reservations.models import WebhookDelivery
from tests.servers import free_port

pytestmark = pytest.mark.django_db
HOST = "hooks.tls.test"
ALIAS = "alias.tls.test"  # resolves to the same receiver; its certificate does not name it


def self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for ``name`` that is its own issuer (and so a trust anchor), and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def tls_receiver(cert_path: Path, key_path: Path, posts: list[Any]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def tls_site(tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """(port, posts): an https receiver whose certificate (trusted) names HOST; HOST and
    ALIAS resolve to it."""
    cert_path, key_path = self_signed(tmp_path, HOST)
    posts: list[Any] = []
    server = tls_receiver(cert_path, key_path, posts)
    real_getaddrinfo = socket.getaddrinfo

    def resolver(host: str, *args: Any, **kwargs: Any) -> Any:
        return real_getaddrinfo("127.0.0.1" if host in (HOST, ALIAS) else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    try:
        yield server.server_port, posts
    finally:
        server.shutdown()
        server.server_close()


def with_webhook(url: str) -> Any:
    period = make_period()
    period.subscription.webhook_url = url
    period.subscription.save(update_fields=["webhook_url"])
    return period


def test_it_posts_over_tls_to_the_checked_address_verifying_the_host_name(tls_site: Any) -> None:
    port, posts = tls_site
    period = with_webhook(f"https://{HOST}:{port}/hooks/digest")

    outcome = webhook.send_webhook(
        subscription_id=period.subscription.id, period_start=PERIOD_START
    )

    assert outcome.status == "sent"
    assert len(posts) == 1


def test_it_refuses_a_certificate_that_does_not_name_the_urls_host(tls_site: Any) -> None:
    port, posts = tls_site
    period = with_webhook(f"https://{ALIAS}:{port}/hooks/digest")

    with pytest.raises(ConnectionError, match="Hostname mismatch"):
        webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert posts == []
    assert not WebhookDelivery.objects.exists()  # nothing reached it: the period is free
