"""Ingest → evaluate → rows → live update, on Postgres, Redis and real Celery worker processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from tests.ingest.kubeobjects import OPENB_DIR, example_objects, openb_rows, trace_node_object
from tests.ingest.kubeserver import KubeServer

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
TAKEN_AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
NODE_LIST = "openb_node_list_gpu_node.csv"


def _cluster(name: str = "pipeline", **fields):
    from topology.models import Cluster

    fields.setdefault("source_kind", Cluster.SourceKind.FILES)
    return Cluster.objects.create(name=f"{name}-{uuid.uuid4().hex[:6]}", **fields)


def _trace_model():
    from topology.ingest.files import read_openb

    return read_openb(OPENB_DIR.parent, "default", bound=True)


def _wait_for(condition, timeout_seconds: float, what: str):
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout_seconds}s waiting for {what}")


# --- services ---------------------------------------------------------------------


@pytest.mark.django_db
def test_it_skips_a_snapshot_whose_content_is_unchanged():
    from topology import services
    from topology.models import Snapshot

    cluster = _cluster()
    model = _trace_model()
    first = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, model=model)
    later = TAKEN_AT + timedelta(minutes=1)
    second = services.ingest_snapshot(cluster=cluster, taken_at=later, model=model)
    assert first is not None and second is None
    assert Snapshot.objects.filter(cluster=cluster).count() == 1


@pytest.mark.django_db
def test_it_stores_a_state_again_when_the_cluster_returns_to_it():
    from topology import services
    from topology.models import Snapshot

    cluster = _cluster()
    nodes = [("test", trace_node_object(row)) for row in openb_rows(NODE_LIST, 3)]
    first = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, objects=nodes)
    services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT + timedelta(minutes=1), objects=nodes[:2]
    )
    back = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT + timedelta(minutes=2), objects=nodes
    )
    assert back is not None and back.content_hash == first.content_hash
    assert Snapshot.objects.filter(cluster=cluster).latest().object_counts["nodes"] == 3


@pytest.mark.django_db
def test_it_stores_errors_of_bad_objects_and_keeps_the_rest():
    from topology import services

    cluster = _cluster()
    nodes = [("test", trace_node_object(row)) for row in openb_rows(NODE_LIST, 5)]
    bad = trace_node_object(openb_rows(NODE_LIST, 6)[5])
    bad["status"]["allocatable"]["memory"] = "lots"
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=[*nodes, ("test", bad)]
    )
    assert snapshot.object_counts["nodes"] == 5
    assert [e["object"] for e in snapshot.errors] == ["Node/openb-node-0005"]
    assert "memory" in snapshot.errors[0]["field"]


@pytest.mark.django_db
def test_it_ingests_the_1213_node_trace_snapshot_in_a_pinned_number_of_queries(
    django_assert_max_num_queries,
):
    from topology import services

    cluster = _cluster()
    model = _trace_model()
    # + 1: the node groups the source gave, written back as rows (none here: a read);
    # + 1: the cluster row locked while its latest snapshot's hash is compared
    with django_assert_max_num_queries(8):
        snapshot = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, model=model)
    assert snapshot.object_counts["nodes"] == 1213


@pytest.mark.django_db
def test_it_merges_stored_node_groups_and_reservations_into_the_model():
    from capacityweb.demo import node_group_objects, reservations
    from reservations.services import save_reservation
    from topology import services
    from topology.adapters import cluster_from_snapshot

    cluster = _cluster()
    services.save_node_groups(cluster=cluster, objects=node_group_objects())
    for item in reservations():
        save_reservation(cluster=cluster, name=item.name, spec=item.spec)
    snapshot = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, model=_trace_model())
    model = cluster_from_snapshot(snapshot)
    # the demo stores what it sets over its two trace pools; case-partial-pool (no node
    # yet) is among the replay's objects, found with cluster-autoscaler's status
    assert [g.name for g in model.node_groups] == ["g3-8gpu-pool", "t4-4gpu-pool"]
    assert {r.name for r in model.reservations} == {r.name for r in reservations()}


def h100_group(allocatable: dict[str, str]) -> dict[str, object]:
    """A capacityweb.io NodeGroup "h100" (pool=h100, 80/h) whose template has ``allocatable``."""
    return {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "h100"},
        "spec": {
            "nodeSelector": {"pool": "h100"},
            "minSize": 0,
            "maxSize": 8,
            "pricePerNodeHour": 80.0,
            "template": {"allocatable": allocatable},
        },
    }


@pytest.mark.django_db
def test_it_counts_source_nodes_in_a_node_group_kept_only_in_the_database():
    from topology import services
    from topology.adapters import cluster_from_snapshot

    cluster = _cluster()
    group = h100_group({"cpu": "8", "nvidia.com/gpu": "8"})
    services.save_node_groups(cluster=cluster, objects=[group])
    nodes = [
        ("test", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
        for name, labels in (("h1", {"pool": "h100"}), ("h2", {"pool": "h100"}), ("c1", {}))
    ]
    snapshot = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, objects=nodes)
    model = cluster_from_snapshot(snapshot)
    assert [(g.name, g.current_size) for g in model.node_groups] == [("h100", 2)]
    assert [(n.name, n.node_group, n.price_per_node_hour) for n in model.nodes] == [
        ("h1", "h100", 80.0),
        ("h2", "h100", 80.0),
        ("c1", None, None),
    ]


@pytest.mark.django_db
def test_a_node_group_kept_in_the_database_carries_the_sources_daemonsets():
    """cluster-autoscaler SanitizedTemplateNodeInfoFromNodeGroup: a declared template
    runs every DaemonSet that would run there. The DaemonSet (1 cpu, no selector) comes
    with the source's objects, the group from the database: 8 - 1 = 7 cpu, 110 - 1 pods."""
    from topology import services
    from topology.adapters import cluster_from_snapshot

    cluster = _cluster()
    group = h100_group({"cpu": "8", "pods": "110", "nvidia.com/gpu": "8"})
    services.save_node_groups(cluster=cluster, objects=[group])
    container = {"name": "agent", "resources": {"requests": {"cpu": "1"}}}
    daemon_set = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=[("test", daemon_set)]
    )
    model = cluster_from_snapshot(snapshot)
    assert [d.name for d in model.daemon_pods] == ["DaemonSet/kube-system/agent"]
    (template,) = (g.template for g in model.node_groups)
    assert (template.allocatable.cpu_milli, template.allocatable.pods) == (7000, 109)


@pytest.mark.django_db
def test_it_stores_an_evaluation_idempotently():
    from capacityweb.demo import load_demo
    from recommender.models import Evaluation, Recommendation, WorkloadVerdict
    from recommender.services import store_evaluation
    from reservations.models import IdleSample

    _cluster, evaluation = load_demo(now=TAKEN_AT)
    counts = (
        Recommendation.objects.filter(evaluation=evaluation).count(),
        WorkloadVerdict.objects.filter(evaluation=evaluation).count(),
        IdleSample.objects.filter(evaluation=evaluation).count(),
    )
    again = store_evaluation(snapshot=evaluation.snapshot)
    assert again.pk == evaluation.pk
    assert Evaluation.objects.filter(snapshot=evaluation.snapshot).count() == 1
    assert counts == (
        Recommendation.objects.filter(evaluation=evaluation).count(),
        WorkloadVerdict.objects.filter(evaluation=evaluation).count(),
        IdleSample.objects.filter(evaluation=evaluation).count(),
    )
    assert counts[1] == evaluation.pending_count > 0
    assert counts[2] >= 2  # the two demo reservations on real nodes are sampled


@pytest.mark.django_db
def test_it_loads_the_demo_twice_without_duplicating_anything():
    from capacityweb.demo import DEMO_CLUSTER_NAME, load_demo
    from reservations.models import Reservation
    from topology.models import Cluster, NodeGroup, Snapshot

    load_demo(now=TAKEN_AT)
    load_demo(now=TAKEN_AT)
    cluster = Cluster.objects.get(name=DEMO_CLUSTER_NAME)
    assert Snapshot.objects.filter(cluster=cluster).count() == 1
    assert NodeGroup.objects.filter(cluster=cluster).count() == 3
    assert Reservation.objects.filter(cluster=cluster).count() == 3


@pytest.mark.django_db
def test_it_creates_an_enabled_periodic_ingest_per_cluster():
    from django_celery_beat.models import PeriodicTask

    from topology import services

    cluster = _cluster()
    services.schedule_ingest(cluster=cluster, every_seconds=45)
    services.schedule_ingest(cluster=cluster, every_seconds=45)
    task = PeriodicTask.objects.get(name=f"ingest cluster {cluster.pk}")
    assert task.task == "topology.tasks.ingest_cluster"
    assert json.loads(task.args) == [cluster.pk]
    assert task.enabled and task.interval.every == 45


@pytest.mark.django_db
def test_it_deletes_old_snapshots_but_keeps_each_clusters_newest():
    from topology import services
    from topology.models import Snapshot

    cluster = _cluster()
    model = _trace_model()
    old = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, model=model)
    newest = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT + timedelta(hours=1), model=model.__class__(name="x")
    )
    deleted = services.delete_old_snapshots(now=TAKEN_AT + timedelta(days=60), retention_days=30)
    assert deleted == 1
    assert list(Snapshot.objects.filter(cluster=cluster)) == [newest]
    assert not Snapshot.objects.filter(pk=old.pk).exists()


@pytest.mark.django_db
def test_it_applies_a_clusters_own_retention():
    from recommender.services import store_evaluation
    from topology import services
    from topology.models import Snapshot

    cluster = _cluster(retention_days=1)
    model = _trace_model()
    model = model.__class__(name="small", nodes=model.nodes[:20])
    old = services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, model=model)
    store_evaluation(snapshot=old)  # cascaded rows are not counted as snapshots
    services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT + timedelta(hours=1), model=model.__class__(name="x")
    )
    deleted = services.delete_old_snapshots(now=TAKEN_AT + timedelta(days=2), retention_days=30)
    assert deleted == 1
    assert Snapshot.objects.filter(cluster=cluster).count() == 1


@pytest.mark.django_db
def test_it_refuses_a_second_ingest_lock_until_the_first_expires():
    from topology import services

    cluster = _cluster()
    token = services.acquire_ingest_lock(cluster_id=cluster.pk, lock_seconds=1)
    assert token is not None
    assert services.acquire_ingest_lock(cluster_id=cluster.pk, lock_seconds=1) is None
    time.sleep(1.1)
    assert services.acquire_ingest_lock(cluster_id=cluster.pk, lock_seconds=1) is not None


# --- with a real worker ----------------------------------------------------------------


def _receive(channel: str, timeout_seconds: float) -> dict:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()

    async def receive() -> dict:
        return await asyncio.wait_for(layer.receive(channel), timeout_seconds)

    return async_to_sync(receive)()


@pytest.mark.django_db(transaction=True)
def test_it_ingests_evaluates_and_publishes_through_a_worker(celery_worker_process, tmp_path):
    from channels.layers import get_channel_layer

    from recommender.events import cluster_group
    from recommender.models import Evaluation
    from topology.models import Snapshot
    from topology.tasks import ingest_cluster

    export = tmp_path / "export.json"
    objects = [trace_node_object(r) for r in openb_rows(NODE_LIST, 30)]
    objects += [o for o in example_objects() if o["kind"] in ("Pod", "PodGroup")]
    export.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    cluster = _cluster(source_settings={"path": str(export)})
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(cluster_group(cluster.pk), channel)

    ingest_cluster.delay(cluster.pk)

    evaluation = _wait_for(
        lambda: Evaluation.objects.filter(cluster=cluster).first(), 60, "the evaluation"
    )
    snapshot = Snapshot.objects.get(cluster=cluster)
    assert snapshot.object_counts["nodes"] == 30
    # first the committed ingest's note for open pages, then the evaluation's publish
    (ingested,) = [json.loads(text) for text in _receive(channel, 10)["texts"]]
    assert ingested == {
        "type": "snapshot.ingested",
        "version": 1,
        "cluster": cluster.pk,
        "snapshot": snapshot.pk,
        "evaluation": None,
        "data": {"takenAt": snapshot.taken_at.isoformat()},
    }
    received = [json.loads(text) for text in _receive(channel, 10)["texts"]]  # one publish
    assert {m["type"] for m in received} == {
        "heatmap.update",
        "pending.update",
        "recommendations.update",
    }
    assert all(m["version"] == 1 and m["evaluation"] == evaluation.pk for m in received)


def _start_worker(log_path: Path) -> tuple[subprocess.Popen, str]:
    from django.conf import settings

    from tests.conftest import wait_for_worker, with_database_name

    node_name = f"ingest-kill-{uuid.uuid4().hex[:8]}@localhost"
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        ),
        "EMBEDDED_WORKER": "false",
    }
    celery = Path(sys.executable).with_name("celery")
    arguments = [str(celery), "-A", "capacityweb", "worker", "--pool=solo", "-n", node_name]
    arguments += ["--without-mingle", "--without-gossip", "-l", "INFO"]
    with log_path.open("ab") as log:
        worker = subprocess.Popen(
            arguments, cwd=REPO_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    wait_for_worker(worker, node_name, log_path)
    return worker, node_name


@pytest.mark.django_db(transaction=True)
def test_it_ends_with_exactly_one_snapshot_after_a_worker_is_killed_mid_ingest(
    django_db_setup, tmp_path
):
    from recommender.models import Evaluation
    from topology.models import IngestLock, Snapshot
    from topology.tasks import ingest_cluster

    server = KubeServer().start()
    workers: list[subprocess.Popen] = []
    try:
        server.put_many(trace_node_object(r) for r in openb_rows(NODE_LIST, 20))
        server.stall_seconds = 30.0  # the ingest hangs in its first list call
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        cluster = _cluster(source_kind="kube", source_settings={"kubeconfig": str(kubeconfig)})
        log_path = tmp_path / "worker.log"
        worker, _name = _start_worker(log_path)
        workers.append(worker)

        ingest_cluster.delay(cluster.pk, lock_seconds=2)
        _wait_for(lambda: IngestLock.objects.filter(cluster=cluster).exists(), 30, "the ingest")
        _wait_for(lambda: len(server.requests) > 0, 30, "the first list request")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
        assert Snapshot.objects.filter(cluster=cluster).count() == 0

        server.stall_seconds = 0.0
        time.sleep(2.1)  # the dead worker's lock lapses
        worker, _name = _start_worker(log_path)
        workers.append(worker)
        for _ in range(3):  # as beat would keep sending it
            ingest_cluster.delay(cluster.pk, lock_seconds=2).get(timeout=60)

        _wait_for(lambda: Evaluation.objects.filter(cluster=cluster).exists(), 60, "evaluation")
        assert Snapshot.objects.filter(cluster=cluster).count() == 1
        assert Evaluation.objects.filter(cluster=cluster).count() == 1
        assert Snapshot.objects.get(cluster=cluster).object_counts["nodes"] == 20
    finally:
        for process in workers:
            if process.poll() is None:
                process.terminate()
                process.wait(20)
        server.stop()


@pytest.mark.django_db
def test_it_hashes_the_snapshot_as_the_canonical_text_of_its_content():
    import hashlib

    from topology import services
    from topology.models import Snapshot

    kinds = {"Node": {"state": "ok"}, "Pod": {"state": "ok"}}
    counts = {"Node": 1213, "Pod": 8152}
    cluster = _cluster()
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, model=_trace_model(), kinds=kinds, counts=counts
    )
    row = Snapshot.objects.get(pk=snapshot.pk)
    content = {
        "model": row.model_json,
        "errors": row.errors,
        "read": {"states": {"Node": "ok", "Pod": "ok"}, "counts": counts},
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert row.content_hash == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.django_db
def test_it_keeps_no_copy_of_the_model_json_in_debugs_query_log(settings):
    from django.db import connection, reset_queries

    from topology import services
    from topology.models import Snapshot

    settings.DEBUG = True  # as `make run` and a CLI ingest have it
    reset_queries()
    snapshot = services.ingest_snapshot(cluster=_cluster(), taken_at=TAKEN_AT, model=_trace_model())
    assert Snapshot.objects.filter(pk=snapshot.pk).exists()
    logged = [query["sql"] for query in connection.queries]
    assert logged  # the other queries are logged
    assert max(len(sql) for sql in logged) < 100_000  # the model JSON is megabytes
