"""Each card of a capacityweb.io NodeGroup as separate actions, one copy each (issue 43):
EITHER a ProvisioningRequest with its PodTemplate, OR the size, THEN the size back; a
card paid by a reservation changes no size; "apply all" leaves reservation cards out and
keeps the note that a size change does not choose the domain. Checked against the
upstream ProvisioningRequest CRD (kubernetes/autoscaler, copied in data/upstream-examples)
as the CLI's actions are (tests/engine/test_safe_actions.py).
"""

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import yaml

from recommender.actions.report import actions_for, group_actions
from recommender.engine.evaluate.evaluation import evaluate, group_totals
from tests.engine.test_safe_actions import PR_CRD, crd_schema, documents
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
AT = datetime(2026, 12, 2, tzinfo=UTC)
BLOCK = "cloud.google.com/gce-topology-block"


def evaluated(name: str):
    snapshot = parse_objects(read_objects(SCENARIOS / f"{name}.yaml"), cluster_name=name)
    return evaluate(snapshot.cluster, at=AT), snapshot.cluster


def test_a_gang_card_offers_the_request_and_the_size_as_separate_choices(shared_data):
    evaluation, cluster = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    actions = actions_for(rec, evaluation, cluster)
    assert [(a.role, a.kind) for a in actions] == [
        ("either", "ProvisioningRequest"),
        ("or", "NodeGroup"),
        ("afterwards", "NodeGroup"),
        ("note", "Placement"),
    ]
    request = documents(actions[0].text)
    # one self-contained action: the PodTemplate the request names, in its namespace
    assert [d["kind"] for d in request] == ["PodTemplate", "ProvisioningRequest"]
    template, body = request
    jsonschema.validate(body, crd_schema(shared_data, PR_CRD, "v1"))
    assert body["spec"]["podSets"][0]["podTemplateRef"]["name"] == template["metadata"]["name"]
    assert template["metadata"]["namespace"] == body["metadata"]["namespace"]
    # its pods select the card's block b1 (h100 lands nodes in b1 and b3)
    assert template["template"]["spec"]["nodeSelector"][BLOCK] == "b1"


def test_a_gang_card_size_choice_holds_one_patch_and_its_undo_another():
    evaluation, cluster = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    _request, grow, undo, note = actions_for(rec, evaluation, cluster)
    assert [d["spec"] for d in documents(grow.text)] == [{"minSize": 6}]  # 4 + 2
    assert [d["spec"] for d in documents(undo.text)] == [{"minSize": 0, "maxSize": 8}]
    assert "a minSize raise does not choose which" in note.text
    assert "# or" not in grow.text + undo.text


def test_a_reservation_card_of_a_project_group_changes_no_size():
    evaluation, cluster = evaluated("reservation-paid-unprovisioned")
    (rec,) = evaluation.recommendations
    assert rec.reservation == "team-a-paid"
    (action,) = actions_for(rec, evaluation, cluster)
    assert action.kind == "Reservation"
    assert "minSize" not in action.text
    assert "# Do not grow" in action.text
    # the paid nodes carry the reservation's taint (what the joint plan says to tolerate):
    # the owner's pod template gains the toleration
    patch = yaml.safe_load(action.text)
    assert {
        "key": "capacityweb.io/reservation",
        "operator": "Equal",
        "value": "team-a-paid",
        "effect": "NoSchedule",
    } in patch["spec"]["tolerations"]


def test_apply_all_leaves_reservation_cards_out_so_its_total_adds_up():
    evaluation, cluster = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    other = replace(rec, count=1, placement={BLOCK: "b3"}, cost_per_hour=rec.cost_per_hour / 2)
    paid = replace(rec, count=2, cost_per_hour=0.0, reservation="team-paid")
    (total,) = group_totals(cluster, (rec, other, paid))
    price = next(g for g in cluster.node_groups if g.name == "h100").price_per_node_hour
    # the reservation's 2 nodes are not bought by the size: 2 + 1 nodes at the group's price
    assert (total.cards, total.add_nodes) == (2, 3)
    assert total.cost_per_hour == round(3 * price, 2)
    assert total.patch["spec"] == {"minSize": 7}  # 4 + 3


def test_apply_all_keeps_each_cards_domain_and_the_size_warning(shared_data):
    evaluation, cluster = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    other = replace(rec, count=1, placement={BLOCK: "b3"})
    both = replace(
        evaluation,
        recommendations=(rec, other),
        group_totals=group_totals(Cluster("c", node_groups=cluster.node_groups), (rec, other)),
    )
    (total,) = both.group_totals
    actions = group_actions(total.to_json(), both, cluster)
    assert [(a.role, a.kind) for a in actions] == [
        ("either", "ProvisioningRequest"),
        ("or", "NodeGroup"),
        ("afterwards", "NodeGroup"),
        ("note", "Placement"),
    ]
    templates = [d for d in documents(actions[0].text) if d["kind"] == "PodTemplate"]
    assert [t["template"]["spec"]["nodeSelector"][BLOCK] for t in templates] == ["b1", "b3"]
    for body in documents(actions[0].text):
        if body["kind"] == "ProvisioningRequest":
            jsonschema.validate(body, crd_schema(shared_data, PR_CRD, "v1"))
    assert [d["spec"] for d in documents(actions[1].text)] == [{"minSize": 7}]
    assert "a minSize raise does not choose which" in actions[3].text
