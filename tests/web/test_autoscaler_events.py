"""The autoscaler events page and ``/api/v1/autoscaler-events/`` (issue 34), on the GKE
cluster of tests/scenarios/ca-upcoming-no-double-buy.yaml, whose cluster-autoscaler
status ConfigMap reports a2-pool ``ScaleUp: InProgress`` (cloudProviderTarget 3, 2
registered) and cpu-pool ``NoActivity`` (target 1, 1 registered), and, where a test adds
them, cluster-autoscaler's Events and a ProvisioningRequest's conditions
(tests/engine/test_autoscaler_events.py, tests/engine/test_provisioning_requests.py)."""

from __future__ import annotations

import re
from typing import Any

from tests.engine.test_autoscaler_events import TRIGGERED
from tests.engine.test_provisioning_requests import ACCEPTED, NOT_FOUND, request
from tests.web.fixtures import ingest_and_evaluate, scenario_objects

IN_PROGRESS = "ScaleUp:     InProgress (ready=2 cloudProviderTarget=3)"


def gke_objects(scale_up: str = IN_PROGRESS) -> list[tuple[str, dict[str, Any]]]:
    objects = scenario_objects("ca-upcoming-no-double-buy")
    for _source, obj in objects:
        if obj.get("kind") == "ConfigMap":
            obj["data"]["status"] = obj["data"]["status"].replace(IN_PROGRESS, scale_up)
    return objects


def event_rows(signed_in: Any, cluster_id: int) -> list[list[str]]:
    response = signed_in.get(f"/clusters/{cluster_id}/autoscaler-events/")
    assert response.status_code == 200
    rows = re.findall(r"<tr data-node-group=[^>]*>(.*?)</tr>", response.content.decode(), re.S)
    return [
        [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        for row in rows
    ]


def test_it_shows_the_scale_up_cluster_autoscaler_reports_in_progress(
    signed_in: Any, cluster: Any
) -> None:
    evaluation = ingest_and_evaluate(cluster, gke_objects())
    ((group, event, source, detail, about, _time),) = event_rows(signed_in, evaluation.cluster_id)
    assert (group, event, source, detail) == (
        "a2-pool",
        "ScaleUp InProgress",
        "cluster-autoscaler status",
        "(ready=2 cloudProviderTarget=3)",
    )
    assert about.startswith("NodeGroup/") and about.endswith("a2-pool-5e6f7a8b-grp")


def test_it_shows_cluster_autoscaler_events_with_their_first_time(
    signed_in: Any, cluster: Any
) -> None:
    evaluation = ingest_and_evaluate(cluster, [*gke_objects(), ("events.yaml", TRIGGERED)])
    rows = [r for r in event_rows(signed_in, evaluation.cluster_id) if r[1] == "TriggeredScaleUp"]
    assert rows == [
        [
            "—",
            "TriggeredScaleUp",
            "Event (cluster-autoscaler)",
            "pod triggered scale-up: [{a2-pool 2-&gt;4 (max: 4)}]",
            "Pod/ml/train-0",
            "2026-12-01T23:51:00Z",
        ]
    ]


def test_it_shows_a_provisioning_requests_conditions(signed_in: Any, cluster: Any) -> None:
    objects = [*gke_objects(), ("requests.yaml", request([ACCEPTED, NOT_FOUND]))]
    evaluation = ingest_and_evaluate(cluster, objects)
    rows = [
        r for r in event_rows(signed_in, evaluation.cluster_id) if r[2] == "ProvisioningRequest"
    ]
    assert [(r[1], r[4], r[5]) for r in rows] == [
        (
            "Failed=True CapacityIsNotFound",
            "ProvisioningRequest/ml/train-req",
            "2026-12-01T23:55:00Z",
        ),
        ("Accepted=True Accepted", "ProvisioningRequest/ml/train-req", "2026-12-01T23:50:00Z"),
    ]


def test_it_shows_a_scale_up_backoff(signed_in: Any, cluster: Any) -> None:
    backoff = "ScaleUp:     Backoff (ready=2 cloudProviderTarget=3)"
    evaluation = ingest_and_evaluate(cluster, gke_objects(backoff))
    events = [row[1] for row in event_rows(signed_in, evaluation.cluster_id)]
    assert "ScaleUp Backoff" in events


def test_it_no_longer_says_events_are_not_ingested(signed_in: Any, cluster: Any) -> None:
    evaluation = ingest_and_evaluate(cluster, gke_objects())
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/autoscaler-events/")
    assert "Not ingested" not in content.content.decode()


def test_it_says_when_no_group_has_an_autoscaler(signed_in: Any, evaluation: Any) -> None:
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/autoscaler-events/")
    assert "there is no autoscaler report to show" in content.content.decode()


def test_it_serves_the_same_events_in_the_api(signed_in: Any, cluster: Any) -> None:
    evaluation = ingest_and_evaluate(cluster, gke_objects())
    response = signed_in.get(f"/api/v1/autoscaler-events/?cluster={evaluation.cluster_id}")
    assert [(e["node_group"], e["event"], e["source"]) for e in response.json()] == [
        ("a2-pool", "ScaleUp InProgress", "cluster-autoscaler status")
    ]


def test_it_renders_the_page_in_six_queries(
    signed_in: Any, cluster: Any, django_assert_num_queries: Any
) -> None:
    evaluation = ingest_and_evaluate(cluster, gke_objects())
    with django_assert_num_queries(6):  # user, cluster_page's 4, the groups' and events' JSON
        signed_in.get(f"/clusters/{evaluation.cluster_id}/autoscaler-events/")


def test_it_links_the_page_from_the_overview(signed_in: Any, evaluation: Any) -> None:
    content = signed_in.get("/").content.decode()
    assert f'href="/clusters/{evaluation.cluster_id}/autoscaler-events/"' in content
