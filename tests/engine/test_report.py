"""The YAML to apply for a recommendation (report.recommendation_yaml), on bundled scenarios.

Expected sizes are read off the scenario files: topology-block has four
existing h100 nodes (a1, a2, c1, c2 carry pool: h100) and the joint plan adds
2 in block b1 for the 2-member gang ml/train.
"""

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from recommender.engine.evaluate.evaluation import Evaluation, evaluate, group_totals
from recommender.engine.evaluate.report import group_yaml, recommendation_yaml, render_text
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster, NodeGroup

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
AT = datetime(2026, 12, 2, tzinfo=UTC)
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"


def evaluated(name: str) -> tuple[Evaluation, tuple[NodeGroup, ...]]:
    snapshot = parse_objects(read_objects(SCENARIOS / f"{name}.yaml"), cluster_name=name)
    return evaluate(snapshot.cluster, at=AT), snapshot.cluster.node_groups


def documents(text: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(text))


def test_it_raises_min_size_to_the_current_size_plus_the_recommended_nodes() -> None:
    evaluation, groups = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    patch = documents(recommendation_yaml(rec, evaluation, groups))[0]
    assert patch == {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "h100"},
        "spec": {"minSize": 6},  # 4 existing + 2; max 8 is not reached: no maxSize
    }


def test_it_names_where_the_new_nodes_must_land_in_a_comment_not_in_the_patch() -> None:
    evaluation, groups = evaluated("topology-block")
    text = recommendation_yaml(evaluation.recommendations[0], evaluation, groups)
    assert "# NodeGroup h100: +2 nodes for ml/train (this card alone: from 4 to 6)\n" in text
    # h100 adds nodes in blocks b1 and b3 (its two placements): a minSize raise does not
    # choose b1, so the comment says so and points at what does place them
    assert (
        "# the new nodes must land in cloud.google.com/gce-topology-block=b1, but h100 adds "
        "nodes in cloud.google.com/gce-topology-block = b1, b3:\n"
        "# a minSize raise does not choose which: apply the ProvisioningRequest below\n"
    ) in text
    assert "placement" not in documents(text)[0]["spec"]


def test_a_group_landing_in_one_domain_only_needs_no_placing_action() -> None:
    evaluation, groups = evaluated("never-scales-gang-split-blocks")
    (rec,) = evaluation.recommendations
    text = recommendation_yaml(rec, evaluation, groups)
    # h100's one placement is block b1: the minSize raise can only land there
    assert "# the new nodes must land in cloud.google.com/gce-topology-block=b1\n" in text
    assert "does not choose" not in text


def test_it_offers_an_atomic_provisioning_request_for_a_gang() -> None:
    evaluation, groups = evaluated("topology-block")
    request = documents(recommendation_yaml(evaluation.recommendations[0], evaluation, groups))[1]
    assert request == {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "provisioningClassName": ATOMIC,
            "podSets": [{"count": 2, "podTemplateRef": {"name": "train"}}],
        },
    }


def test_it_offers_no_provisioning_request_for_a_lone_pod() -> None:
    evaluation, groups = evaluated("agreement-scale-up")
    (rec,) = evaluation.recommendations
    assert [d["kind"] for d in documents(recommendation_yaml(rec, evaluation, groups))] == [
        "NodeGroup"
    ]


def test_it_raises_max_size_only_when_the_plan_goes_past_it() -> None:
    evaluation, groups = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    smaller = tuple(replace(g, max_size=5) for g in groups)
    assert documents(recommendation_yaml(rec, evaluation, smaller))[0]["spec"] == {
        "minSize": 6,
        "maxSize": 6,
    }


def test_it_never_lowers_a_min_size_already_above_the_plan() -> None:
    evaluation, groups = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    higher = tuple(replace(g, min_size=7) for g in groups)
    assert documents(recommendation_yaml(rec, evaluation, higher))[0]["spec"] == {"minSize": 7}


def test_it_makes_each_card_of_a_group_its_own_delta() -> None:
    # h100 has 4 nodes; one card adds 2 (b1), another 1 (b3): applied alone, each
    # buys exactly its own nodes, whatever the order
    evaluation, groups = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    other = replace(rec, count=1, placement={"cloud.google.com/gce-topology-block": "b3"})
    both = replace(evaluation, recommendations=(rec, other))
    first, second = (documents(recommendation_yaml(r, both, groups))[0] for r in (rec, other))
    assert (first["spec"], second["spec"]) == ({"minSize": 6}, {"minSize": 5})


def test_it_gives_one_apply_all_patch_per_group_correct_applied_once() -> None:
    evaluation, groups = evaluated("topology-block")
    (rec,) = evaluation.recommendations
    other = replace(rec, count=1, placement={"cloud.google.com/gce-topology-block": "b3"})
    recommended = (rec, other)
    totals = group_totals(Cluster("c", node_groups=groups), recommended)
    both = replace(evaluation, recommendations=recommended, group_totals=totals)
    (total,) = totals
    (patch,) = documents(group_yaml(total.to_json()))
    assert patch["spec"] == {"minSize": 7}  # 4 + 2 + 1
    report = render_text(both, groups)
    assert "apply all for node group h100" in report
    assert "from 4 to 7 nodes (+3)" in report


def test_it_says_when_paid_reserved_capacity_is_started() -> None:
    evaluation, groups = evaluated("reservation-paid-unprovisioned")
    (rec,) = evaluation.recommendations
    text = recommendation_yaml(rec, evaluation, groups)
    # o1 is the group's one node; the reservation's paid node makes 2
    assert "+1 nodes, paid by reservation team-a-paid for" in text
    assert "(this card alone: from 1 to 2)" in text
    assert documents(text)[0]["spec"] == {"minSize": 2}


def test_it_prints_the_same_yaml_in_the_text_report() -> None:
    evaluation, groups = evaluated("topology-block")
    report = render_text(evaluation, groups)
    yaml_text = recommendation_yaml(evaluation.recommendations[0], evaluation, groups)
    indented = "\n".join(f"    {line}" for line in yaml_text.rstrip().splitlines())
    assert indented in report
    assert "targetSize" not in report


def test_the_text_report_says_how_far_the_joint_search_went() -> None:
    evaluation, groups = evaluated("joint-two-gangs-one-node")
    text = render_text(evaluation, groups)
    # the one gang before the blocked one was tried in its other block: 2 planning calls
    assert (
        "(joint plan for the whole pending set: optimal (2 search node(s), 1 gang(s) searched))"
        in text
    )
    assert "* ml/ga: add nodeSelector cloud.google.com/gce-topology-block=b2" in text


def test_it_reports_the_profile_the_fgd_what_if_and_model_gaps() -> None:
    # see tests/scenarios/profile-fgd-what-if and reality-model-gap .expected.yaml
    what_if, groups = evaluated("profile-fgd-what-if")
    text = render_text(what_if, groups)
    assert (
        # no node says its kubelet version: kube-scheduler 1.35's scoring, the default
        "scheduler profile: kube-default, as kube-scheduler 1.35 (default); "
        "what-if fgd: +8 pending GPUs placed now (train/c)\n" in text
    )
    assert "model gaps: 0 " in text
    gap, groups = evaluated("reality-model-gap")
    text = render_text(gap, groups)
    assert "model gaps: 1 " in text
    under_gap = text.split("* ml/gap ")[1].split("\n* ")[0]
    assert (
        "    model gap: kube-scheduler said 'Unschedulable: 0/1 nodes are available: 1 "
        "Insufficient nvidia.com/gpu." in under_gap
    )
    assert "for ml/gap; ours: runs now" in under_gap
    assert "model gap:" not in text.split("* ml/stale ")[1]
