"""Throwaway Postgres and Redis servers a fault test starts, restarts and stops itself.

Never the shared instances: each lives in its own temporary directory on a
free 127.0.0.1 port, and is stopped by the PID/data directory it was started with.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.servers import free_port

PG_BIN_ROOT = Path("/usr/lib/postgresql")
START_TIMEOUT_SECONDS = 30.0


def _postgres_bin() -> Path:
    versions = sorted(PG_BIN_ROOT.glob("*/bin"), key=lambda p: int(p.parent.name))
    if not versions:
        pytest.fail("needs Postgres server binaries (initdb, pg_ctl): apt-get install postgresql")
    return versions[-1]


class ThrowawayPostgres:
    """initdb + pg_ctl in a fresh /tmp directory (readable by user postgres, as whom the
    server runs when this process is root); ``remove`` deletes it after ``stop``."""

    def __init__(self) -> None:
        self.bin = _postgres_bin()
        self.directory = Path(tempfile.mkdtemp(prefix="capacityweb-pg-"))
        self.directory.chmod(0o755)
        self.data = self.directory / "data"
        self.socket_dir = self.directory / "socket"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0

    def _run(self, *arguments: str) -> None:
        command = [str(self.bin / arguments[0]), *arguments[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            pytest.fail(f"{arguments[0]} failed: {done.stdout}{done.stderr}")

    def init(self) -> None:
        self.data.mkdir(parents=True)
        self.socket_dir.mkdir()
        if self.as_postgres:
            shutil.chown(self.directory, "postgres")
            for path in (self.data, self.socket_dir):
                shutil.chown(path, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust")
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

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"


class ThrowawayRedis:
    """``redis-server`` without persistence: a restart loses everything, as a crash would."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if shutil.which("redis-server") is None:
            pytest.fail("needs redis-server on PATH: apt-get install redis-server")
        arguments = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port)]
        arguments += ["--save", "", "--appendonly", "no", "--dir", str(self.directory)]
        self.process = subprocess.Popen(
            arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        pytest.fail(f"redis-server on port {self.port} did not answer PING")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, database: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{database}"
