"""Requests that answered 500 in the second attack run (issue 42 item 4): a valid
``?snapshot=`` on ``autoscaler-events/`` and ``node-group-inventory/``, ``team-waiting/?end=``,
a NUL byte in the pending page's ``?q=``, and an unmatched ``/ws/...`` path."""

from __future__ import annotations

from typing import Any

import pytest
from channels.testing import WebsocketCommunicator

API = "/api/v1/"


@pytest.mark.parametrize("route", ["autoscaler-events/", "node-group-inventory/"])
def test_it_lists_the_rows_of_a_valid_snapshot(signed_in: Any, evaluation: Any, route: str) -> None:
    response = signed_in.get(f"{API}{route}", {"snapshot": evaluation.snapshot_id})
    assert response.status_code == 200
    assert {row["snapshot"] for row in response.json()} <= {evaluation.snapshot_id}


@pytest.mark.parametrize("route", ["autoscaler-events/", "node-group-inventory/"])
def test_it_answers_404_for_a_snapshot_that_does_not_exist(
    signed_in: Any, evaluation: Any, route: str
) -> None:
    response = signed_in.get(f"{API}{route}", {"snapshot": evaluation.snapshot_id + 1000})
    assert response.status_code == 404


def test_it_reads_an_empty_end_of_team_waiting_as_now(signed_in: Any, evaluation: Any) -> None:
    response = signed_in.get(f"{API}team-waiting/", {"cluster": evaluation.cluster_id, "end": ""})
    assert response.status_code == 200


def test_it_refuses_a_team_waiting_end_too_early_for_the_default_start_with_400(
    signed_in: Any, evaluation: Any
) -> None:
    response = signed_in.get(
        f"{API}team-waiting/",
        {"cluster": evaluation.cluster_id, "end": "0001-01-02T00:00:00Z"},
    )
    assert (response.status_code, list(response.json())) == (400, ["end"])


def test_it_answers_400_for_a_nul_byte_in_the_pending_search(
    signed_in: Any, evaluation: Any
) -> None:
    response = signed_in.get(f"/clusters/{evaluation.cluster_id}/pending/", {"q": "a\x00b"})
    assert (response.status_code, b"q: Null characters are not allowed." in response.content) == (
        400,
        True,
    )


@pytest.mark.parametrize("snapshot", ["\u00b2", "1" * 5000])  # str.isdigit() holds, int() refuses
def test_it_answers_404_for_a_page_snapshot_of_digits_int_refuses(
    signed_in: Any, evaluation: Any, snapshot: str
) -> None:
    response = signed_in.get(f"/clusters/{evaluation.cluster_id}/pending/", {"snapshot": snapshot})
    assert response.status_code == 404


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_it_closes_a_socket_on_an_unmatched_path_with_4404() -> None:
    from capacityweb.asgi import application

    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
    socket = WebsocketCommunicator(application, "/ws/nowhere/", headers=headers)
    await socket.connect(5)
    assert await socket.receive_output(5) == {"type": "websocket.close", "code": 4404}
