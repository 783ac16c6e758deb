"""`manage.py serve`: the production web server, N Uvicorn worker processes on one port.

::

    serve (supervisor: restarts a worker that dies, stops them all on SIGTERM/SIGINT)
      ├── worker 1 ─ own socket on HOST:PORT (SO_REUSEPORT) ─ capacityweb.asgi: pages,
      ├── …                                                   REST API, WebSockets
      └── worker N   N = --workers, else WEB_CONCURRENCY (settings); each with its own
                     database and channel-layer connections

Each worker listens on a socket of its own, all bound to the same port with
SO_REUSEPORT, and the kernel spreads new connections over them. Uvicorn's own
``--workers`` shares one listening socket instead: every worker wakes for every
new connection and whichever accepts first takes a batch, so keep-alive
connections end up unevenly pinned (31 of 50 on one of 2 workers, measured), and
the clients of the busier worker wait longer; bench.http measured 15–20 % lower
p99 with a socket per worker (docs/BENCHMARKS.md, "HTTP").

Why not Daphne here: Daphne is one process, so every request's Django code
shares one interpreter lock (one core), and it cannot fork workers behind one
port. The Dockerfile, compose and bench/http.py all start the web tier through
this command, so what is measured is what is deployed. `make run` keeps Daphne
(`rundemo`): one process with the embedded worker, no services.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

ASGI_APP = "capacityweb.asgi:application"
# A worker that exits this soon after it started may be failing to start (an app that
# fails to import): each such exit in a row doubles the wait before the next restart.
STARTUP_SECONDS = 10.0
MAX_RESTART_DELAY_SECONDS = 30.0
STOP_SECONDS = 30.0  # for each worker to finish its requests after SIGTERM
logger = logging.getLogger("capacityweb.serve")


def uvicorn_options() -> dict[str, Any]:
    return {
        # Django's ASGI handler speaks no lifespan protocol; without this every
        # worker logs a spurious "lifespan unsupported" error at start.
        "lifespan": "off",
        # As Daphne by default: no access log line per request (LOG_LEVEL governs the rest).
        "access_log": False,
        # X-Forwarded-For/-Proto only from FORWARDED_ALLOW_IPS (Uvicorn's own variable,
        # default 127.0.0.1): behind a proxy, set it to the proxy's address.
        "proxy_headers": True,
    }


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port with SO_REUSEPORT (not yet listening)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def run_worker(host: str, port: int, supervisor: int) -> None:
    """One worker process: Uvicorn on a socket of its own (it listens on it)."""
    import uvicorn

    exit_with(supervisor)

    config = uvicorn.Config(ASGI_APP, host=host, port=port, **uvicorn_options())
    uvicorn.Server(config).run(sockets=[listening_socket(host, port)])


def exit_with(supervisor: int) -> None:
    """Have Linux send this process SIGTERM when the supervisor dies (even by SIGKILL),
    so no worker outlives it and keeps the port."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return  # elsewhere (a developer's machine) a worker may outlive a killed supervisor
    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0) != 0:
        logger.warning("prctl(PR_SET_PDEATHSIG) failed: errno %s", ctypes.get_errno())
    if os.getppid() != supervisor:  # it died before prctl
        os.kill(os.getpid(), signal.SIGTERM)


class Command(BaseCommand):
    help = "Serve HTTP and WebSockets with Uvicorn worker processes (production web tier)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers", type=int, default=None, help="default: WEB_CONCURRENCY (settings)"
        )

    def handle(self, *args: Any, host: str, port: int, workers: int | None, **options: Any) -> None:
        count = workers or settings.WEB_CONCURRENCY
        if count < 1:
            raise CommandError(f"--workers: {count}: must be at least 1", returncode=2)
        try:  # fail here, with the reason, if the port is taken (workers would each fail)
            listening_socket(host, port).close()
        except OSError as error:
            message = f"--host/--port: cannot listen on {host}:{port}: {error}"
            raise CommandError(message, returncode=2) from error
        Supervisor(host, port, count).run()


class Supervisor:
    """Starts ``count`` workers, restarts one that dies, stops them all on a signal."""

    def __init__(self, host: str, port: int, count: int) -> None:
        self.host, self.port, self.count = host, port, count
        self.context = multiprocessing.get_context("spawn")  # a fresh interpreter each
        self.workers: list[Any] = []
        self.started: list[float] = []  # when each worker started
        self.quick_exits: list[int] = []  # exits in a row within STARTUP_SECONDS, per worker
        self.stopping = False

    def start_worker(self) -> Any:
        process = self.context.Process(
            target=run_worker, args=(self.host, self.port, os.getpid()), name="capacityweb-web"
        )
        process.start()
        return process

    def stop(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def run(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self.stop)
        self.workers = [self.start_worker() for _ in range(self.count)]
        self.started = [time.monotonic()] * self.count
        self.quick_exits = [0] * self.count
        try:
            while not self.stopping:
                time.sleep(0.2)
                for index, process in enumerate(self.workers):
                    if not self.stopping and not process.is_alive():
                        self.restart(index)
        finally:
            self.stop_workers()

    def restart(self, index: int) -> None:
        process, now = self.workers[index], time.monotonic()
        quick = now - self.started[index] < STARTUP_SECONDS
        self.quick_exits[index] = self.quick_exits[index] + 1 if quick else 0
        delay = min(MAX_RESTART_DELAY_SECONDS, 2.0 ** self.quick_exits[index] - 1)
        logger.warning(
            "web worker %s exited %s; restarting it in %.0f s", process.pid, process.exitcode, delay
        )
        deadline = now + delay
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(0.2)
        if not self.stopping:
            self.workers[index] = self.start_worker()
            self.started[index] = time.monotonic()

    def stop_workers(self) -> None:
        for process in self.workers:
            if process.is_alive():
                process.terminate()  # SIGTERM: Uvicorn finishes its requests, then exits
        deadline = time.monotonic() + STOP_SECONDS
        for process in self.workers:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
