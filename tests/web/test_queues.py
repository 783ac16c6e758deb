"""The queues page and ``/api/v1/queue-usage/`` (issue 34), on
tests/scenarios/quota-waiting-kueue.yaml: ClusterQueue team-cq (nominalQuota cpu 64,
nvidia.com/gpu 8; LocalQueue team-a/team-a-lq) runs admitted-0 (8 cpu, 8 GPUs) on n1,
so 56 cpu and 0 GPUs are free, and Job team-a/train (8 cpu, 8 GPUs) waits for quota."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.web.fixtures import ingest_and_evaluate, scenario_objects

WAIT = "waiting for quota in queue ClusterQueue/team-cq (needs 8 nvidia.com/gpu, free 0)"


@pytest.fixture
def kueue_evaluation(cluster: Any) -> Any:
    return ingest_and_evaluate(cluster, scenario_objects("quota-waiting-kueue"))


def page(signed_in: Any, cluster_id: int) -> str:
    response = signed_in.get(f"/clusters/{cluster_id}/queues/")
    assert response.status_code == 200
    return response.content.decode()


def cells(content: str, resource: str) -> list[str]:
    row = re.search(rf'<tr data-resource="{re.escape(resource)}">(.*?)</tr>', content, re.S)
    assert row is not None, resource
    return re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row.group(1))


def test_it_shows_each_resources_quota_against_what_running_pods_use(
    signed_in: Any, kueue_evaluation: Any
) -> None:
    content = page(signed_in, kueue_evaluation.cluster_id)
    assert cells(content, "nvidia.com/gpu") == ["nvidia.com/gpu", "8", "8", "0", "none"]
    assert cells(content, "cpu") == ["cpu", "64", "8", "56", "none"]


def test_it_lists_the_workload_waiting_for_the_queues_quota(
    signed_in: Any, kueue_evaluation: Any
) -> None:
    content = page(signed_in, kueue_evaluation.cluster_id)
    assert re.findall(r'<li data-workload="([^"]+)">', content) == ["team-a/train"]
    assert f"team-a/train: {WAIT}" in content


def test_it_names_the_local_queues_pointing_at_the_cluster_queue(
    signed_in: Any, kueue_evaluation: Any
) -> None:
    assert "LocalQueues: team-a/team-a-lq." in page(signed_in, kueue_evaluation.cluster_id)


def test_it_reads_the_pods_once_per_model_content(
    signed_in: Any, kueue_evaluation: Any, django_assert_num_queries: Any
) -> None:
    from django.core.cache import cache

    cache.delete(f"capacityweb:queue-usage:{kueue_evaluation.snapshot.content_hash}")
    # user, cluster_page's 4, the model's queues, its pods and gangs, waiting verdicts
    with django_assert_num_queries(8):
        first = page(signed_in, kueue_evaluation.cluster_id)
    with django_assert_num_queries(7):  # what the queues admitted is kept: no pods read
        again = page(signed_in, kueue_evaluation.cluster_id)
    for resource in ("cpu", "nvidia.com/gpu"):
        assert cells(again, resource) == cells(first, resource)
    assert cells(first, "nvidia.com/gpu")


def test_it_links_the_page_from_the_overview(signed_in: Any, kueue_evaluation: Any) -> None:
    content = signed_in.get("/").content.decode()
    assert f'href="/clusters/{kueue_evaluation.cluster_id}/queues/"' in content


def test_it_serves_the_same_queue_in_the_api(signed_in: Any, kueue_evaluation: Any) -> None:
    response = signed_in.get(f"/api/v1/queue-usage/?cluster={kueue_evaluation.cluster_id}")
    assert response.status_code == 200
    (queue,) = response.json()
    assert queue["name"] == "ClusterQueue/team-cq"
    assert queue["waiting"] == [{"position": 1, "workload": "team-a/train", "reason": WAIT}]


def test_it_answers_400_when_the_api_is_not_told_which_cluster(
    signed_in: Any, kueue_evaluation: Any
) -> None:
    response = signed_in.get("/api/v1/queue-usage/")
    assert response.status_code == 400
    assert list(response.json()) == ["cluster"]
