"""Chromium copies each action of every card on the demo's recommendations page, one
copy button each, and what it copied passes the checks of the CLI's actions
(tests/action_checks.py; issue 43)."""

from typing import Any

from tests.action_checks import assert_applies_as_is, provisioning_request_schema


def test_each_copy_button_copies_one_action_that_applies_as_it_is(
    page: Any, live_url: str, demo: Any, shared_data_dir: Any
) -> None:
    schema = provisioning_request_schema(shared_data_dir)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_url)
    page.goto(f"{live_url}/clusters/{demo.id}/recommendations/")
    actions = page.locator("article.recommendation li.action, article.group-total li.action")
    expected = sum(
        len(item["actions"])
        for item in [
            *demo.evaluation.result["recommendations"],
            *(t for t in demo.evaluation.result["nodeGroupTotals"] if t["cards"] > 1),
        ]
    )
    assert actions.count() == expected > 0
    kinds = set()
    for index in range(actions.count()):
        action = actions.nth(index)
        action.locator("button[data-copy-target]").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == action.locator("pre").text_content()
        kind = action.get_attribute("data-action-kind")
        kinds.add(kind)
        role = action.get_attribute("data-action-role")
        assert_applies_as_is({"kind": kind, "role": role, "text": copied}, schema)
    # the demo's groups are GKE pools cluster-autoscaler grows: gcloud, never a NodeGroup
    assert {"ProvisioningRequest", "gcloud", "Reservation"} <= kinds
    assert "NodeGroup" not in kinds
    assert page.errors == []
