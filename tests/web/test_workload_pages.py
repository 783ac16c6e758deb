"""The workload page, the pending list's search, sort and summary, the glossary and /help/.

Expectations worked out by hand from the scenarios' own derivations
(tests/scenarios/*.yaml): topology-block's gang ml/train needs 2 × 8 GPUs in one block
while every node has 4 of its 8 GPUs taken by a filler pod.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from recommender.glossary import TERMS
from tests.web.fixtures import TAKEN_AT, ingest_and_evaluate, make_cluster, scenario_objects

pytestmark = pytest.mark.django_db


def workload_url(evaluation: Any, workload: str, query: str = "") -> str:
    return f"/clusters/{evaluation.cluster_id}/workloads/{workload}/{query}"


def pending(client: Any, evaluation: Any, query: str = "") -> str:
    return client.get(f"/clusters/{evaluation.cluster_id}/pending/{query}").content.decode()


def workload_rows(content: str) -> list[str]:
    return re.findall(r'<details class="pending-row" data-workload="([^"]+)"', content)


@pytest.fixture
def share_evaluation(cluster: Any) -> Any:
    """sharing-fraction's half-GPU claim on one lone pod (its gang and other members removed)."""
    objects = [
        (source, obj)
        for source, obj in scenario_objects("sharing-fraction")
        if obj["kind"] != "PodGroup"
        and not (obj["kind"] == "Pod" and obj["metadata"]["name"] != "serve-0")
    ]
    for _source, obj in objects:
        if obj["kind"] == "Pod":
            obj["metadata"]["labels"] = {}
    return ingest_and_evaluate(cluster, objects)


def test_it_tells_the_story_of_a_pending_gang(signed_in: Any, topology_evaluation: Any) -> None:
    response = signed_in.get(workload_url(topology_evaluation, "ml/train"))
    assert response.status_code == 200
    content = response.content.decode()
    # asks: a gang of 2 pods, 16 GPUs, one block
    assert "<dt>Gang size (minMember)</dt><dd>2</dd>" in content
    assert "16 × NVIDIA-H100-80GB-HBM3" in content or "16 × any" in content
    assert "<dt>Required topology level</dt><dd>block" in content
    # why: each of the 4 nodes has 4 free GPUs, a member needs 8
    assert "4 Insufficient nvidia.com/gpu" in content
    assert content.count("<td>Insufficient nvidia.com/gpu</td>") == 4
    assert re.search(r"<th scope=\"row\">z1/b1</th><td>2</td><td>16</td><td>8</td>", content)
    assert re.search(r"<th scope=\"row\">z1/b2</th><td>2</td><td>16</td><td>8</td>", content)
    # naive: 2 × h100 for 160/h, still unschedulable, 16 GPUs stranded
    text = re.sub(r"<[^>]+>", "", content)
    assert "Add 2 × h100 for $160.00/h" in text
    assert "the workload is still unschedulable" in content
    assert "16 GPUs of those nodes" in text
    # instead: the recommendation with its YAML
    assert (
        'data-node-group="h100"' in content and "cloud.google.com/gce-topology-block=b1" in content
    )
    # history: first seen in this snapshot
    assert f"#{topology_evaluation.snapshot_id}</a>" in content
    assert TAKEN_AT.strftime("%Y-%m-%d %H:%M") in content


def test_it_links_the_workloads_block_to_the_heatmap(
    signed_in: Any, topology_evaluation: Any
) -> None:
    content = signed_in.get(workload_url(topology_evaluation, "ml/train")).content.decode()
    assert f"/clusters/{topology_evaluation.cluster_id}/topology/?domain=z1%2Fb1" in content
    assert f"/clusters/{topology_evaluation.cluster_id}/topology/?domain=z1%2Fb2" in content


def test_it_answers_404_naming_an_unknown_workload(
    signed_in: Any, topology_evaluation: Any
) -> None:
    response = signed_in.get(workload_url(topology_evaluation, "ml/nope"))
    assert response.status_code == 404
    assert "No workload <code>ml/nope</code> is pending" in response.content.decode()


def test_it_carries_pending_since_over_to_the_next_evaluation(
    signed_in: Any, topology_evaluation: Any
) -> None:
    later = ingest_and_evaluate(
        topology_evaluation.snapshot.cluster,
        scenario_objects("topology-block")
        + [("test", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})],
        taken_at=TAKEN_AT + timedelta(hours=2),
    )
    verdict = later.verdicts.get(workload="ml/train")
    assert verdict.pending_since == TAKEN_AT
    content = signed_in.get(workload_url(later, "ml/train")).content.decode()
    assert "<td>32.0</td>" in content  # 16 GPUs × 2 h waited since first seen


def test_it_links_every_pending_row_to_its_workload_page(
    signed_in: Any, topology_evaluation: Any
) -> None:
    content = pending(signed_in, topology_evaluation)
    href = f'href="/clusters/{topology_evaluation.cluster_id}/workloads/ml/train/"'
    assert f'<a class="workload-link" {href}>ml/train</a>' in content


def test_it_links_recommendation_cards_to_their_workloads(
    signed_in: Any, topology_evaluation: Any
) -> None:
    url = f"/clusters/{topology_evaluation.cluster_id}/recommendations/"
    content = signed_in.get(url).content.decode()
    assert f'href="/clusters/{topology_evaluation.cluster_id}/workloads/ml/train/"' in content


def test_it_shows_the_summary_bar(signed_in: Any, topology_evaluation: Any) -> None:
    content = pending(signed_in, topology_evaluation)
    text = re.sub(r"<[^>]+>", "", content)
    assert (
        "1 pending, 0 blocked, for 1 the naive autoscaler would buy stranded nodes costing "
        "$160.00/h"
    ) in text


def test_it_searches_by_name_namespace_or_team(signed_in: Any, evaluation: Any) -> None:
    assert workload_rows(pending(signed_in, evaluation, "?q=finetune")) == ["team-a/finetune"]
    assert workload_rows(pending(signed_in, evaluation, "?q=TEAM-A")) == ["team-a/finetune"]
    assert workload_rows(pending(signed_in, evaluation, "?q=nobody")) == []


def test_it_sorts_by_gpus_cost_and_gangs_first(signed_in: Any) -> None:
    """topology-block's gang (16 GPUs, naive 160/h) beside mixed-priorities' pods
    (team-b/batch-old: naive adds one a100 at 32/h; team-a/urgent runs now: 0/h)."""
    first = ingest_and_evaluate(make_cluster("a"), scenario_objects("topology-block"))
    second = ingest_and_evaluate(make_cluster("b"), scenario_objects("mixed-priorities"))
    from recommender.models import WorkloadVerdict

    WorkloadVerdict.objects.filter(evaluation=second).update(evaluation=first)
    by_gpus = workload_rows(pending(signed_in, first, "?sort=gpus"))
    assert by_gpus[0] == "ml/train"
    by_cost = workload_rows(pending(signed_in, first, "?sort=cost"))
    assert by_cost[:2] == ["ml/train", "team-b/batch-old"]
    assert workload_rows(pending(signed_in, first))[0] == "ml/train"  # the gang first


def test_it_shows_a_gpu_share_as_a_fraction(signed_in: Any, share_evaluation: Any) -> None:
    content = pending(signed_in, share_evaluation)
    assert workload_rows(content) == ["serve/serve-0"]
    assert "<span data-gpus>0.5</span> GPUs" in content


def test_it_explains_each_term_on_hover(signed_in: Any, topology_evaluation: Any) -> None:
    content = pending(signed_in, topology_evaluation)
    for key in ("naive", "joint", "stranded", "topology"):
        assert f'data-term="{key}" title="{TERMS[key].text}"' in content.replace("&#x27;", "'")


def test_the_help_page_lists_every_term(signed_in: Any, db: None) -> None:
    content = signed_in.get("/help/").content.decode().replace("&#x27;", "'")
    for term in TERMS.values():
        assert f'<dt id="term-{term.key}">{term.label}</dt>' in content
        assert term.text in content


def test_it_links_the_workloads_a_reservation_can_run(signed_in: Any, evaluation: Any) -> None:
    """reservation-idle-nodes: the joint plan runs team-a/finetune on team-a-h100."""
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/reservations/").content.decode()
    link = f'href="/clusters/{evaluation.cluster_id}/workloads/team-a/finetune/">team-a/finetune'
    assert '<li>team-a-h100: <a class="workload-link" ' + link in content


def test_it_pins_the_workload_page_query_count(
    signed_in: Any, topology_evaluation: Any, django_assert_num_queries: Any
) -> None:
    url = workload_url(topology_evaluation, "ml/train")
    assert signed_in.get(url).status_code == 200  # the first visit works the breakdown out
    # user, clusters, snapshots, latest evaluation, verdict, recommendations, node places,
    # history, the latest utilisation report (none here; with one, also its rows of the
    # workload's pods), the move report: the breakdown comes from the cache
    with django_assert_num_queries(10):
        assert signed_in.get(url).status_code == 200


def test_it_never_says_agree_beside_stranded_gpus(signed_in: Any, cluster: Any) -> None:
    """interpod-anti-affinity-scale-up: both plans add one h100 for serve/web-2, of which
    the naive one leaves 4 GPUs unused: no disagreement class, yet not "agree"."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("interpod-anti-affinity-scale-up"))
    content = pending(signed_in, evaluation)
    row = content.split('data-workload="serve/web-2"', 1)[1].split("</details>", 1)[0]
    assert "same verdict, but the naive nodes strand 4 GPUs" in row
    assert 'data-term="agree"' not in row


def test_it_explains_preempts_on_hover(signed_in: Any, cluster: Any) -> None:
    """preemption-pdb: ml/trainer fits no node and DefaultPreemption evicts batch/sim-0
    on n2 for it, so its verdict is preempts, on the pending row and its page."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("preemption-pdb"))
    hover = f'<abbr data-term="preempts" title="{TERMS["preempts"].text}">Runs after preempting'
    row = pending(signed_in, evaluation).split('data-workload="ml/trainer"', 1)[1]
    assert hover in row.split("</details>", 1)[0].replace("&#x27;", "'")
    page = signed_in.get(workload_url(evaluation, "ml/trainer")).content.decode()
    assert '<span class="verdict verdict-preempts">' + "<a class=" in page
    assert hover in page.replace("&#x27;", "'")


def test_model_gap_is_the_reality_check_not_an_unmodelled_field() -> None:
    assert "PodScheduled=False" in TERMS["model-gap"].text
    assert "runs now" in TERMS["model-gap"].text
    assert "unsupported" in TERMS["unsupported"].text


def breakdown_section(content: str) -> str:
    return content.split('<section aria-labelledby="why-title">', 1)[1].split("</section>", 1)[0]


def test_the_first_visit_reads_the_breakdown_kept_with_the_evaluation(
    signed_in: Any,
    cluster: Any,
    django_assert_num_queries: Any,
) -> None:
    """Once the worker has kept the stored evaluation's breakdowns (its task, run here),
    the first visit reads ml/train's: the page works with the stored snapshot's model
    emptied (a scheduler pass could not run) in the 8 queries of a cached visit. Worked
    out again on the page once the cache is gone (the model back), it shows the same
    tables."""
    from django.core.cache import caches

    from recommender.tasks import keep_workload_breakdowns
    from topology.models import Snapshot

    evaluation = ingest_and_evaluate(cluster, scenario_objects("topology-block"))
    assert keep_workload_breakdowns(evaluation.pk) == 1  # ml/train, the one pending
    snapshot = Snapshot.objects.get(pk=evaluation.snapshot_id)
    Snapshot.objects.filter(pk=snapshot.pk).update(model_json={})
    url = workload_url(evaluation, "ml/train")
    with django_assert_num_queries(10):  # 8, the latest utilisation report (none), moves
        kept = signed_in.get(url).content.decode()
    Snapshot.objects.filter(pk=snapshot.pk).update(model_json=snapshot.model_json)
    caches["default"].clear()
    worked_out = signed_in.get(url).content.decode()
    assert breakdown_section(kept) == breakdown_section(worked_out)
    assert kept.count("<td>Insufficient nvidia.com/gpu</td>") == 4  # the 4 nodes' rows
