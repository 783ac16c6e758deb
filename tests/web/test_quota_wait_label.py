"""A workload held by a queue's quota is labelled a quota wait, a gated pod a scheduling
gate (issue 34): tests/scenarios/quota-waiting-kueue.yaml (team-a/train waits for
ClusterQueue team-cq's GPUs) and tests/scenarios/scheduler-gated-pod.yaml (team-a/queued carries the
kueue.x-k8s.io/admission gate, with no ClusterQueue in the input)."""

from __future__ import annotations

import re
from typing import Any

from tests.web.fixtures import ingest_and_evaluate, scenario_objects


def verdict_label(signed_in: Any, cluster_id: int, workload: str) -> str:
    content = signed_in.get(f"/clusters/{cluster_id}/pending/").content.decode()
    row = re.search(
        rf'<details class="pending-row" data-workload="{re.escape(workload)}".*?</details>',
        content,
        re.S,
    )
    assert row is not None, workload
    label = re.search(r'<span class="verdict[^"]*">(.*?)</span>', row.group(0), re.S)
    assert label is not None
    return re.sub(r"<[^>]+>", "", label.group(1)).strip()


def test_it_labels_a_kueue_quota_wait_as_a_quota_wait(signed_in: Any, cluster: Any) -> None:
    evaluation = ingest_and_evaluate(cluster, scenario_objects("quota-waiting-kueue"))
    label = verdict_label(signed_in, evaluation.cluster_id, "team-a/train")
    assert label == "Waiting for queue quota"


def test_it_still_labels_a_gated_pod_a_scheduling_gate(signed_in: Any, cluster: Any) -> None:
    evaluation = ingest_and_evaluate(cluster, scenario_objects("scheduler-gated-pod"))
    label = verdict_label(signed_in, evaluation.cluster_id, "team-a/queued")
    assert label == "Waiting (scheduling gate)"
