"""What would unblock a workload, and the workload page's what-if (page and API).

The what-if is answered by a worker (recommender.whatif.service): here the worker's task runs in
this process on the test's transaction (``run_worker``: its own code, nothing stubbed;
the queued message is never sent, the transaction never commits), and
tests/web/test_what_if_worker.py has a real worker answer one.

blocked-block-too-small (tests/scenarios, hand derivation there): gang ml/big needs
4 x 8 GPUs in one block; group h100 (max 8) may add 2 nodes in b1 and 1 in b2. Worked
by hand: an outer level does not help (3 new nodes, 24 GPUs, in the whole zone); a
raise of 1 gives b1 3 slots (24 GPUs), a raise of 2 gives b1 4 slots (32): the least
raise is 2, and the gang then runs after adding 4 nodes in b1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.utils.html import escape

from tests.web.fixtures import ingest_and_evaluate, scenario_objects

pytestmark = pytest.mark.django_db

RAISE_TEXT = (
    "raise node group h100's max size by 2 (8 → 10) and each of its domains' new-node slots by 2"
)


@pytest.fixture
def blocked_evaluation(cluster: Any) -> Any:
    return ingest_and_evaluate(cluster, scenario_objects("blocked-block-too-small"))


def page_url(evaluation: Any) -> str:
    return f"/clusters/{evaluation.cluster_id}/workloads/ml/big/"


def what_if(client: Any, evaluation: Any, **body: Any) -> Any:
    body = {"cluster": evaluation.cluster_id, "workload": "ml/big", **body}
    return client.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")


def run_worker(request_id: int) -> str:
    """What the what-if queue's worker does with the request: its state after."""
    from recommender.tasks import answer_what_if

    return answer_what_if.apply(args=[request_id]).get()


def answered(client: Any, queued: Any) -> dict[str, Any]:
    """The API's 202, answered by the worker's task, then read at its state URL."""
    assert queued.status_code == 202, queued.content
    run_worker(queued.json()["id"])
    return client.get(queued.json()["url"]).json()


def other_user(name: str) -> Any:
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.create_user(name, password="other-password-1"))
    return client


def test_it_says_what_would_unblock_it_on_the_workload_page(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    content = signed_in.get(page_url(blocked_evaluation)).content.decode()
    assert f'<li data-relaxation="raise-max">{escape(RAISE_TEXT)} → ' in content


def test_it_says_what_would_unblock_it_on_the_pending_page(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    url = f"/clusters/{blocked_evaluation.cluster_id}/pending/"
    assert escape(RAISE_TEXT) in signed_in.get(url).content.decode()


def test_it_lists_the_relaxations_in_the_pending_workloads_api(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    url = f"/api/v1/pending-workloads/?cluster={blocked_evaluation.cluster_id}"
    row = signed_in.get(url).json()["results"][0]
    assert [(r["edit"], r["verdict"]) for r in row["relaxations"]] == [
        ({"kind": "raise-max", "target": "h100", "amount": 2}, "runs_after_scale_up")
    ]


def test_it_queues_the_what_if_and_answers_202_with_its_state_url(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    queued = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    body = queued.json()
    assert (queued.status_code, body["state"], queued["Location"]) == (202, "queued", body["url"])
    assert body["url"] == f"/api/v1/what-if/{body['id']}/"
    assert signed_in.get(body["url"]).json()["state"] == "queued"


def test_it_answers_the_api_with_the_verdict_before_and_after(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    queued = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    state = answered(signed_in, queued)
    answer = state["answer"]
    assert (state["state"], state["error"]) == ("done", None)
    assert (answer["before"]["verdict"], answer["after"]["verdict"], answer["changed"]) == (
        "blocked",
        "runs_after_scale_up",
        True,
    )
    assert answer["after"]["addNodes"] == {"h100": 4}


def test_it_plans_again_with_the_forms_edit(signed_in: Any, blocked_evaluation: Any) -> None:
    form = {"kind": "raise-max", "target": "h100", "amount": "2"}
    posted = signed_in.post(page_url(blocked_evaluation), form)
    assert posted.status_code == 303
    queued = signed_in.get(posted["Location"]).content.decode()
    assert 'data-state="queued"' in queued
    from recommender.models import WhatIfRequest

    run_worker(WhatIfRequest.objects.get().pk)
    content = signed_in.get(posted["Location"]).content.decode()
    assert 'data-before="blocked"' in content
    assert 'data-after="runs_after_scale_up"' in content


def test_it_names_the_field_the_form_gets_wrong(signed_in: Any, blocked_evaluation: Any) -> None:
    form = {"kind": "raise-max", "target": "a100", "amount": "2"}
    posted = signed_in.post(page_url(blocked_evaluation), form)
    from recommender.models import WhatIfRequest

    run_worker(WhatIfRequest.objects.get().pk)
    content = signed_in.get(posted["Location"]).content.decode()
    assert "target: no node group &#x27;a100&#x27; (known: h100)" in content


def test_it_refuses_the_form_a_field_it_reads_without_the_snapshot(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    form = {"kind": "raise-max", "target": "h100", "amount": "0"}
    response = signed_in.post(page_url(blocked_evaluation), form)
    assert response.status_code == 400
    assert 'id="what-if-error"' in response.content.decode()


def test_it_stores_nothing_but_the_request_for_a_what_if(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    from recommender.models import Evaluation, WorkloadVerdict
    from topology.models import Snapshot

    def counts() -> tuple[int, int, int]:
        return (
            Snapshot.objects.count(),
            Evaluation.objects.count(),
            WorkloadVerdict.objects.count(),
        )

    before = counts()
    queued = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    answered(signed_in, queued)
    assert counts() == before


def test_it_fails_the_what_if_naming_an_unknown_group(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    queued = what_if(signed_in, blocked_evaluation, kind="raise-max", target="a100", amount=2)
    state = answered(signed_in, queued)
    assert (state["state"], state["answer"], state["error"]) == (
        "failed",
        None,
        {"target": ["no node group 'a100' (known: h100)"]},
    )


def test_it_answers_400_naming_an_unknown_kind(signed_in: Any, blocked_evaluation: Any) -> None:
    answer = what_if(signed_in, blocked_evaluation, kind="more-gpus", target="h100")
    assert answer.status_code == 400
    assert list(answer.json()) == ["kind"]


def test_it_answers_400_for_a_workload_not_pending(signed_in: Any, blocked_evaluation: Any) -> None:
    answer = what_if(
        signed_in, blocked_evaluation, workload="ml/nothing", kind="topology", target=""
    )
    assert answer.status_code == 400
    assert answer.json() == {"workload": ["ml/nothing is not pending in the snapshot"]}


def test_it_refuses_an_unknown_workload_without_reading_the_snapshot(
    signed_in: Any, blocked_evaluation: Any, django_assert_max_num_queries: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    # session and user, the evaluation (no JSON), the workload's verdict row
    with django_assert_max_num_queries(4), CaptureQueriesContext(connection) as queries:
        answer = what_if(
            signed_in, blocked_evaluation, workload="ml/nothing", kind="topology", target=""
        )
    assert answer.status_code == 400
    assert not [q["sql"] for q in queries if "model_json" in q["sql"] or '"result"' in q["sql"]]


def test_it_answers_429_with_retry_after_to_a_users_third_what_if(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    edit = {"kind": "raise-max", "target": "h100", "amount": 2}
    first, second = (what_if(signed_in, blocked_evaluation, **edit) for _ in range(2))
    third = what_if(signed_in, blocked_evaluation, **edit)
    assert (first.status_code, second.status_code, third.status_code) == (202, 202, 429)
    assert 1 <= int(third["Retry-After"]) <= 20


def test_it_takes_a_users_next_what_if_once_one_is_answered(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    edit = {"kind": "raise-max", "target": "h100", "amount": 2}
    first = what_if(signed_in, blocked_evaluation, **edit)
    what_if(signed_in, blocked_evaluation, **edit)
    run_worker(first.json()["id"])
    assert what_if(signed_in, blocked_evaluation, **edit).status_code == 202


def test_it_limits_each_user_apart(signed_in: Any, blocked_evaluation: Any) -> None:
    edit = {"kind": "raise-max", "target": "h100", "amount": 2}
    for _ in range(2):
        what_if(signed_in, blocked_evaluation, **edit)
    assert what_if(other_user("carol"), blocked_evaluation, **edit).status_code == 202


def test_it_holds_the_page_form_to_the_same_per_user_limit(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    edit = {"kind": "raise-max", "target": "h100", "amount": 2}
    for _ in range(2):
        what_if(signed_in, blocked_evaluation, **edit)
    response = signed_in.post(page_url(blocked_evaluation), {**edit, "amount": "2"})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 20
    assert "one what-if running and one waiting already" in response.content.decode()


def test_it_answers_503_with_retry_after_when_the_queue_is_full(
    signed_in: Any, blocked_evaluation: Any, settings: Any
) -> None:
    settings.WHAT_IF_QUEUE_MAX = 2
    edit = {"kind": "raise-max", "target": "h100", "amount": 2}
    for name in ("carol", "dave"):
        assert what_if(other_user(name), blocked_evaluation, **edit).status_code == 202
    full = what_if(signed_in, blocked_evaluation, **edit)
    assert (full.status_code, full.json()) == (503, {"detail": "the what-if queue is full"})
    assert 1 <= int(full["Retry-After"]) <= 20


def test_it_counts_a_request_whose_worker_is_gone_for_no_limit(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    from datetime import timedelta

    from recommender.models import WhatIfRequest

    edit = {"kind": "raise-max", "target": "h100", "amount": 2}
    ids = [what_if(signed_in, blocked_evaluation, **edit).json()["id"] for _ in range(2)]
    lost = WhatIfRequest.objects.filter(pk__in=ids)
    lost.update(created_at=lost[0].created_at - timedelta(minutes=5))
    assert what_if(signed_in, blocked_evaluation, **edit).status_code == 202
    assert signed_in.get(f"/api/v1/what-if/{ids[0]}/").json()["error"] == {
        "workload": ["no worker answered within the what-if's time limit"]
    }


def test_it_counts_the_time_waiting_in_the_queue_against_the_budget(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    from datetime import timedelta

    from recommender.models import WhatIfRequest

    queued = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    waited = WhatIfRequest.objects.filter(pk=queued.json()["id"])
    waited.update(created_at=waited[0].created_at - timedelta(seconds=21))
    state = answered(signed_in, queued)
    assert (state["state"], state["error"]) == (
        "failed",
        {"workload": ["the what-if ran past 20 s (time waiting in the queue counts)"]},
    )


def test_it_shows_no_one_else_a_users_what_if(signed_in: Any, blocked_evaluation: Any) -> None:
    queued = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    assert other_user("carol").get(queued.json()["url"]).status_code == 404


def test_it_answers_404_for_a_cluster_without_an_evaluation(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    body = {"cluster": blocked_evaluation.cluster_id + 1000, "workload": "ml/big"}
    body["kind"] = "topology"
    answer = signed_in.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")
    assert answer.status_code == 404


def test_it_refuses_another_teams_reservation_as_if_it_did_not_exist(
    client: Any, evaluation: Any
) -> None:
    # reservation-idle-nodes: team-a-h100 is team-a's; a member of team-b names it
    from tests.web.test_visibility import member_of

    outsider = member_of(client, "bob", "team-b")
    body = {
        "cluster": evaluation.cluster_id,
        "workload": "team-a/finetune",
        "kind": "reservation",
        "target": "team-a-h100",
    }
    answer = outsider.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")
    assert (answer.status_code, answer.json()) == (
        400,
        {"target": ["no reservation 'team-a-h100'"]},
    )


def test_it_takes_a_reservation_its_owners_name(client: Any, evaluation: Any) -> None:
    from tests.web.test_visibility import member_of

    owner = member_of(client, "alice", "team-a")
    body = {
        "cluster": evaluation.cluster_id,
        "workload": "team-a/finetune",
        "kind": "reservation",
        "target": "team-a-h100",
    }
    queued = owner.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")
    state = answered(owner, queued)
    assert (state["state"], state["answer"]["changed"]) == ("done", False)
