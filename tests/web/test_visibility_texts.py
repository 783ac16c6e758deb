"""The engine's sentences that name a reservation, as another team reads them
(capacityweb.visibility.ReservationLabels.text). The sentences are the engine's own
f-strings: recommender/engine/autoscaler/joint.py (reuse, provision), explain.py (room
held for other teams), evaluate/report.py (paid by)."""

import pytest

from capacityweb.visibility import OTHER_TEAM, Viewer

OWNERS = {"team-a-h100": ["team-a"], "team-c-pool": ["team-c"], "team-b-l4": ["team-b"]}
TEAM_B = Viewer(sees_all=False, teams=frozenset({"team-b"}))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("reuse idle reservation team-a-h100", f"reuse idle reservation {OTHER_TEAM}"),
        (
            "provision 2 paid node(s) of reservation team-c-pool in h100",
            f"provision 2 paid node(s) of reservation {OTHER_TEAM} in h100",
        ),
        (
            "NodeGroup h100: +2 nodes, paid by reservation team-c-pool for ml/train",
            f"NodeGroup h100: +2 nodes, paid by reservation {OTHER_TEAM} for ml/train",
        ),
        (
            "is held for reservation(s) team-a-h100, team-c-pool: paid, not yet provisioned",
            f"is held for reservation(s) {OTHER_TEAM}: paid, not yet provisioned",
        ),
        ("reuse idle reservation team-b-l4", "reuse idle reservation team-b-l4"),
        ("reuse idle reservation gone-since", f"reuse idle reservation {OTHER_TEAM}"),
        ("a reservation or compact placement", "a reservation or compact placement"),
    ],
)
def test_it_relabels_only_other_teams_reservations_in_engine_sentences(text, shown):
    assert TEAM_B.labels(OWNERS).text(text) == shown


def test_it_relabels_a_sentence_once_however_often_it_is_read():
    labels = TEAM_B.labels(OWNERS)
    once = labels.text("reuse idle reservation team-a-h100")

    assert labels.text(once) == once


def test_it_relabels_another_teams_reservation_named_in_an_error():
    text = "stored: Reservation/team-a-h100: spec.nodeGroup.name: no NodeGroup named 'x'"

    assert TEAM_B.labels(OWNERS).text(text) == (
        f"stored: Reservation/{OTHER_TEAM}: spec.nodeGroup.name: no NodeGroup named 'x'"
    )


def test_it_relabels_another_teams_reservation_in_a_relaxation():
    from capacityweb.visibility import relaxation

    item = {
        "kind": "reservation",
        "edit": {"kind": "reservation", "target": "team-a-h100", "amount": 0},
        "text": "let team-b use reservation team-a-h100",
        "verdict": "runs_now",
        "reasons": [],
    }
    shown = relaxation(item, TEAM_B.labels(OWNERS))
    assert (shown["text"], shown["edit"]["target"]) == (
        f"let team-b use reservation {OTHER_TEAM}",
        OTHER_TEAM,
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "add toleration capacityweb.io/reservation=team-c-pool:NoSchedule",
            f"add toleration capacityweb.io/reservation={OTHER_TEAM}:NoSchedule",
        ),
        (
            "node(s) had untolerated taint {capacityweb.io/reservation: team-c-pool}",
            f"node(s) had untolerated taint {{capacityweb.io/reservation: {OTHER_TEAM}}}",
        ),
        (
            "add toleration capacityweb.io/reservation=team-b-l4:NoSchedule",
            "add toleration capacityweb.io/reservation=team-b-l4:NoSchedule",
        ),
    ],
)
def test_it_relabels_another_teams_reservation_in_its_taint(text, shown):
    """The reservation taint as joint.py's changes ("add toleration key=value:effect") and
    the TaintToleration Filter's reason (filters.py) write it (issue 42 item 2)."""
    assert TEAM_B.labels(OWNERS).text(text) == shown


def test_it_relabels_other_teams_reservations_in_a_what_ifs_plans():
    from capacityweb.visibility import relaxation

    plan = {"verdict": "runs_now", "addNodes": {}, "reasons": []}
    item = {
        "text": "tolerate the taint",
        "before": {**plan, "reservations": ["team-a-h100", "team-b-l4"]},
        "after": {**plan, "reservations": ["team-c-pool"]},
    }
    shown = relaxation(item, TEAM_B.labels(OWNERS))
    assert (shown["before"]["reservations"], shown["after"]["reservations"]) == (
        [OTHER_TEAM, "team-b-l4"],
        [OTHER_TEAM],
    )
