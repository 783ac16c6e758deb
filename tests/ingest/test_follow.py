"""`manage.py ingest --follow` as a process of its own, against the local API server and
the test database: it outlives an API server outage, and it is the cluster's one
ingester (the worker's lock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, stop_process, with_database_name
from tests.ingest.kubeobjects import openb_rows, trace_node_object

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
# The old source gave up after 6 attempts of base·2ⁿ ≤ cap: at most 1.25 s with these.
RETRY_BASE_SECONDS = "0.05"
RETRY_CAP_SECONDS = "0.5"
# Longer than a minute (issue 31: a control-plane upgrade), so ~130 attempts fail in a row.
OUTAGE_SECONDS = 65.0
WAIT_SECONDS = 60.0


def wait_for(condition: Callable[[], object], what: str, log: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"never {what}:\n{log.read_text()}")


@pytest.fixture
def run_ingest(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], Path]]]:
    """Start `manage.py ingest ARGS` on the test database; stopped (SIGTERM) afterwards."""
    from django.conf import settings

    started: list[subprocess.Popen[bytes]] = []
    environment = {
        **os.environ,
        "DATABASE_URL": with_database_name(
            os.environ["DATABASE_URL"], settings.DATABASES["default"]["NAME"]
        ),
        "EMBEDDED_WORKER": "false",
        "INGEST_RETRY_BASE_SECONDS": RETRY_BASE_SECONDS,
        "INGEST_RETRY_CAP_SECONDS": RETRY_CAP_SECONDS,
        "PYTHONUNBUFFERED": "1",
    }

    def run(*arguments: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"ingest-{len(started)}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "manage.py", "ingest", *arguments],
                cwd=REPO_ROOT,
                env=environment,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        started.append(process)
        return process, log

    yield run
    for process in started:
        stop_process(process)


def _snapshots(name: str) -> list:
    from topology.models import Snapshot

    return list(Snapshot.objects.filter(cluster__name=name).order_by("taken_at"))


def _cluster(name: str):
    from topology.models import Cluster

    return Cluster.objects.filter(name=name).first()


def _node_lists(kube_server) -> int:
    return sum(
        1
        for _m, path, query in kube_server.requests
        if path == "/api/v1/nodes" and "watch" not in query
    )


def test_it_follows_through_an_api_server_outage_and_ingests_the_change_once(
    kube_server, run_ingest, tmp_path
):
    name = f"follow-{uuid.uuid4().hex[:6]}"
    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")
    process, log = run_ingest(
        name, "--source", "kube", "--kubeconfig", str(kubeconfig), "--follow", "--interval", "1"
    )
    wait_for(lambda: _snapshots(name), "ingested the first snapshot", log)
    kube_server.go_away()
    wait_for(
        lambda: (c := _cluster(name)) and c.ingest_state == "unreachable",
        "said the source is unreachable",
        log,
    )
    time.sleep(OUTAGE_SECONDS)  # far longer than the old source's whole retry budget
    assert process.poll() is None, log.read_text()
    assert "Connection refused" in _cluster(name).ingest_message
    kube_server.put(trace_node_object(openb_rows("openb_node_list_gpu_node.csv", 41)[-1]))
    # back as a restarted kube-apiserver (issue 45): 403 to everything for 1.5 s, 410 for
    # every resourceVersion from before, 429 for custom kinds for 3 s
    kube_server.restart(forbidden_seconds=1.5, initializing_seconds=3.0)
    wait_for(lambda: len(_snapshots(name)) >= 2, "ingested the change", log)
    time.sleep(4.0)  # past the 403 and 429 windows: nothing more to store
    snapshots = _snapshots(name)
    pods = snapshots[0].object_counts["pods"]
    assert pods > 0
    counts = [(s.object_counts["nodes"], s.object_counts["pods"]) for s in snapshots]
    assert counts == [(40, pods), (41, pods)], [s.object_counts for s in snapshots]
    assert _node_lists(kube_server) >= 2  # the 410 after the restart: relisted
    cluster = _cluster(name)
    assert (cluster.ingest_state, cluster.ingest_message) == ("ok", "")
    assert "source unreachable" in log.read_text()
    assert "source answers again" in log.read_text()


def test_it_says_unreachable_within_seconds_while_a_shutting_down_server_keeps_its_watches(
    kube_server, run_ingest, tmp_path
):
    """kube-apiserver after SIGTERM refuses new connections and keeps open watches for a
    minute or more (issue 45: pages said ok for 106 s): a quiet follower says so at once."""
    name = f"shutdown-{uuid.uuid4().hex[:6]}"
    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")
    _process, log = run_ingest(
        name, "--source", "kube", "--kubeconfig", str(kubeconfig), "--follow", "--interval", "600"
    )
    wait_for(lambda: _snapshots(name), "ingested the first snapshot", log)
    time.sleep(1.0)  # the watches are open
    kube_server.shut_down_slowly()
    started = time.monotonic()
    wait_for(
        lambda: (c := _cluster(name)) and c.ingest_state == "unreachable",
        "said the source is unreachable",
        log,
    )
    assert time.monotonic() - started < 15.0  # one probe (5 s) and the debounce
    assert "does not answer new requests" in _cluster(name).ingest_message


def _files_cluster(tmp_path: Path) -> tuple[str, Path]:
    from topology import services

    folder = tmp_path / "export"
    folder.mkdir()
    nodes = [trace_node_object(r) for r in openb_rows("openb_node_list_gpu_node.csv", 6)]
    (folder / "nodes.json").write_text(json.dumps({"kind": "List", "items": nodes}))
    name = f"locked-{uuid.uuid4().hex[:6]}"
    services.save_cluster(name=name, source_kind="files", source_settings={"path": str(folder)})
    return name, folder


def test_it_stands_by_while_the_worker_holds_the_lock_then_takes_over(run_ingest, tmp_path):
    from topology import services

    name, _folder = _files_cluster(tmp_path)
    cluster = _cluster(name)
    token = services.acquire_ingest_lock(
        cluster_id=cluster.pk, lock_seconds=60, holder="worker (pid 1 on node-a)"
    )
    _process, log = run_ingest(name, "--follow", "--interval", "1")
    wait_for(lambda: "standing by" in log.read_text(), "stood by", log)
    assert "ingested by worker (pid 1 on node-a)" in log.read_text()
    time.sleep(1.5)
    assert _snapshots(name) == []
    services.release_ingest_lock(cluster_id=cluster.pk, token=token)
    wait_for(lambda: _snapshots(name), "took over", log)
    assert "took over the ingest" in log.read_text()


def test_it_keeps_the_worker_from_ingesting_a_followed_cluster(run_ingest, tmp_path):
    from topology.models import IngestLock
    from topology.tasks import ingest_cluster

    name, folder = _files_cluster(tmp_path)
    _process, log = run_ingest(name, "--follow", "--interval", "1")
    wait_for(lambda: _snapshots(name), "ingested", log)
    lock = IngestLock.objects.get(cluster__name=name)
    assert lock.holder.startswith("ingest --follow (pid ")
    (folder / "more.json").write_text(
        json.dumps(trace_node_object(openb_rows("openb_node_list_gpu_node.csv", 7)[-1]))
    )
    assert ingest_cluster(_cluster(name).pk) is None  # the periodic ingest skips
    wait_for(lambda: len(_snapshots(name)) == 2, "ingested the change itself", log)


def test_it_refuses_a_one_shot_ingest_of_a_followed_cluster(run_ingest, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    name, _folder = _files_cluster(tmp_path)
    _process, log = run_ingest(name, "--follow", "--interval", "1")
    wait_for(lambda: _snapshots(name), "ingested", log)
    with pytest.raises(CommandError, match=r"ingested by ingest --follow \(pid \d+"):
        call_command("ingest", name)


@pytest.fixture
def held_by_a_one_shot(tmp_path):
    """A files cluster whose lock a one-shot ``ingest`` holds; a second export beside it."""
    from topology import services

    name, _folder = _files_cluster(tmp_path)
    services.acquire_ingest_lock(
        cluster_id=_cluster(name).pk, lock_seconds=60, holder="ingest (pid 7 on node-a)"
    )
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"kind": "List", "items": []}))
    return name, other


def refused_one_shot(name: str, other: Path) -> str:
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = StringIO()
    with pytest.raises(CommandError) as refusal:
        call_command("ingest", name, "--source", "files", "--path", str(other), stdout=out)
    return f"{refusal.value}\n{out.getvalue()}"


def test_it_leaves_the_clusters_source_alone_when_a_one_shot_is_refused(held_by_a_one_shot):
    """issue 42 item 6: the refused one-shot had saved its file as the cluster's source, and
    the worker's periodic ingest stored it 16 s later."""
    name, other = held_by_a_one_shot
    before = _cluster(name).source_settings

    refused_one_shot(name, other)

    assert _cluster(name).source_settings == before
    assert str(other) not in json.dumps(before)


def test_it_names_a_one_shot_holder_as_it_is_and_does_not_stand_by(held_by_a_one_shot):
    name, other = held_by_a_one_shot

    said = refused_one_shot(name, other)

    assert "ingested by ingest (pid 7 on node-a)" in said
    assert "not ingesting twice" in said
    assert "standing by" not in said


def _watches_of_nodes(requests) -> int:
    return sum(1 for _m, path, query in requests if path == "/api/v1/nodes" and "watch" in query)


def test_it_reads_a_crd_installed_mid_follow_on_the_next_pass(kube_server, run_ingest, tmp_path):
    podgroup = "PodGroup.scheduling.x-k8s.io"
    kube_server.unserved.add(podgroup)
    name = f"follow-crd-{uuid.uuid4().hex[:6]}"
    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")
    _process, log = run_ingest(
        name, "--source", "kube", "--kubeconfig", str(kubeconfig), "--follow", "--interval", "1"
    )
    wait_for(lambda: _snapshots(name), "ingested the first snapshot", log)
    installed_at = len(kube_server.requests)
    kube_server.unserved.discard(podgroup)  # the CRD is installed
    wait_for(
        lambda: (_cluster(name).ingest_kinds or {}).get(podgroup, {}).get("state") == "served",
        "read the new kind",
        log,
    )
    after = kube_server.requests[installed_at:]
    first_list = next(
        i
        for i, (_m, path, query) in enumerate(after)
        if path.endswith("/podgroups") and "watch" not in query
    )
    # the pass under way when it was installed, then the next one: not 5 passes later
    assert _watches_of_nodes(after[:first_list]) <= 2, log.read_text()
