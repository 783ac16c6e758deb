"""Issue 27 item 7: the README's REST API commands work as written on the demo.

The commands are read from README.md itself (the ```sh blocks of "## REST API"), so
the README cannot drift from what works. The server is what `make run` starts: the
demo loaded into SQLite, `rundemo` with its embedded worker and beat. ``curl`` lines
are sent by a small reader of the flags they use (-s -H -X -d -o), so the test needs no
curl binary; the token is made with the README's own `drf_create_token` line.
"""

from __future__ import annotations

import csv
import io
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import REPO_ROOT, run_manage
from tests.embedded_server import rundemo, sqlite_environment

README = REPO_ROOT / "README.md"
README_BASE_URL = "http://127.0.0.1:8000"
README_PASSWORD = "capacityweb-demo"  # DEMO_PASSWORD's default, as the README prints it


def readme_section_commands(heading: str) -> list[str]:
    """The commands of the ```sh blocks under ``heading`` (continuations joined)."""
    text = README.read_text()
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL):
        pending = ""
        for line in block.splitlines():
            pending = f"{pending}\n{line}" if pending else line
            if pending.endswith("\\") or not _complete(pending):
                continue
            commands.append(pending.replace("\\\n", " "))
            pending = ""
    return commands


def _complete(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:  # an open quote: the command goes on on the next line
        return False
    return True


@dataclass
class Curl:
    """What a curl command line asks for."""

    url: str = ""
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    data: list[str] = field(default_factory=list)
    output: str | None = None


def parse_curl(command: str, variables: dict[str, str]) -> Curl:
    for name, value in variables.items():
        command = command.replace(f"${name}", value)
    words = shlex.split(command, comments=True)
    assert words[0] == "curl", command
    curl = Curl()
    flags = iter(words[1:])
    for word in flags:
        if word == "-s":
            continue
        if word == "-H":
            name, _, value = next(flags).partition(":")
            curl.headers[name.strip()] = value.strip()
        elif word == "-X":
            curl.method = next(flags)
        elif word == "-d":
            curl.data.append(next(flags))
        elif word == "-o":
            curl.output = next(flags)
        else:
            assert not word.startswith("-"), f"a curl flag this test does not read: {word}"
            curl.url = word
    if curl.data and curl.method == "GET":
        curl.method = "POST"
    return curl


def send(curl: Curl, directory: Path) -> requests.Response:
    headers = dict(curl.headers)
    body = "&".join(curl.data) if curl.data else None
    if body is not None and "Content-Type" not in headers:
        headers["Content-Type"] = "application/x-www-form-urlencoded"  # curl's -d
    response = requests.request(curl.method, curl.url, headers=headers, data=body, timeout=120)
    if curl.output:
        (directory / curl.output).write_bytes(response.content)
    return response


def rows_of(response: requests.Response) -> int:
    """How many results a read answered: list items, report rows or CSV data lines."""
    if response.headers.get("Content-Type", "").startswith("text/csv"):
        return max(0, len(list(csv.reader(io.StringIO(response.text)))) - 1)
    body = response.json()
    if isinstance(body, dict) and "results" in body:
        return len(body["results"])
    return len(body.get("rows") or [])


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`make run`'s state: the demo loaded into a SQLite file, rundemo serving it."""
    directory = tmp_path_factory.mktemp("readme")
    environment = sqlite_environment(directory, DEMO_PASSWORD=README_PASSWORD)
    loaded = run_manage("load_demo", environment=environment, timeout_seconds=600)
    assert loaded.returncode == 0, loaded.stderr
    with rundemo(environment, directory / "rundemo.log") as base_url:
        yield {"url": base_url, "environment": environment, "directory": directory}


@pytest.fixture(scope="module")
def token(demo_server: dict[str, Any]) -> str:
    """The key the README's `drf_create_token` line prints."""
    (line,) = [c for c in readme_section_commands("## REST API") if "drf_create_token" in c]
    arguments = shlex.split(line, comments=True)
    assert arguments[:2] == [".venv/bin/python", "manage.py"], line
    made = run_manage(*arguments[2:], environment=demo_server["environment"])
    assert made.returncode == 0, made.stderr
    return made.stdout.split()[2]


def curl_commands(kind: str) -> list[str]:
    commands = [c for c in readme_section_commands("## REST API") if c.startswith("curl")]
    writes = [c for c in commands if "-X POST" in c]
    return writes if kind == "write" else [c for c in commands if c not in writes]


def variables_for(demo_server: dict[str, Any], token: str) -> dict[str, str]:
    return {
        "H": f"Authorization: Token {token}",
        "API": f"{demo_server['url']}/api/v1",
        "TOKEN": token,
    }


def test_it_makes_a_token_for_the_demo_user_with_the_readme_command(token: str) -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", token)


def test_it_answers_the_readme_token_request_with_the_same_token(
    demo_server: dict[str, Any], token: str
) -> None:
    (line,) = [c for c in curl_commands("write") if "auth-token" in c]
    curl = parse_curl(line.replace(README_BASE_URL, demo_server["url"]), {})
    response = send(curl, demo_server["directory"])
    assert response.status_code == 200, response.text
    assert response.json() == {"token": token}


def test_it_answers_every_readme_read_with_results(demo_server: dict[str, Any], token: str) -> None:
    variables = variables_for(demo_server, token)
    answers = {}
    for line in curl_commands("read"):
        response = send(parse_curl(line, variables), demo_server["directory"])
        answers[line] = (response.status_code, rows_of(response) if response.ok else 0)
    assert len(answers) >= 8
    assert {line: a for line, a in answers.items() if a[0] != 200 or a[1] == 0} == {}


def test_it_accepts_every_readme_write(demo_server: dict[str, Any], token: str) -> None:
    variables = variables_for(demo_server, token)
    statuses = {}
    for line in curl_commands("write"):
        if "auth-token" in line:
            continue
        response = send(parse_curl(line, variables), demo_server["directory"])
        statuses[line] = (response.status_code, response.text[:200])
    assert len(statuses) == 4
    assert {line: s for line, s in statuses.items() if not 200 <= s[0] < 300} == {}


def command_line_commands(prefix: str) -> list[list[str]]:
    """The "## Command line" commands starting with ``prefix``, as argument lists."""
    return [
        shlex.split(command, comments=True)
        for command in readme_section_commands("## Command line")
        if command.startswith(prefix)
    ]


def test_it_runs_the_readme_evaluate_commands_on_the_bundled_files() -> None:
    from tests.conftest import environment_without_services

    bundled = [a for a in command_line_commands("manage.py evaluate ") if Path(a[2]).exists()]
    results = {
        " ".join(arguments): run_manage(*arguments[1:], environment=environment_without_services())
        for arguments in bundled
    }
    assert len(results) >= 2
    assert {line: r.stderr[-300:] for line, r in results.items() if r.returncode != 0} == {}


@pytest.mark.long
def test_it_runs_the_readme_replay_commands_on_the_demo(demo_server: dict[str, Any]) -> None:
    replays = command_line_commands("manage.py replay ")
    results = {
        " ".join(arguments): run_manage(
            *arguments[1:], environment=demo_server["environment"], timeout_seconds=900
        )
        for arguments in replays
    }
    assert len(results) == 2
    assert {line: r.stderr[-300:] for line, r in results.items() if r.returncode != 0} == {}
