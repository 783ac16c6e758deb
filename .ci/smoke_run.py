"""Smoke test of README command 1: `make run`, then use the dashboard like a person.

    PORT=<a free port> make run (own process group, no DATABASE_URL/REDIS_URL: the embedded default)
      └─ wait for /health/live ─ log in as demo (CSRF) ─ GET / contains --expect
         ─ WebSocket /ws/clusters/1/ with the session cookie ─ one message ─ stop group

Exit 0 when every step passed; otherwise exit 1 printing the failing step and
the tail of the server log.
"""

import argparse
import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

REPO_ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
STARTUP_TIMEOUT_SECONDS = 8 * 60
WEBSOCKET_MESSAGE_TIMEOUT_SECONDS = 60
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class SmokeFailure(Exception):
    """A smoke step failed; the message says which and why."""


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", default="openb", help="text the dashboard page must contain")
    return parser.parse_args()


def free_port() -> int:
    """A port nothing listens on now (the OS picks it): CI may share the host."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def start_make_run(log_path: Path, port: int) -> subprocess.Popen[bytes]:
    """`make run` in a new session (its own process group) with no service URLs."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    environment["PORT"] = str(port)
    with log_path.open("wb") as log:
        return subprocess.Popen(
            ["make", "run"],
            cwd=REPO_ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_process_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group we started (its leader's PID is the group id), then SIGKILL."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


async def wait_until_live(
    session: aiohttp.ClientSession, server: subprocess.Popen[bytes], base_url: str
) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.returncode is not None or server.poll() is not None:
            raise SmokeFailure(f"`make run` exited with {server.returncode} before serving")
        try:
            async with session.get(f"{base_url}/health/live") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(1)
    raise SmokeFailure(f"/health/live did not answer within {STARTUP_TIMEOUT_SECONDS}s")


async def log_in(session: aiohttp.ClientSession, password: str, base_url: str) -> None:
    async with session.get(f"{base_url}/accounts/login/") as response:
        page = await response.text()
    match = CSRF_FIELD.search(page)
    if response.status != 200 or match is None:
        raise SmokeFailure(f"login page: status {response.status}, no CSRF field")
    form = {"username": "demo", "password": password, "csrfmiddlewaretoken": match.group(1)}
    headers = {"Referer": f"{base_url}/accounts/login/", "Origin": base_url}
    async with session.post(
        f"{base_url}/accounts/login/", data=form, headers=headers, allow_redirects=False
    ) as response:
        if response.status != 302:
            raise SmokeFailure(f"login as demo: expected a redirect, got {response.status}")


async def check_dashboard(
    session: aiohttp.ClientSession, expected_text: str, base_url: str
) -> None:
    async with session.get(f"{base_url}/", allow_redirects=False) as response:
        page = await response.text()
    if response.status != 200:
        raise SmokeFailure(f"GET / answered {response.status}")
    if expected_text not in page:
        raise SmokeFailure(f"GET / does not contain {expected_text!r}")


async def check_websocket(session: aiohttp.ClientSession, base_url: str) -> str:
    url = f"ws://{base_url.split('://', 1)[1]}/ws/clusters/1/"
    try:
        async with session.ws_connect(url, origin=base_url) as websocket:
            message = await websocket.receive(timeout=WEBSOCKET_MESSAGE_TIMEOUT_SECONDS)
    except (TimeoutError, aiohttp.ClientError) as error:
        raise SmokeFailure(f"WebSocket {url}: {type(error).__name__}: {error}") from error
    if message.type != aiohttp.WSMsgType.TEXT:
        raise SmokeFailure(f"WebSocket {url}: expected a text message, got {message.type!r}")
    return str(message.data)


async def exercise(server: subprocess.Popen[bytes], expected_text: str, base_url: str) -> None:
    password = os.environ.get("DEMO_PASSWORD", "capacityweb-demo")
    jar = aiohttp.CookieJar(unsafe=True)  # accept cookies from an IP address host
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(cookie_jar=jar, timeout=timeout) as session:
        await wait_until_live(session, server, base_url)
        print("smoke: /health/live answered")
        await log_in(session, password, base_url)
        print("smoke: logged in as demo")
        await check_dashboard(session, expected_text, base_url)
        print(f"smoke: GET / contains {expected_text!r}")
        first_message = await check_websocket(session, base_url)
        print(f"smoke: WebSocket message: {first_message[:120]}")


def main() -> int:
    arguments = parse_arguments()
    port = free_port()
    base_url = f"http://{HOST}:{port}"
    print(f"smoke: make run on port {port}")
    log_path = Path(tempfile.mkdtemp(prefix="capacityweb-smoke-")) / "make-run.log"
    started = time.monotonic()
    server = start_make_run(log_path, port)
    try:
        asyncio.run(exercise(server, arguments.expect, base_url))
    except SmokeFailure as failure:
        print(f"smoke: FAIL: {failure}", file=sys.stderr)
        print("--- last lines of `make run` output ---", file=sys.stderr)
        print("\n".join(log_path.read_text(errors="replace").splitlines()[-40:]), file=sys.stderr)
        return 1
    finally:
        stop_process_group(server)
    print(f"smoke: passed in {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
