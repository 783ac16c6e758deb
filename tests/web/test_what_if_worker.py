"""The what-if answered by a real `celery worker` process (tests/conftest.py), over Redis:
the web side queues it on the "what-if" queue and the page or client polls its state.

blocked-block-too-small (hand derivation in tests/web/test_what_if.py): raising group
h100's max size by 2 lets gang ml/big run after adding 4 nodes in block b1.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects

ANSWER_TIMEOUT_SECONDS = 60


def test_it_routes_the_what_if_to_its_own_queue() -> None:
    from capacityweb.celery import app

    route = app.amqp.router.route({}, "recommender.tasks.answer_what_if", (1,), {})
    evaluation = app.amqp.router.route({}, "recommender.tasks.evaluate_snapshot", (1,), {})
    assert (route["queue"].name, evaluation["queue"].name) == ("what-if", "celery")


def test_it_has_a_worker_started_without_queues_consume_the_what_if_queue() -> None:
    from capacityweb.celery import app

    # what a worker without -Q consumes: the configured queues (app.amqp.queues also
    # holds queues other tests' tasks declared in this process, created as missing)
    assert set(app.conf.task_queues) == {"celery", "what-if"}


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_it_has_a_worker_answer_the_what_if(celery_worker_process: str) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    evaluation = ingest_and_evaluate(
        make_cluster("what-if-worker"), scenario_objects("blocked-block-too-small")
    )
    client = Client()
    client.force_login(User.objects.create_user("asker", password="asker-password-1"))
    body = {"cluster": evaluation.cluster_id, "workload": "ml/big"}
    body.update({"kind": "raise-max", "target": "h100", "amount": 2})
    queued = client.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")
    assert queued.status_code == 202, queued.content
    state = client.get(queued.json()["url"]).json()
    deadline = time.monotonic() + ANSWER_TIMEOUT_SECONDS
    while state["state"] in ("queued", "working") and time.monotonic() < deadline:
        time.sleep(0.2)
        state = client.get(queued.json()["url"]).json()
    assert (state["state"], state["error"]) == ("done", None)
    assert (state["answer"]["before"]["verdict"], state["answer"]["after"]["verdict"]) == (
        "blocked",
        "runs_after_scale_up",
    )
    assert state["startedAt"] is not None


EMBEDDED_WHAT_IF = """
import json, time
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth.models import User
from django.test import Client
from capacityweb.celery import app
from capacityweb.embedded import start_embedded
from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects
objects = scenario_objects("blocked-block-too-small")
evaluation = ingest_and_evaluate(make_cluster("embedded"), objects)
client = Client(HTTP_HOST="127.0.0.1")
client.force_login(User.objects.create_user("asker", password="asker-password-1"))
embedded = start_embedded(app, with_beat=False)
try:
    body = {"cluster": evaluation.cluster_id, "workload": "ml/big", "kind": "raise-max",
            "target": "h100", "amount": 2}
    queued = client.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")
    url = queued.json()["url"]
    deadline = time.monotonic() + 60
    state = client.get(url).json()
    while state["state"] in ("queued", "working") and time.monotonic() < deadline:
        time.sleep(0.2)
        state = client.get(url).json()
    print("state", state["state"], state["answer"] and state["answer"]["after"]["verdict"])
finally:
    embedded.stop()
"""


def test_it_has_the_embedded_worker_answer_the_what_if_with_zero_config(tmp_path: Path) -> None:
    from tests.conftest import environment_without_services, run_python

    database = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    result = run_python(EMBEDDED_WHAT_IF, environment_without_services(DATABASE_URL=database))
    assert result.returncode == 0, result.stderr
    assert "state done runs_after_scale_up" in result.stdout
