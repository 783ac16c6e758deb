"""Live updates' message shape, the demo's replay moving on, and the kube source behind ingest."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from tests.ingest.kubeobjects import example_objects, openb_rows, trace_node_object

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def demo_evaluation():
    from capacityweb.demo import load_demo

    _cluster, evaluation = load_demo(now=NOW)
    return evaluation


def test_it_names_one_group_per_cluster():
    from recommender.events import cluster_group

    assert cluster_group(7) == "cluster.7"
    assert cluster_group(7) != cluster_group(8)


def test_it_describes_the_full_state_as_three_typed_versioned_messages(demo_evaluation):
    from recommender.events import snapshot_messages

    messages = snapshot_messages(demo_evaluation)
    assert [m["type"] for m in messages] == [
        "heatmap.update",
        "pending.update",
        "recommendations.update",
    ]
    for message in messages:
        assert message["version"] == 1
        assert message["cluster"] == demo_evaluation.cluster_id
        assert message["snapshot"] == demo_evaluation.snapshot_id
        assert message["evaluation"] == demo_evaluation.pk
    heatmap, pending, recommendations = (m["data"] for m in messages)
    assert heatmap["cells"] == len(demo_evaluation.result["heatmap"])
    assert heatmap["dataUrl"] == f"/clusters/{demo_evaluation.cluster_id}/topology/data.json"
    assert pending["pending"] == demo_evaluation.pending_count
    assert sum(pending["verdicts"].values()) == demo_evaluation.pending_count
    assert pending["dataUrl"] == (
        f"/api/v1/pending-workloads/?evaluation={demo_evaluation.pk}&latest=false"
    )
    assert recommendations["cost"] == demo_evaluation.result["cost"]


@pytest.fixture
def demo_cluster():
    from capacityweb.demo import configure_demo

    return configure_demo(now=NOW)


def test_it_keeps_every_demo_message_under_the_websocket_frame_limit(demo_evaluation):
    import json

    from recommender.events import MAX_MESSAGE_BYTES, snapshot_messages

    sizes = [len(json.dumps(m).encode()) for m in snapshot_messages(demo_evaluation)]
    assert max(sizes) < MAX_MESSAGE_BYTES, sizes


def test_it_marks_the_demo_additions_in_the_stored_model(demo_cluster):
    from topology import services
    from topology.adapters import cluster_from_snapshot
    from topology.ingest.trace import SYNTHETIC_TOPOLOGY_LABEL

    snapshot = services.ingest_from_source(cluster=demo_cluster, now=NOW)
    model = cluster_from_snapshot(snapshot)
    trace = [n for n in model.nodes if n.labels.get(SYNTHETIC_TOPOLOGY_LABEL) == "true"]
    assert len(trace) == 1213
    # the hand-made cases' nodes (capacityweb.demo.case_objects), tainted for their pods
    assert {n.name for n in model.nodes} - {n.name for n in trace} == {
        "case-split-0",
        "case-split-1",
        "case-quota-0",
    }
    from capacityweb.demo import gangs

    cases = {"team-s/split-train", "team-p/pretrain", "team-q/train"}
    expected = {f"{g['namespace']}/{g['name']}" for g in gangs()} | cases
    assert {g.key for g in model.gangs} == expected
    assert len(model.gangs) == 9


def test_it_advances_the_demo_replay_with_wall_clock_time(demo_cluster):
    from topology import services

    cluster = demo_cluster
    services.ingest_from_source(cluster=cluster, now=NOW)
    taken = []
    for minutes in (5, 60, 240):
        now = NOW + timedelta(minutes=minutes)
        snapshot = services.ingest_from_source(cluster=cluster, now=now)
        if snapshot is not None:
            taken.append(snapshot.object_counts["pods"])
    assert taken, "the replay produced no new snapshot in four hours of wall time"


def test_it_ingests_a_live_cluster_through_the_kube_source(tmp_path):
    from tests.ingest.kubeserver import KubeServer
    from topology.adapters import cluster_from_snapshot
    from topology.models import Snapshot

    server = KubeServer().start()
    try:
        rows = openb_rows("openb_node_list_gpu_node.csv", 25)
        server.put_many(trace_node_object(r) for r in rows)
        server.put_many(example_objects())
        name = f"live-{uuid.uuid4().hex[:6]}"
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        call_command("ingest", name, "--source", "kube", "--kubeconfig", str(kubeconfig))
    finally:
        server.stop()
    snapshot = Snapshot.objects.get(cluster__name=name)
    model = cluster_from_snapshot(snapshot)
    assert snapshot.object_counts["Node"] == 25
    assert snapshot.object_counts["ResourceSlice"] == len(
        server.state("ResourceSlice.resource.k8s.io")
    )
    assert len(model.nodes) >= 25
    assert {method for method, _path, _query in server.requests} == {"GET"}


def test_it_shows_a_busy_demo_cluster_with_a_few_pending_trace_pods(demo_evaluation):
    cluster = demo_evaluation.result["cluster"]
    assert cluster["gpusAllocated"] >= 0.9 * cluster["gpus"]
    pending_trace = [
        w for w in demo_evaluation.result["workloads"] if w["name"].startswith("openb/")
    ]
    assert 0 < len(pending_trace) <= 25


def test_it_shows_team_a_reservation_both_used_and_idle(demo_evaluation):
    from capacityweb.demo import TEAM_A_G2_NODES

    idle = {r["name"]: r["idleGpus"] for r in demo_evaluation.result["idleReservations"]}
    assert 0 < idle["team-a-g2"] < len(TEAM_A_G2_NODES) * 8


def test_it_exercises_every_disagreement_class_in_the_demo(demo_evaluation):
    from recommender.models import WorkloadVerdict

    classes = {
        kind
        for verdict in WorkloadVerdict.objects.filter(evaluation=demo_evaluation)
        for kind in verdict.disagreements
    }
    # device-model cannot arise under the cluster-autoscaler model (templates judged by
    # the scheduler's filters; see capacityweb.demo.case_objects). never-scales and
    # partial-gang come from the demo's hand-made cases (tests/test_demo.py), sharing
    # from a trace pod taking a GPU share.
    assert classes == {"never-scales", "topology", "reservation", "partial-gang", "sharing"}
