"""What would unblock a workload, and the workload page's what-if (page and API).

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


def test_it_plans_again_with_the_forms_edit(signed_in: Any, blocked_evaluation: Any) -> None:
    form = {"kind": "raise-max", "target": "h100", "amount": "2"}
    content = signed_in.post(page_url(blocked_evaluation), form).content.decode()
    assert 'data-before="blocked"' in content
    assert 'data-after="runs_after_scale_up"' in content


def test_it_names_the_field_the_form_gets_wrong(signed_in: Any, blocked_evaluation: Any) -> None:
    form = {"kind": "raise-max", "target": "a100", "amount": "2"}
    response = signed_in.post(page_url(blocked_evaluation), form)
    assert response.status_code == 400
    assert "target: no node group &#x27;a100&#x27; (known: h100)" in response.content.decode()


def test_it_stores_nothing_for_a_what_if(signed_in: Any, blocked_evaluation: Any) -> None:
    from recommender.models import Evaluation, WorkloadVerdict
    from topology.models import Snapshot

    def counts() -> tuple[int, int, int]:
        return (
            Snapshot.objects.count(),
            Evaluation.objects.count(),
            WorkloadVerdict.objects.count(),
        )

    before = counts()
    what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    assert counts() == before


def test_it_answers_the_api_with_the_verdict_before_and_after(
    signed_in: Any, blocked_evaluation: Any
) -> None:
    answer = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    body = answer.json()
    assert (body["before"]["verdict"], body["after"]["verdict"], body["changed"]) == (
        "blocked",
        "runs_after_scale_up",
        True,
    )
    assert body["after"]["addNodes"] == {"h100": 4}


def test_it_answers_400_naming_an_unknown_group(signed_in: Any, blocked_evaluation: Any) -> None:
    answer = what_if(signed_in, blocked_evaluation, kind="raise-max", target="a100", amount=2)
    assert answer.status_code == 400
    assert answer.json() == {"target": ["no node group 'a100' (known: h100)"]}


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
    answer = owner.post("/api/v1/what-if/", json.dumps(body), content_type="application/json")
    assert (answer.status_code, answer.json()["changed"]) == (200, False)


def test_it_answers_503_when_the_engine_runs_past_its_time(
    signed_in: Any, blocked_evaluation: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recommender import whatif as module

    # a spent budget: a tiny positive one races an engine that answers in a millisecond
    monkeypatch.setattr(module, "WHAT_IF_SECONDS", 0)
    answer = what_if(signed_in, blocked_evaluation, kind="raise-max", target="h100", amount=2)
    assert (answer.status_code, answer.json()) == (
        503,
        {"detail": "workload: the what-if ran past 0 s"},
    )
