"""Every action the dashboard shows on the demo passes the checks of the CLI's actions
(tests/action_checks.py), and the demo's "apply all" figures add up (issue 43)."""

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.action_checks import assert_applies_as_is, provisioning_request_schema

DEMO_AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def demo_result(db: None) -> dict[str, Any]:
    from capacityweb.demo import load_demo

    _cluster, evaluation = load_demo(now=DEMO_AT)
    return evaluation.result


def test_it_shows_only_actions_that_apply_as_they_are_on_the_demo(
    demo_result: dict[str, Any], shared_data_dir: Any
) -> None:
    schema = provisioning_request_schema(shared_data_dir)
    cards = demo_result["recommendations"]
    totals = [t for t in demo_result["nodeGroupTotals"] if t["cards"] > 1]
    assert cards and totals
    shown = [a for item in [*cards, *totals] for a in item["actions"]]
    assert {a["kind"] for a in shown} >= {"ProvisioningRequest", "NodeGroup", "Reservation"}
    for action in shown:
        assert_applies_as_is(action, schema)
    for card in cards:
        roles = [a["role"] for a in card["actions"]]
        # at most one either/or per card, and an "or" size change comes with its undo
        assert roles.count("either") <= 1 and roles.count("or") == roles.count("either")
        assert ("or" in roles) <= ("afterwards" in roles)
        if card["reservation"]:
            assert [a["kind"] for a in card["actions"] if a["role"] != "note"] == ["Reservation"]


def test_it_prices_every_node_of_the_demo_apply_all(demo_result: dict[str, Any]) -> None:
    prices = {g["name"]: g["pricePerNodeHour"] for g in demo_result["nodeGroups"]}
    for total in demo_result["nodeGroupTotals"]:
        bought = [
            c
            for c in demo_result["recommendations"]
            if c["nodeGroup"] == total["nodeGroup"] and not c["reservation"]
        ]
        assert total["addNodes"] == sum(c["count"] for c in bought)
        assert total["costPerHour"] == pytest.approx(total["addNodes"] * prices[total["nodeGroup"]])


def test_it_keeps_the_size_warning_in_the_demo_apply_all(demo_result: dict[str, Any]) -> None:
    (g3,) = [t for t in demo_result["nodeGroupTotals"] if t["nodeGroup"] == "g3-8gpu-pool"]
    (note,) = [a for a in g3["actions"] if a["role"] == "note"]
    assert "a minSize raise does not choose which" in note["text"]
