"""Resident memory of an idle `make run` over time: the embedded worker and beat at work.

    python -m bench.idle_rss [--minutes 30] [--interval 30] [--max-growth-mb 40]

What `make run` does, in a temporary directory: migrate a SQLite file, `load_demo`,
then `rundemo` (Daphne + embedded Celery worker + beat). Nobody browses; beat ingests
the demo every minute, the worker evaluates each snapshot, the retention task runs.
The server's RSS (``/proc/<pid>/status`` VmRSS) is sampled every ``--interval``
seconds and printed. The first third of the run is warm-up (caches and the
allocator's arenas filling); the verdict compares the last two thirds: their
growth must stay under ``--max-growth-mb`` (exit 1 otherwise).

    idle_rss t=  0.5 min rss=  412.3 MB
    ...
    idle_rss after warm-up 498.1 MB, end 503.6 MB: +5.5 MB over 20.0 min (limit 40 MB)

Linux only (/proc). Runs on the zero-config settings: DATABASE_URL and REDIS_URL
are removed from its environment.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_SECONDS = 300


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--max-growth-mb", type=float, default=40.0)
    parser.add_argument("--repo", type=Path, default=REPO_ROOT, help="checkout to run")
    return parser.parse_args()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def manage(repo: Path, environment: dict[str, str], *arguments: str) -> None:
    subprocess.run([sys.executable, "manage.py", *arguments], cwd=repo, env=environment, check=True)


def sqlite_environment(database: Path) -> dict[str, str]:
    """This process's environment on the embedded default, as ``make run``: no Postgres,
    no Redis, the SQLite file ``database``."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    environment["DATABASE_URL"] = f"sqlite:///{database}"
    return environment


def load_demo(repo: Path, environment: dict[str, str]) -> None:
    """A migrated database holding the demo as ``repo``'s tree stores it."""
    manage(repo, environment, "migrate", "--noinput", "-v0")
    manage(repo, environment, "load_demo")


def wait_until_live(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"rundemo exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"rundemo did not answer {url}")


def sample(pid: int, minutes: float, interval: float) -> list[tuple[float, float]]:
    samples = []
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) <= minutes * 60:
        samples.append((elapsed / 60, rss_mb(pid)))
        print(f"idle_rss t={samples[-1][0]:6.1f} min rss={samples[-1][1]:8.1f} MB", flush=True)
        time.sleep(interval)
    return samples


def verdict(samples: list[tuple[float, float]], minutes: float, limit_mb: float) -> bool:
    warm = [rss for at, rss in samples if at >= minutes / 3]
    growth = warm[-1] - warm[0]
    print(
        f"idle_rss after warm-up {warm[0]:.1f} MB, end {warm[-1]:.1f} MB, max {max(warm):.1f} MB:"
        f" {growth:+.1f} MB over {minutes * 2 / 3:.1f} min (limit {limit_mb:g} MB)"
    )
    return growth <= limit_mb


def main() -> int:
    arguments = parse_arguments()
    directory = Path(tempfile.mkdtemp(prefix="capacityweb-idle-rss-"))
    environment = sqlite_environment(directory / "db.sqlite3")
    load_demo(arguments.repo, environment)
    port = free_port()
    with (directory / "rundemo.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "rundemo", "--port", str(port)],
            cwd=arguments.repo,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_live(f"http://127.0.0.1:{port}/health/live", server)
        samples = sample(server.pid, arguments.minutes, arguments.interval)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    print(f"idle_rss server log and database: {directory}")
    return 0 if verdict(samples, arguments.minutes, arguments.max_growth_mb) else 1


if __name__ == "__main__":
    sys.exit(main())
