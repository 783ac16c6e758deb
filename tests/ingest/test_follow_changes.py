"""`manage.py ingest --follow` against the local API server: a Pod added, modified or
deleted through the watch is in the next stored (and evaluated) snapshot, exactly that
Pod changed and nothing lost or doubled, long before the follower's interval (600 s)
comes round; a quiet cluster stores nothing."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.kubeobjects import openb_rows, trace_pod_object
from tests.ingest.test_follow import run_ingest, wait_for  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
LONG_INTERVAL = "600"  # longer than any wait here: only a watch event can start a pass


def _snapshots(name: str) -> list:
    from topology.models import Snapshot

    return list(Snapshot.objects.filter(cluster__name=name).order_by("taken_at", "id"))


def _evaluated(name: str, count: int) -> bool:
    from recommender.models import Evaluation

    snapshots = _snapshots(name)
    return len(snapshots) >= count and Evaluation.objects.filter(snapshot=snapshots[-1]).exists()


def _pods(snapshot: Any) -> dict[str, dict[str, Any]]:
    """The snapshot's pods by namespace/name; a pod stored twice fails the test."""
    pods = snapshot.model_json["cluster"]["pods"]
    by_name = {f"{p['namespace']}/{p['name']}": p for p in pods}
    assert len(by_name) == len(pods), "a pod is stored twice"
    return by_name


def _follow(kube_server, run_ingest, tmp_path: Path, interval: str = LONG_INTERVAL):  # noqa: F811
    name = f"changes-{uuid.uuid4().hex[:6]}"
    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")
    source = ("--source", "kube", "--kubeconfig", str(kubeconfig))
    _process, log = run_ingest(name, *source, "--follow", "--interval", interval)
    wait_for(lambda: _evaluated(name, 1), "ingested and evaluated the first snapshot", log)
    return name, log


def _new_pod() -> dict[str, Any]:
    """A trace pod the server does not hold yet (it is loaded with the first 60 rows)."""
    return trace_pod_object(openb_rows("openb_pod_list_default.csv", 61)[-1])


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['metadata'].get('namespace') or 'default'}/{obj['metadata']['name']}"


def test_it_stores_a_pod_added_through_the_watch_and_nothing_else(
    kube_server,
    run_ingest,  # noqa: F811
    tmp_path,
):
    name, log = _follow(kube_server, run_ingest, tmp_path)
    before = _snapshots(name)[-1]
    pod = kube_server.put(_new_pod())
    wait_for(lambda: _evaluated(name, 2), "stored and evaluated the added pod", log)
    after = _snapshots(name)[-1]
    pods_before, pods_after = _pods(before), _pods(after)
    assert set(pods_after) - set(pods_before) == {_key(pod)}
    assert {key: pods_after[key] for key in pods_before} == pods_before
    assert after.model_json["cluster"]["nodes"] == before.model_json["cluster"]["nodes"]


def test_it_stores_a_pod_modified_through_the_watch_and_nothing_else(
    kube_server,
    run_ingest,  # noqa: F811
    tmp_path,
):
    name, log = _follow(kube_server, run_ingest, tmp_path)
    before = _snapshots(name)[-1]
    pod = next(iter(kube_server.resources["Pod"].items.values()))
    labels = {**(pod["metadata"].get("labels") or {}), "team": "modified"}
    kube_server.put({**pod, "metadata": {**pod["metadata"], "labels": labels}})
    wait_for(lambda: _evaluated(name, 2), "stored and evaluated the modified pod", log)
    pods_before, pods_after = _pods(before), _pods(_snapshots(name)[-1])
    changed = {key for key in pods_before if pods_after.get(key) != pods_before[key]}
    assert changed == {_key(pod)}
    assert set(pods_after) == set(pods_before)
    assert pods_after[_key(pod)]["labels"]["team"] == "modified"


def test_it_stores_the_cluster_as_it_was_when_an_added_pod_is_deleted_again(
    kube_server,
    run_ingest,  # noqa: F811
    tmp_path,
):
    name, log = _follow(kube_server, run_ingest, tmp_path)
    first = _snapshots(name)[-1]
    pod = kube_server.put(_new_pod())
    wait_for(lambda: _evaluated(name, 2), "stored the added pod", log)
    kube_server.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
    wait_for(lambda: _evaluated(name, 3), "stored and evaluated the deletion", log)
    latest = _snapshots(name)[-1]
    assert _pods(latest) == _pods(first)
    assert latest.content_hash == first.content_hash


def test_it_stores_no_snapshot_while_the_cluster_is_quiet(
    kube_server,
    run_ingest,  # noqa: F811
    tmp_path,
):
    name, log = _follow(kube_server, run_ingest, tmp_path, interval="1")
    wait_for(lambda: log.read_text().count(": unchanged") >= 4, "made 4 quiet passes", log)
    assert len(_snapshots(name)) == 1
