"""`ingest --source files` and the periodic ingest on a file that does not parse (half
written, invalid, a YAML alias bomb, oversized): nothing is stored, the previous
snapshot stays, the cluster says why, and the command exits 2 naming the file
(issue 28 item 5)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from tests.ingest.kubeobjects import openb_rows, trace_node_object
from tests.reliability.test_bad_input import billion_laughs

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
BAD_INPUT = 2


def _export(tmp_path: Path) -> Path:
    nodes = [trace_node_object(r) for r in openb_rows("openb_node_list_gpu_node.csv", 12)]
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"kind": "List", "items": nodes}, indent=1))
    return path


def _ingested(tmp_path: Path) -> tuple[str, Path]:
    name = f"bad-{uuid.uuid4().hex[:6]}"
    path = _export(tmp_path)
    call_command("ingest", name, "--source", "files", "--path", str(path))
    return name, path


def _refused(name: str) -> CommandError:
    with pytest.raises(CommandError) as raised:
        call_command("ingest", name)
    assert raised.value.returncode == BAD_INPUT
    return raised.value


def _nodes_per_snapshot(name: str) -> list[int]:
    from topology.models import Snapshot

    return [s.object_counts["nodes"] for s in Snapshot.objects.filter(cluster__name=name)]


def test_it_exits_2_naming_a_half_written_file_and_keeps_the_snapshot(tmp_path):
    name, path = _ingested(tmp_path)
    path.write_text(path.read_text()[: len(path.read_text()) // 2])
    error = _refused(name)
    assert str(error).startswith(f"{path}: not valid YAML")
    assert _nodes_per_snapshot(name) == [12]


def test_it_exits_2_on_a_document_that_is_not_an_object(tmp_path):
    name, path = _ingested(tmp_path)
    path.write_text("- just\n- a list\n")
    assert f"{path}: document is a list, not an object" in str(_refused(name))
    assert _nodes_per_snapshot(name) == [12]


def test_it_exits_2_on_a_yaml_alias_bomb(tmp_path):
    name, path = _ingested(tmp_path)
    path.write_text(billion_laughs())
    assert f"{path}: YAML aliases expand past" in str(_refused(name))
    assert _nodes_per_snapshot(name) == [12]


def test_it_exits_2_on_an_oversized_file(tmp_path, settings):
    limit = len(_export(tmp_path).read_bytes()) + 100
    settings.MAX_SNAPSHOT_BYTES = limit
    name, path = _ingested(tmp_path)
    path.write_text(path.read_text() + " " * 200)  # the export grew past the limit
    assert f"{path}: input larger than max_bytes={limit}" in str(_refused(name))
    assert _nodes_per_snapshot(name) == [12]


def test_it_says_on_the_cluster_page_why_the_file_was_refused(tmp_path, client, django_user_model):
    from topology.models import Cluster

    name, path = _ingested(tmp_path)
    path.write_text("{ not: [closed")
    _refused(name)
    cluster = Cluster.objects.get(name=name)
    assert (cluster.ingest_state, cluster.ingest_message.split(":")[0]) == ("refused", str(path))
    client.force_login(django_user_model.objects.create_user("operator", password="x"))
    page = client.get(reverse("topology", args=[cluster.pk])).content.decode()
    assert 'data-ingest-state="refused"' in page
    assert f"{path}: not valid YAML" in page


def test_the_periodic_ingest_keeps_the_snapshot_of_a_file_mid_rewrite(tmp_path):
    from topology.models import Cluster
    from topology.tasks import ingest_cluster

    name, path = _ingested(tmp_path)
    cluster = Cluster.objects.get(name=name)
    complete = path.read_text()
    path.write_text(complete[:100])  # the writer has not finished
    assert ingest_cluster(cluster.pk) is None
    assert _nodes_per_snapshot(name) == [12]
    cluster.refresh_from_db()
    assert cluster.ingest_state == "refused"
    rewritten = json.loads(complete)
    rewritten["items"] = rewritten["items"][:11]  # the new export: one node fewer
    path.write_text(json.dumps(rewritten))
    assert ingest_cluster(cluster.pk) is not None
    assert _nodes_per_snapshot(name) == [11, 12]
    cluster.refresh_from_db()
    assert (cluster.ingest_state, cluster.ingest_message) == ("ok", "")


def _every_node_refused(path: Path) -> None:
    """The export parses, but no Node in it is one the model can read (issue 42 item 6)."""
    export = json.loads(path.read_text())
    for node in export["items"]:
        node["status"]["allocatable"]["cpu"] = "lots"
    path.write_text(json.dumps(export))


def test_it_exits_2_naming_a_file_whose_every_node_is_refused_and_keeps_the_snapshot(tmp_path):
    name, path = _ingested(tmp_path)
    _every_node_refused(path)
    error = str(_refused(name))
    assert error.startswith(f"{path}: every Node refused (12 of 12): ")
    assert "status.allocatable.cpu" in error  # the reason: the first Node's refusal
    assert _nodes_per_snapshot(name) == [12]


def test_the_periodic_ingest_keeps_the_snapshot_when_every_node_is_refused(tmp_path):
    from topology.models import Cluster
    from topology.tasks import ingest_cluster

    name, path = _ingested(tmp_path)
    _every_node_refused(path)
    cluster = Cluster.objects.get(name=name)
    assert ingest_cluster(cluster.pk) is None
    assert _nodes_per_snapshot(name) == [12]
    cluster.refresh_from_db()
    assert cluster.ingest_state == "refused"
    assert cluster.ingest_message.startswith(f"{path}: every Node refused")


def test_it_keeps_the_nodes_it_can_read_when_only_some_are_refused(tmp_path):
    name, path = _ingested(tmp_path)
    export = json.loads(path.read_text())
    export["items"][0]["status"]["allocatable"]["cpu"] = "lots"
    path.write_text(json.dumps(export))
    call_command("ingest", name)
    assert _nodes_per_snapshot(name) == [11, 12]
