"""The compact pending page (issue 34): one line per workload, its verdict in plain words
first, grouped by what holds it, the details on expand, a reason every row shares said
once. Expectations from the scenarios' own derivations (tests/scenarios/*.yaml) and,
for the shared reasons, the demo's kube-scheduler messages as the evaluation stores them.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from recommender import pending_causes
from tests.web.fixtures import ingest_and_evaluate, scenario_objects

pytestmark = pytest.mark.django_db

SPLIT = "2 node(s) had untolerated taint {capacityweb.io/demo-case: split}"
QUOTA = "1 node(s) had untolerated taint {capacityweb.io/demo-case: quota}"
DEMO_SUMMARIES = (  # two of the demo's diagnoses, as stored
    f"0/1216 nodes are available: 895 Insufficient cpu, 307 Insufficient nvidia.com/gpu, "
    f"8 node(s) reserved for another team, 3 Insufficient memory, {SPLIT}, {QUOTA}.",
    f"0/1216 nodes are available: 896 Insufficient cpu, 225 node(s) didn't match GPU model "
    f"G2, 80 Insufficient nvidia.com/gpu, 8 Insufficient memory, 4 node(s) reserved for "
    f"another team, {SPLIT}, {QUOTA}. Does not fit in any single block.",
)


def pending(client: Any, evaluation: Any, query: str = "") -> str:
    return client.get(f"/clusters/{evaluation.cluster_id}/pending/{query}").content.decode()


def row_of(content: str, workload: str) -> str:
    match = re.search(
        rf'<details class="pending-row" data-workload="{re.escape(workload)}".*?</details>',
        content,
        re.S,
    )
    assert match is not None, workload
    return match.group(0)


def summary_text(row: str) -> str:
    summary = row.split("<summary>", 1)[1].split("</summary>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", summary).split())


def test_it_groups_a_kueue_quota_wait_under_quota(signed_in: Any, cluster: Any) -> None:
    """quota-waiting-kueue: team-a/train waits for ClusterQueue team-cq's GPUs."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("quota-waiting-kueue"))
    row = row_of(pending(signed_in, evaluation), "team-a/train")
    assert 'data-cause="quota"' in row
    assert summary_text(row).startswith("Waiting for quota in queue ClusterQueue/team-cq")


def test_it_groups_a_gated_pod_under_scheduling_gate(signed_in: Any, cluster: Any) -> None:
    """scheduler-gated-pod: team-a/queued carries a gate, with no ClusterQueue in the input."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("scheduler-gated-pod"))
    row = row_of(pending(signed_in, evaluation), "team-a/queued")
    assert 'data-cause="gate"' in row


def test_it_puts_the_verdict_in_plain_words_before_the_name(
    signed_in: Any, topology_evaluation: Any
) -> None:
    """topology-block: the joint plan adds 2 h100 nodes in one block for gang ml/train,
    which needs 2 × 8 GPUs in one block (every node has 4 free): a topology cause."""
    row = row_of(pending(signed_in, topology_evaluation), "ml/train")
    assert 'data-cause="topology"' in row
    assert summary_text(row).startswith("Runs after adding 2 × h100 ml/train gang · 16 GPUs")


def test_it_heads_each_cause_with_its_count(signed_in: Any, topology_evaluation: Any) -> None:
    content = pending(signed_in, topology_evaluation)
    heading = re.search(r'<h2 id="cause-topology">(.*?)</h2>', content, re.S)
    assert heading is not None
    assert re.sub(r"<[^>]+>", "", heading.group(1)).startswith("Topology (1)")


def test_a_chosen_sort_shows_one_list_without_cause_headings(
    signed_in: Any, topology_evaluation: Any
) -> None:
    content = pending(signed_in, topology_evaluation, "?sort=gpus")
    assert 'data-workload="ml/train"' in content
    assert '<h2 id="cause-' not in content


def test_it_keeps_the_details_closed_until_opened(signed_in: Any, topology_evaluation: Any) -> None:
    row = row_of(pending(signed_in, topology_evaluation), "ml/train")
    assert row.startswith('<details class="pending-row" ') and " open" not in row.split(">")[0]
    assert "Scheduler diagnosis" in row  # in the page, shown on expand


def test_it_finds_the_node_reasons_every_diagnosis_shares() -> None:
    """ "8 node(s) reserved for another team" in one, "4 …" in the other: not shared."""
    assert pending_causes.shared_parts(DEMO_SUMMARIES) == (SPLIT, QUOTA)


def test_it_takes_the_shared_reasons_out_of_each_diagnosis() -> None:
    shared = (SPLIT, QUOTA)
    assert pending_causes.without_parts(DEMO_SUMMARIES[1], shared) == (
        "0/1216 nodes are available: 896 Insufficient cpu, 225 node(s) didn't match GPU "
        "model G2, 80 Insufficient nvidia.com/gpu, 8 Insufficient memory, 4 node(s) "
        "reserved for another team (and the reasons every workload shares, above). "
        "Does not fit in any single block."
    )


def test_it_shares_nothing_with_a_single_diagnosis() -> None:
    assert pending_causes.shared_parts(DEMO_SUMMARIES[:1]) == ()


@pytest.mark.parametrize(
    ("scenario", "workload", "cause", "plain"),
    [
        (
            "partial-gang",
            "ml/pretrain",
            "partial-gang",
            "Blocked: with 2 new node(s) of group h100, all its max size 2 allows: only 2 of 3 "
            "members fit",
        ),
        (
            "blocked-block-too-small",
            "ml/big",
            "topology",
            "Blocked: needs 32 GPUs in one block; the largest block reaches 16 at max size",
        ),
        ("preemption-pdb", "ml/trainer", "preemption", "Runs after preempting"),
        (
            "reservation-idle-nodes",
            "team-a/finetune",
            "reservation",
            "Runs on reservation team-a-h100",
        ),
    ],
)
def test_it_names_the_cause_and_the_plain_verdict_of_each_scenario(
    signed_in: Any, cluster: Any, scenario: str, workload: str, cause: str, plain: str
) -> None:
    """The scenarios' expected verdicts and reasons (tests/scenarios/*.expected.yaml)."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects(scenario))
    row = row_of(pending(signed_in, evaluation), workload)
    assert f'data-cause="{cause}"' in row
    assert summary_text(row).startswith(plain)


def test_it_groups_a_share_no_node_group_can_give_under_sharing() -> None:
    """openb/openb-pod-1125 of the demo (0.46 GPU), as stored: every group's empty
    template refuses the share; no disagreement class names it."""
    reason = (
        "no node group can host its pods: case-partial-pool: 0/1 nodes are available: 1 "
        "node(s) had untolerated taint {capacityweb.io/demo-case: partial}.; g3-8gpu-pool: "
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu share.; t4-4gpu-pool: 0/1 "
        "nodes are available: 1 Insufficient nvidia.com/gpu share."
    )
    verdict = SimpleNamespace(
        verdict="blocked", reasons=[reason], disagreements=[], joint={}, naive={}
    )
    cause = pending_causes.cause_of(verdict, {"summary": DEMO_SUMMARIES[0]})
    assert cause.key == "sharing"
    assert pending_causes.plain_verdict(verdict, cause, {}) == (
        "Blocked: no node group can give it the GPU share it asks for"
    )
    assert pending_causes.group_rejections([reason])[1] == (
        "g3-8gpu-pool: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu share."
    )


def test_it_groups_a_scale_up_whose_gang_reason_names_no_domain_under_new_nodes() -> None:
    """A gang's "only 2 of 3 members fit" is not a topology requirement
    (recommender.engine.scheduler.diagnosis.members_reason)."""
    verdict = SimpleNamespace(
        verdict="runs_after_scale_up", reasons=[], disagreements=[], joint={}, naive={}
    )
    cause = pending_causes.cause_of(verdict, {"gangReason": "only 2 of 3 members fit"})
    assert cause.key == "scale-up"


def test_it_groups_a_gang_that_fits_no_single_block_under_topology() -> None:
    verdict = SimpleNamespace(verdict="blocked", reasons=[], disagreements=[], joint={}, naive={})
    cause = pending_causes.cause_of(verdict, {"gangReason": "does not fit in any single block"})
    assert cause.key == "topology"
