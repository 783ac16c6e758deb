"""`manage.py serve`: the production web server, Uvicorn with N worker processes on one port.

::

    uvicorn supervisor (binds HOST:PORT once, restarts a worker that dies)
      ├── worker 1 ─ capacityweb.asgi: pages, REST API, WebSockets
      ├── …          each with its own database and channel-layer connections
      └── worker N   N = --workers, else WEB_CONCURRENCY (settings)

Why not Daphne here: Daphne is one process, so every request's Django code
shares one interpreter lock (one core), and it cannot fork workers behind one
port (docs/BENCHMARKS.md, "HTTP"). The Dockerfile, compose and bench/http.py
all start the web tier through this command, so what is measured is what is
deployed. `make run` keeps Daphne (`rundemo`): one process
with the embedded worker, no services.
"""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

ASGI_APP = "capacityweb.asgi:application"


class Command(BaseCommand):
    help = "Serve HTTP and WebSockets with Uvicorn worker processes (production web tier)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers", type=int, default=None, help="default: WEB_CONCURRENCY (settings)"
        )

    def handle(self, *args: Any, host: str, port: int, workers: int | None, **options: Any) -> None:
        import uvicorn

        uvicorn.run(
            ASGI_APP,
            host=host,
            port=port,
            workers=workers or settings.WEB_CONCURRENCY,
            # Django's ASGI handler speaks no lifespan protocol; without this every
            # worker logs a spurious "lifespan unsupported" error at start.
            lifespan="off",
            # As Daphne by default: no access log line per request (LOG_LEVEL governs the rest).
            access_log=False,
            # X-Forwarded-For/-Proto only from FORWARDED_ALLOW_IPS (Uvicorn's own variable,
            # default 127.0.0.1): behind a proxy, set it to the proxy's address.
            proxy_headers=True,
        )
