"""The dashboard pages, rendered from real evaluations of scenario snapshots."""

from __future__ import annotations

import gzip
import html
import json
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
import yaml
from django.utils import timezone
from django.utils.html import escape

from tests.web.fixtures import (
    SCRIPT_POD_NAME,
    gpu_node,
    ingest_and_evaluate,
    running_pod,
    scenario_objects,
)

pytestmark = pytest.mark.django_db

PAGES = ("topology", "pending", "reservations", "recommendations")


def page_url(evaluation: Any, page: str, query: str = "") -> str:
    return f"/clusters/{evaluation.cluster_id}/{page}/{query}"


@pytest.mark.parametrize("page", PAGES)
def test_it_sends_anonymous_visitors_of_cluster_pages_to_login(
    client: Any, evaluation: Any, page: str
) -> None:
    response = client.get(page_url(evaluation, page))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_sends_anonymous_visitors_of_the_heatmap_data_to_login(
    client: Any, evaluation: Any
) -> None:
    response = client.get(f"/clusters/{evaluation.cluster_id}/topology/data.json")
    assert response.status_code == 302


@pytest.mark.parametrize("page", PAGES)
def test_it_answers_404_for_an_unknown_cluster(signed_in: Any, db: None, page: str) -> None:
    assert signed_in.get(f"/clusters/999999/{page}/").status_code == 404


def test_it_shows_the_gpu_figures_of_the_latest_evaluation_on_the_overview(
    signed_in: Any, evaluation: Any
) -> None:
    content = signed_in.get("/").content.decode()
    figures = evaluation.result["cluster"]
    assert f'data-counter="gpus">{figures["gpus"]}<' in content
    assert f'data-counter="gpusAllocated">{figures["gpusAllocated"]}<' in content
    assert f'data-counter="gpusIdleReserved">{figures["gpusIdleReserved"]}<' in content
    assert "20.00" in content  # idle reserved $/h of team-a-h100 (8 GPUs × 2.5)


def test_it_shows_the_gpus_the_naive_autoscaler_strands(
    signed_in: Any, topology_evaluation: Any
) -> None:
    stranded = sum(w["naive"]["strandedGpus"] for w in topology_evaluation.result["workloads"])
    assert stranded > 0
    content = signed_in.get("/").content.decode()
    assert f'data-counter="strandedGpus">{stranded}<' in content


def test_it_warns_on_the_overview_when_ingest_is_stale(signed_in: Any, cluster: Any) -> None:
    ingest_and_evaluate(
        cluster, scenario_objects("topology-block"), taken_at=timezone.now() - timedelta(hours=1)
    )
    assert "Ingest is stale" in signed_in.get("/").content.decode()


def test_it_does_not_warn_when_the_last_snapshot_is_fresh(signed_in: Any, cluster: Any) -> None:
    ingest_and_evaluate(cluster, scenario_objects("topology-block"), taken_at=timezone.now())
    assert "Ingest is stale" not in signed_in.get("/").content.decode()


def test_it_lists_the_last_snapshots_errors_with_object_field_and_reason(
    signed_in: Any, cluster: Any
) -> None:
    bad_node = gpu_node("bad-1", 2)
    bad_node[1]["status"]["allocatable"]["nvidia.com/gpu"] = "two"
    objects = [*scenario_objects("topology-block"), bad_node]
    evaluation = ingest_and_evaluate(cluster, objects, taken_at=timezone.now())
    error = evaluation.snapshot.errors[0]
    content = signed_in.get("/").content.decode()
    assert "The last snapshot had 1 error" in content
    for key in ("object", "field", "reason"):
        assert f"<td>{escape(error[key])}</td>" in content


def test_it_pins_the_overview_query_count(
    signed_in: Any, evaluation: Any, django_assert_num_queries: Any
) -> None:
    # The session comes from the cache; the cards are rendered once, then kept.
    # user, latest ids per cluster, clusters, snapshots, evaluations, the day's evaluations
    with django_assert_num_queries(6):
        assert signed_in.get("/").status_code == 200
    with django_assert_num_queries(2):  # user, latest ids per cluster
        assert signed_in.get("/").status_code == 200


def test_it_shows_a_new_evaluation_on_the_overview_at_once(signed_in: Any, cluster: Any) -> None:
    first = ingest_and_evaluate(
        cluster, scenario_objects("topology-block"), taken_at=timezone.now() - timedelta(hours=1)
    )
    assert f"Last snapshot #{first.snapshot_id}," in signed_in.get("/").content.decode()
    objects = [*scenario_objects("topology-block"), gpu_node("extra-1", 4)]
    second = ingest_and_evaluate(cluster, objects, taken_at=timezone.now())

    content = signed_in.get("/").content.decode()  # the cached cards name the first one

    assert f"Last snapshot #{second.snapshot_id}," in content
    assert f'data-counter="gpus">{first.gpus + 4}<' in content


def test_it_reads_no_evaluation_result_json_on_the_overview(
    signed_in: Any, topology_evaluation: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        content = signed_in.get("/").content.decode()
    evaluation_reads = [q["sql"] for q in queries if '"recommender_evaluation"' in q["sql"]]
    assert evaluation_reads
    assert not any('"recommender_evaluation"."result"' in sql for sql in evaluation_reads)
    assert f'data-counter="strandedGpus">{topology_evaluation.stranded_gpus}<' in content


def heatmap_payload(response: Any) -> dict[str, Any]:
    content = response.content.decode()
    start = content.index('<script id="heatmap-data" type="application/json">')
    body = content[start:].split(">", 1)[1].split("</script>", 1)[0]
    return json.loads(body)


def test_it_draws_one_heatmap_cell_per_gpu_of_the_evaluation(
    signed_in: Any, evaluation: Any
) -> None:
    payload = heatmap_payload(signed_in.get(page_url(evaluation, "topology")))
    assert payload["gpuCount"] == evaluation.result["cluster"]["gpus"]
    assert len(payload["figure"]["data"]) == 1


def test_it_serves_the_same_heatmap_as_json(signed_in: Any, evaluation: Any) -> None:
    response = signed_in.get(f"/clusters/{evaluation.cluster_id}/topology/data.json")
    payload = response.json()
    assert payload["gpuCount"] == evaluation.result["cluster"]["gpus"]
    assert payload["evaluation"] == evaluation.id


def heatmap_data_url(evaluation: Any, query: str = "") -> str:
    return f"/clusters/{evaluation.cluster_id}/topology/data.json{query}"


def test_it_serves_the_heatmap_data_again_with_the_same_etag(
    signed_in: Any, evaluation: Any
) -> None:
    first = signed_in.get(heatmap_data_url(evaluation))
    again = signed_in.get(heatmap_data_url(evaluation))
    assert first.status_code == again.status_code == 200
    assert first["ETag"].startswith('"') and again["ETag"] == first["ETag"]
    assert again.content == first.content
    assert first["Cache-Control"] == "private, no-cache"
    assert first["Last-Modified"]


def test_it_answers_304_without_a_body_when_the_client_has_the_heatmap_data(
    signed_in: Any, evaluation: Any
) -> None:
    etag = signed_in.get(heatmap_data_url(evaluation))["ETag"]
    response = signed_in.get(heatmap_data_url(evaluation), HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag


def test_it_serves_a_new_evaluation_under_a_new_etag(signed_in: Any, evaluation: Any) -> None:
    etag = signed_in.get(heatmap_data_url(evaluation))["ETag"]
    objects = [*scenario_objects("reservation-idle-nodes"), gpu_node("newer-1", 4)]
    newer = ingest_and_evaluate(
        evaluation.cluster, objects, taken_at=evaluation.taken_at + timedelta(minutes=1)
    )
    response = signed_in.get(heatmap_data_url(evaluation), HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200
    assert response["ETag"] != etag
    assert response.json()["evaluation"] == newer.id
    assert response.json()["gpuCount"] == newer.result["cluster"]["gpus"]


def test_it_rebuilds_the_heatmap_data_when_its_snapshot_is_evaluated_again(
    signed_in: Any, evaluation: Any
) -> None:
    from recommender.services import store_evaluation

    etag = signed_in.get(heatmap_data_url(evaluation))["ETag"]
    again = store_evaluation(snapshot=evaluation.snapshot)
    response = signed_in.get(heatmap_data_url(evaluation), HTTP_IF_NONE_MATCH=etag)
    assert again.id == evaluation.id
    assert response.status_code == 200
    assert response["ETag"] != etag


def test_it_gives_each_heatmap_domain_and_filter_its_own_etag(
    signed_in: Any, evaluation: Any
) -> None:
    whole = signed_in.get(heatmap_data_url(evaluation))
    node = signed_in.get(heatmap_data_url(evaluation, "?domain=~/~/~/x1"))
    team = signed_in.get(heatmap_data_url(evaluation, "?team=team-a"))
    assert len({whole["ETag"], node["ETag"], team["ETag"]}) == 3
    assert [whole.json()["level"], node.json()["level"]] == ["cluster", "node"]
    assert team.json()["rowPaths"] == ["~/~/~/r1"]


def test_it_sends_the_heatmap_data_gzipped_to_a_client_that_accepts_gzip(
    signed_in: Any, evaluation: Any
) -> None:
    plain = signed_in.get(heatmap_data_url(evaluation))
    zipped = signed_in.get(heatmap_data_url(evaluation), HTTP_ACCEPT_ENCODING="br, gzip;q=0.8")

    assert zipped["Content-Encoding"] == "gzip"
    assert "Content-Encoding" not in plain
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) < len(plain.content)
    assert zipped["ETag"] != plain["ETag"]  # different bytes, different tags
    assert "Accept-Encoding" in zipped["Vary"] and "Accept-Encoding" in plain["Vary"]


@pytest.mark.parametrize(
    "accept_encoding", ["", "identity", "gzip;q=0", "br", "*;q=0", "gzip;q=0, *", "gzip;q=x"]
)
def test_it_sends_the_heatmap_data_as_is_unless_gzip_is_accepted(
    signed_in: Any, evaluation: Any, accept_encoding: str
) -> None:
    response = signed_in.get(heatmap_data_url(evaluation), HTTP_ACCEPT_ENCODING=accept_encoding)
    assert "Content-Encoding" not in response
    assert response.json()["evaluation"] == evaluation.id


def test_it_answers_304_to_a_gzip_client_that_has_the_gzipped_heatmap_data(
    signed_in: Any, evaluation: Any
) -> None:
    url = heatmap_data_url(evaluation)
    etag = signed_in.get(url, HTTP_ACCEPT_ENCODING="gzip")["ETag"]

    again = signed_in.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=etag)
    plain = signed_in.get(url, HTTP_IF_NONE_MATCH=etag)  # the tag of the other coding

    assert (again.status_code, again.content) == (304, b"")
    assert plain.status_code == 200 and plain.json()["evaluation"] == evaluation.id


def test_it_pins_the_heatmap_data_query_counts(
    signed_in: Any, evaluation: Any, django_assert_num_queries: Any
) -> None:
    url = heatmap_data_url(evaluation)
    # user, evaluation shown (without its result), heatmap cells; the session is cached
    with django_assert_num_queries(3):
        etag = signed_in.get(url)["ETag"]
    with django_assert_num_queries(2):  # served from the cache: the result is not read
        assert signed_in.get(url).status_code == 200
    with django_assert_num_queries(2):
        assert signed_in.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_it_serves_a_published_evaluations_heatmap_without_building_it(
    signed_in: Any, evaluation: Any, django_assert_num_queries: Any
) -> None:
    from recommender import events

    events.publish_evaluation(evaluation)  # as the evaluate task does

    with django_assert_num_queries(2):  # user, evaluation shown: the cells are never read
        payload = signed_in.get(heatmap_data_url(evaluation)).json()
    assert payload["evaluation"] == evaluation.id
    assert payload["gpuCount"] == evaluation.result["cluster"]["gpus"]


def test_it_keeps_a_published_evaluations_heatmap_gzipped_in_the_shared_cache(
    evaluation: Any,
) -> None:
    from django.core.cache import caches

    from recommender import events, selectors
    from topology import charts

    events.publish_evaluation(evaluation)

    view = {"evaluation": evaluation, "domain": (), "filters": charts.HeatmapFilters()}
    shared = caches[selectors.HEATMAP_SHARED_CACHE]
    zipped = shared.get(selectors.heatmap_key(**view, encoding="gzip"))
    assert zipped is not None
    assert gzip.decompress(zipped) == shared.get(selectors.heatmap_key(**view))


def test_it_drills_into_a_node_with_one_row_per_gpu(signed_in: Any, evaluation: Any) -> None:
    response = signed_in.get(
        f"/clusters/{evaluation.cluster_id}/topology/data.json?domain=~/~/~/x1"
    )
    payload = response.json()
    assert payload["level"] == "node"
    assert payload["figure"]["data"][0]["y"] == ["x1 · GPU gpu-0", "x1 · GPU gpu-1"]


def test_it_filters_the_heatmap_by_team(signed_in: Any, evaluation: Any) -> None:
    response = signed_in.get(f"/clusters/{evaluation.cluster_id}/topology/data.json?team=team-a")
    # team-a runs nothing but owns reservation team-a-h100 on node r1 (8 GPUs)
    assert response.json()["rowPaths"] == ["~/~/~/r1"]


def test_it_filters_the_heatmap_and_the_node_list_by_the_same_gpu_model(
    signed_in: Any, evaluation: Any
) -> None:
    heatmap = signed_in.get(
        f"/clusters/{evaluation.cluster_id}/topology/data.json?gpu_model=NVIDIA-L4"
    )
    nodes = signed_in.get(
        "/api/v1/nodes/", {"cluster": evaluation.cluster_id, "gpu_model": "NVIDIA-L4"}
    )
    # x1 is the only L4 node (2 GPUs); r1 and o1 are H100s
    assert heatmap.json()["rowPaths"] == ["~/~/~/x1"]
    assert [node["name"] for node in nodes.json()["results"]] == ["x1"]


def test_it_stores_a_row_per_gpu_node_with_the_evaluation(evaluation: Any) -> None:
    rows = evaluation.nodes.order_by("name")
    assert [(row.name, row.gpus, row.teams) for row in rows] == [
        ("o1", 8, ["team-b"]),
        ("r1", 8, ["team-a"]),  # team-a runs nothing there but owns its reservation
        ("x1", 2, ["team-x"]),
    ]


def test_it_escapes_a_pod_named_like_a_script_tag(signed_in: Any, evaluation: Any) -> None:
    content = signed_in.get(page_url(evaluation, "topology")).content.decode()
    assert SCRIPT_POD_NAME not in content
    assert SCRIPT_POD_NAME in json.dumps(heatmap_payload_from(content))


def heatmap_payload_from(content: str) -> dict[str, Any]:
    start = content.index('<script id="heatmap-data" type="application/json">')
    return json.loads(content[start:].split(">", 1)[1].split("</script>", 1)[0])


def test_it_pins_the_topology_page_query_count(
    signed_in: Any, evaluation: Any, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(4):  # user, clusters, snapshots, evaluation (session cached)
        assert signed_in.get(page_url(evaluation, "topology")).status_code == 200


def test_it_shows_an_older_snapshot_when_asked(signed_in: Any, cluster: Any) -> None:
    first = ingest_and_evaluate(
        cluster, scenario_objects("topology-block"), taken_at=timezone.now() - timedelta(hours=2)
    )
    objects = [*scenario_objects("topology-block"), gpu_node("extra-1", 4)]
    ingest_and_evaluate(cluster, objects, taken_at=timezone.now())
    latest = signed_in.get(page_url(first, "topology")).content.decode()
    older = signed_in.get(page_url(first, "topology", f"?snapshot={first.snapshot_id}"))
    assert heatmap_payload_from(latest)["gpuCount"] == first.result["cluster"]["gpus"] + 4
    assert heatmap_payload(older)["gpuCount"] == first.result["cluster"]["gpus"]
    assert f"history: snapshot #{first.snapshot_id}" in older.content.decode()


def test_it_answers_404_for_a_snapshot_of_another_cluster(signed_in: Any, evaluation: Any) -> None:
    from tests.web.fixtures import make_cluster

    other = ingest_and_evaluate(make_cluster("other"), scenario_objects("topology-block"))
    response = signed_in.get(page_url(evaluation, "pending", f"?snapshot={other.snapshot_id}"))
    assert response.status_code == 404


def test_it_explains_each_pending_workload(signed_in: Any, evaluation: Any) -> None:
    content = signed_in.get(page_url(evaluation, "pending")).content.decode()
    diagnosis = evaluation.result["diagnoses"]["team-a/finetune"]["summary"]
    assert "team-a/finetune" in content
    assert diagnosis in content
    # cluster-autoscaler templates group h100 from its first member, r1, tainted for
    # team-a: the pod does not tolerate it, so CA adds nothing (never-scales)
    assert "adds nothing" in content  # what the naive autoscaler does
    assert "never-scales" in content
    assert "reuse team-a-h100" in content  # what the joint plan does instead


def test_it_lists_what_the_evaluation_did_not_model_on_the_pending_page(
    signed_in: Any, cluster: Any
) -> None:
    objects = scenario_objects("agreement-runs-now")
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "x"}}
    web = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "serve"},
        "spec": {
            "containers": [{"name": "c"}],
            "volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
        },
        "status": {"phase": "Pending"},
    }
    objects += [("extra.yaml", service), ("extra.yaml", web)]
    evaluated = ingest_and_evaluate(cluster, objects)
    content = signed_in.get(page_url(evaluated, "pending")).content.decode()
    assert "ignored 1 × Service (v1)" in content
    field = "spec.volumes[0].ephemeral"
    assert f"Pod/serve/web-0: <code>{field}</code>: generic ephemeral volume" in content
    assert "unsupported: generic ephemeral volume (VolumeBinding) is not modelled" in content


def test_it_filters_pending_workloads_by_disagreement_class(
    signed_in: Any, topology_evaluation: Any
) -> None:
    topology = signed_in.get(page_url(topology_evaluation, "pending", "?disagreement=topology"))
    sharing = signed_in.get(page_url(topology_evaluation, "pending", "?disagreement=sharing"))
    assert 'data-workload="ml/train"' in topology.content.decode()
    assert 'data-workload="ml/train"' not in sharing.content.decode()


def test_it_pins_the_pending_page_query_count(
    signed_in: Any, evaluation: Any, django_assert_num_queries: Any
) -> None:
    # user, clusters, snapshots, evaluation, the filter's evaluation, verdicts (session cached)
    with django_assert_num_queries(6):
        assert signed_in.get(page_url(evaluation, "pending")).status_code == 200


def test_it_shows_each_action_of_a_recommendation_with_its_own_copy(
    signed_in: Any, topology_evaluation: Any
) -> None:
    recommendation = topology_evaluation.recommendations.get()
    content = signed_in.get(page_url(topology_evaluation, "recommendations")).content.decode()
    assert f"Add {recommendation.count} × {recommendation.node_group}" in content
    (item,) = topology_evaluation.result["recommendations"]
    # EITHER the request with its template, OR the size, THEN the size back, a note
    assert [a["role"] for a in item["actions"]] == ["either", "or", "afterwards", "note"]
    for number, action in enumerate(item["actions"], start=1):
        copied = f'<pre id="yaml-{recommendation.id}-{number}" tabindex="0"><code>'
        assert f'data-copy-target="yaml-{recommendation.id}-{number}"' in content
        start = content.index(copied) + len(copied)
        assert html.unescape(content[start : content.index("</code>", start)]) == action["text"]
    assert ">ml/train</a>" in content  # linked to its workload page


def test_it_stores_the_node_group_patch_and_provisioning_request_to_apply(
    topology_evaluation: Any,
) -> None:
    # h100 has 4 nodes in the snapshot (a1, a2, c1, c2); the plan adds 2 in block b1:
    # either the ProvisioningRequest (with the PodTemplate it names) or the group's
    # minSize, each an action of its own; ``yaml`` is the first of them alone
    card = topology_evaluation.recommendations.get()
    requests = [a for a in card.actions if a["kind"] == "ProvisioningRequest"]
    sizes = [a for a in card.actions if a["kind"] == "NodeGroup" and a["role"] != "afterwards"]
    assert card.yaml == requests[0]["text"]
    documents = list(yaml.safe_load_all(requests[0]["text"]))
    (request,) = [d for d in documents if d["kind"] == "ProvisioningRequest"]
    templates = {d["metadata"]["name"] for d in documents if d["kind"] == "PodTemplate"}
    assert request["spec"]["podSets"][0]["podTemplateRef"]["name"] in templates
    (patch,) = yaml.safe_load_all(sizes[0]["text"])
    assert patch == {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "h100"},
        "spec": {"minSize": 6},
    }
    assert request["spec"]["provisioningClassName"] == (
        "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    )
    assert request["spec"]["podSets"][0]["count"] == 2


def test_it_pins_the_recommendations_page_query_count(
    signed_in: Any, topology_evaluation: Any, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(6):  # user, clusters, snapshots, evaluation, rows, move report
        assert signed_in.get(page_url(topology_evaluation, "recommendations")).status_code == 200


def evaluate_hours_ago(cluster: Any, hours: float, extra: list[Any]) -> Any:
    objects = [*scenario_objects("reservation-idle-nodes"), *extra]
    return ingest_and_evaluate(cluster, objects, taken_at=timezone.now() - timedelta(hours=hours))


def test_it_reports_idle_gpu_hours_per_reservation_over_the_range(
    signed_in: Any, cluster: Any
) -> None:
    # r1's 8 GPUs idle from 3 h ago; from 1 h ago a team-a pod holds all of them.
    evaluate_hours_ago(cluster, 3, [])
    latest = evaluate_hours_ago(cluster, 1, [running_pod("uses-r1", "team-a", "r1", 8)])
    content = signed_in.get(page_url(latest, "reservations", "?range=24h")).content.decode()
    assert "<td>16.0</td>" in content  # 8 idle GPUs × 2 h
    assert "<td>$40.00</td>" in content  # × 2.5 per GPU-hour
    assert "team-a" in content


def test_it_draws_the_idle_gpus_over_time_from_the_samples(signed_in: Any, evaluation: Any) -> None:
    response = signed_in.get(
        page_url(
            evaluation,
            "reservations",
            "?range=custom&start=2026-12-01T00:00:00Z&end=2026-12-03T00:00:00Z",
        )
    )
    content = response.content.decode()
    start = content.index('<script id="idle-chart-data" type="application/json">')
    figure = json.loads(content[start:].split(">", 1)[1].split("</script>", 1)[0])
    assert [trace["name"] for trace in figure["data"]] == ["team-a-h100"]
    assert figure["data"][0]["y"][0] == 8


def test_it_links_the_idle_report_csv_for_the_range(signed_in: Any, evaluation: Any) -> None:
    content = signed_in.get(page_url(evaluation, "reservations", "?range=30d")).content.decode()
    assert "/api/v1/reports/idle-reservations/?format=csv&amp;cluster=" in content


def test_it_refuses_a_custom_range_that_ends_before_it_starts(
    signed_in: Any, evaluation: Any
) -> None:
    query = "?range=custom&start=2026-12-03T00:00:00Z&end=2026-12-01T00:00:00Z"
    response = signed_in.get(page_url(evaluation, "reservations", query))
    assert response.status_code == 400
    assert "end must be after start" in response.content.decode()


def test_it_pins_the_reservations_page_query_count(
    signed_in: Any, evaluation: Any, django_assert_max_num_queries: Any
) -> None:
    with django_assert_max_num_queries(14):
        assert signed_in.get(page_url(evaluation, "reservations")).status_code == 200


def test_it_gives_each_card_its_own_delta_and_one_apply_all_block_per_group(
    signed_in: Any, cluster: Any
) -> None:
    # h100 has no node; the plan adds 1 node in b1 and 1 in b3: two cards of +1
    evaluation = ingest_and_evaluate(cluster, scenario_objects("topology-preferred-split"))
    cards = list(evaluation.recommendations.all())
    sizes = [
        next(a for a in c.actions if a["kind"] == "NodeGroup" and a["role"] != "afterwards")
        for c in cards
    ]
    assert [next(yaml.safe_load_all(a["text"]))["spec"] for a in sizes] == [{"minSize": 1}] * 2
    content = html.unescape(signed_in.get(page_url(evaluation, "recommendations")).content.decode())
    assert content.count('<span class="muted">(this card alone: from 0 to 1)</span>') == 2
    assert "Apply all for node group h100" in content
    block = content[content.index('data-node-group-total="h100"') :]
    size = block[block.index('data-action-kind="NodeGroup"') :]
    (patch,) = yaml.safe_load_all(size[size.index("<code>") + 6 : size.index("</code>")])
    assert patch["spec"] == {"minSize": 2}


def shown_range(content: str) -> str:
    return content.split('id="range-shown">', 1)[1].split("·", 1)[0].strip()


def test_it_reads_custom_dates_in_the_pages_time_zone_across_a_dst_change(
    signed_in: Any, evaluation: Any
) -> None:
    # Berlin springs forward on 2026-03-29 (02:00 CET → 03:00 CEST): noon to noon local
    # is 23 hours, 2026-03-28 11:00 UTC (CET, +1) to 2026-03-29 10:00 UTC (CEST, +2).
    query = "?range=custom&start=2026-03-28T12:00&end=2026-03-29T12:00&tz=Europe/Berlin"
    content = signed_in.get(page_url(evaluation, "reservations", query)).content.decode()
    assert shown_range(content) == "From 2026-03-28 12:00 to 2026-03-29 12:00 Europe/Berlin"
    assert "start=2026-03-28T11%3A00%3A00%2B00%3A00" in content  # the CSV link, in UTC
    assert "end=2026-03-29T10%3A00%3A00%2B00%3A00" in content
    assert "read as Europe/Berlin wall-clock times" in content


def test_it_reads_custom_dates_in_the_configured_zone_by_default(
    signed_in: Any, evaluation: Any, settings: Any
) -> None:
    settings.DASHBOARD_TIME_ZONE = "America/New_York"  # EST, -5 in January
    query = "?range=custom&start=2026-01-10T00:00&end=2026-01-11T00:00"
    content = signed_in.get(page_url(evaluation, "reservations", query)).content.decode()
    assert "start=2026-01-10T05%3A00%3A00%2B00%3A00" in content
    assert shown_range(content) == "From 2026-01-10 00:00 to 2026-01-11 00:00 America/New_York"


def test_it_refuses_a_wall_time_the_clocks_skip(signed_in: Any, evaluation: Any) -> None:
    query = "?range=custom&start=2026-03-29T02:30&end=2026-03-29T12:00&tz=Europe/Berlin"
    response = signed_in.get(page_url(evaluation, "reservations", query))
    assert response.status_code == 400
    assert "2026-03-29T02:30 does not exist in Europe/Berlin" in response.content.decode()


def test_it_refuses_an_unknown_time_zone(signed_in: Any, evaluation: Any) -> None:
    response = signed_in.get(page_url(evaluation, "reservations", "?tz=Mars/Olympus"))
    assert response.status_code == 400
    assert "is not an IANA time zone" in response.content.decode()


def idle_chart(content: str) -> dict[str, Any]:
    start = content.index('<script id="idle-chart-data" type="application/json">')
    return json.loads(content[start:].split(">", 1)[1].split("</script>", 1)[0])


def test_it_scales_the_idle_chart_to_the_samples_not_the_requested_window(
    signed_in: Any, cluster: Any
) -> None:
    # samples 3 h and 1 h ago in a 30-day window: the x axis spans those 2 hours
    evaluate_hours_ago(cluster, 3, [])
    latest = evaluate_hours_ago(cluster, 1, [running_pod("uses-r1", "team-a", "r1", 8)])
    figure = idle_chart(
        signed_in.get(page_url(latest, "reservations", "?range=30d")).content.decode()
    )
    first, last = (datetime.fromisoformat(x) for x in figure["layout"]["xaxis"]["range"])
    assert abs((last - first) - timedelta(hours=2)) < timedelta(seconds=5)  # not 30 days
    assert figure["data"][0]["y"] == [8, 0]


def test_it_says_so_when_the_range_has_no_sample(signed_in: Any, evaluation: Any) -> None:
    query = "?range=custom&start=2020-01-01T00:00&end=2020-01-02T00:00"
    figure = idle_chart(signed_in.get(page_url(evaluation, "reservations", query)).content.decode())
    assert figure["data"] == []
    assert figure["layout"]["annotations"][0]["text"] == "No idle sample in this range"


def sparkline_attributes(content: str, name: str) -> dict[str, str]:
    tag = content.split(f'data-sparkline="{name}"', 1)[1].split(">", 1)[0]
    return dict(re.findall(r'data-(\w+)="([^"]*)"', tag))


def test_it_draws_a_day_of_pending_gpus_and_waste_per_cluster_on_the_overview(
    signed_in: Any, cluster: Any
) -> None:
    # topology-block: one 16-GPU gang pending; the naive autoscaler strands 160/h, no
    # reservation idles. 30 h ago is outside the day; 3 h and 1 h ago are in it.
    for hours, extra in ((30, "old-1"), (3, "mid-1"), (1, "new-1")):
        objects = [*scenario_objects("topology-block"), gpu_node(extra, 4)]
        ingest_and_evaluate(cluster, objects, taken_at=timezone.now() - timedelta(hours=hours))
    content = signed_in.get("/").content.decode()
    pending = sparkline_attributes(content, "pending-gpus")
    assert (pending["samples"], pending["last"], pending["peak"]) == ("2", "16.0", "16.0")
    waste = sparkline_attributes(content, "waste")
    assert (waste["samples"], waste["last"]) == ("2", "160.0")
    assert "<polyline" in content


def test_it_says_when_a_cluster_has_no_evaluation_in_the_last_day(
    signed_in: Any, cluster: Any
) -> None:
    ingest_and_evaluate(
        cluster, scenario_objects("topology-block"), taken_at=timezone.now() - timedelta(hours=30)
    )
    content = signed_in.get("/").content.decode()
    assert "no evaluation in the last 24 h" in content
    assert "samples" not in sparkline_attributes(content, "pending-gpus")


def test_it_writes_every_money_figure_on_the_overview_in_the_configured_currency(
    signed_in: Any, evaluation: Any, settings: Any
) -> None:
    settings.CURRENCY = "EUR"
    html = signed_in.get("/").content.decode()
    assert re.search(r'data-counter="idleReservedPerHour">€20\.00/h<', html)
    assert re.search(r'data-counter="strandedPerHour">€\d[\d,]*\.\d\d/h<', html)
    assert not re.search(r"\$\d|USD", html)


def test_it_links_the_utilisation_page_from_the_overview_card(
    signed_in: Any, evaluation: Any
) -> None:
    html = signed_in.get("/").content.decode()
    assert f'href="/clusters/{evaluation.cluster_id}/utilisation/"' in html


def test_it_shows_model_gaps_and_the_fgd_what_if_on_the_overview(
    signed_in: Any, cluster: Any
) -> None:
    # tests/scenarios/reality-model-gap.expected.yaml: one model gap; FGD places
    # no more than kube-default there (the two one-GPU pods fit either way)
    ingest_and_evaluate(cluster, scenario_objects("reality-model-gap"))
    content = signed_in.get("/").content.decode()
    assert 'data-counter="modelGaps" title="runs now in the simulation, ' in content
    assert ">1</dd></div><div><dt>More GPUs placed with fgd</dt><dd>0</dd>" in content


def test_it_gives_the_idle_cost_per_hour_now_beside_the_period_total(
    signed_in: Any, evaluation: Any
) -> None:
    content = signed_in.get(page_url(evaluation, "reservations", "?range=24h")).content.decode()
    # team-a-h100: 8 idle GPUs × 2.5 per GPU-hour
    assert 'data-figure="idle-per-hour-now">$20.00/h<' in content
    assert re.search(r'data-figure="idle-cost-period">\$[\d,]+\.\d\d<', content)
