"""A stand-in dcgm-exporter: serves a recorded ``/metrics`` body, as the real one does.

``python -m tests.utilisation.dcgm_exporter FILE PORT`` listens on 127.0.0.1:PORT and
answers ``GET /metrics`` with FILE in the Prometheus text format (``text/plain;
version=0.0.4``, the exporter's content type). The tests' Prometheus scrapes it.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def serve(body: bytes, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    serve(Path(sys.argv[1]).read_bytes(), int(sys.argv[2]))
