"""`manage.py rundemo`: the one-process dashboard (Daphne + embedded Celery worker and beat).

Serves HTTP and WebSockets with Daphne on 127.0.0.1, static files too while
DEBUG is on, and — when EMBEDDED_WORKER is set (the zero-config default) —
runs the Celery worker and beat in this process, so `make run` needs no
services. Migrations and demo data are `make run`'s job, before this. With the
in-process channel layer it also watches the database for what another process
stores (`manage.py ingest` in a second shell) and announces it to its own sockets
(``recommender.watcher``), stopping with the server.
"""

import asyncio
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from capacityweb.services import DEMO_USERNAME, ensure_demo_user

HOST = "127.0.0.1"


def build_application() -> Any:
    """The project's ASGI app, wrapped to serve static files while DEBUG is on."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    from capacityweb.asgi import application

    return ASGIStaticFilesHandler(application) if settings.DEBUG else application


class Command(BaseCommand):
    help = "Serve the dashboard on 127.0.0.1 with Daphne and the embedded Celery worker + beat."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args: Any, port: int, **options: Any) -> None:
        from daphne.endpoints import build_endpoint_description_strings
        from daphne.server import Server

        ensure_demo_user(password=settings.DEMO_PASSWORD)
        embedded = self.start_embedded_celery()
        server = Server(
            application=build_application(),
            endpoints=build_endpoint_description_strings(host=HOST, port=port),
            ready_callable=lambda: self.ready(port),
        )
        try:
            server.run()
        finally:
            if embedded is not None:
                embedded.stop()

    def start_embedded_celery(self) -> Any:
        """Start worker + beat in-process unless separate Celery processes are configured."""
        if not settings.EMBEDDED_WORKER:
            self.stdout.write("EMBEDDED_WORKER is off: run `celery -A capacityweb worker/beat`.")
            return None
        from capacityweb.celery import app
        from capacityweb.embedded import start_embedded

        return start_embedded(app)

    def ready(self, port: int) -> None:
        """Daphne is listening and its event loop is the current one: start watching
        (cancelled before the reactor shuts down), then say where to go."""
        from recommender import watcher

        if watcher.needed():
            from twisted.internet import reactor

            task = asyncio.get_event_loop().create_task(watcher.StoredChangeWatcher().run())
            reactor.addSystemEventTrigger("before", "shutdown", task.cancel)
        self.announce(port)

    def announce(self, port: int) -> None:
        self.stdout.write(f"capacityweb is serving at http://{HOST}:{port}/", self.style.SUCCESS)
        self.stdout.write(f"Log in as {DEMO_USERNAME!r} with password {settings.DEMO_PASSWORD!r}")
        self.stdout.flush()
