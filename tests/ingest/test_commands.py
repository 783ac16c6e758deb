"""The ingest, replay and load_config commands, on Postgres."""

from __future__ import annotations

import json
import uuid

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.ingest.kubeobjects import (
    NODE_GROUP,
    OPENB_DIR,
    RESERVATION,
    openb_rows,
    trace_node_object,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _name() -> str:
    return f"cmd-{uuid.uuid4().hex[:6]}"


def _export(tmp_path, count: int = 12):
    folder = tmp_path / "export"
    folder.mkdir()
    nodes = [trace_node_object(r) for r in openb_rows("openb_node_list_gpu_node.csv", count)]
    (folder / "nodes.json").write_text(json.dumps({"kind": "List", "items": nodes}))
    return folder


def test_it_ingests_and_evaluates_exported_files(tmp_path):
    from django_celery_beat.models import PeriodicTask

    from recommender.models import Evaluation
    from topology.models import Cluster, Snapshot

    name = _name()
    call_command("ingest", name, "--source", "files", "--path", str(_export(tmp_path)))
    cluster = Cluster.objects.get(name=name)
    assert Snapshot.objects.get(cluster=cluster).object_counts["nodes"] == 12
    assert Evaluation.objects.filter(cluster=cluster).count() == 1
    assert PeriodicTask.objects.filter(name=f"ingest cluster {cluster.pk}").exists()


def test_a_one_shot_ingest_lets_its_source_go(tmp_path):
    """What the source read is freed before the evaluation (the one-shot memory figure
    of docs/BENCHMARKS.md): no open source is kept for the cluster."""
    from topology import services
    from topology.models import Cluster

    name = _name()
    call_command("ingest", name, "--source", "files", "--path", str(_export(tmp_path)))
    cluster = Cluster.objects.get(name=name)
    assert [key for key in services._open_sources if key[0] == cluster.pk] == []


def test_it_does_not_store_an_unchanged_export_twice(tmp_path, capsys):
    from topology.models import Snapshot

    name = _name()
    folder = _export(tmp_path)
    call_command("ingest", name, "--source", "files", "--path", str(folder))
    call_command("ingest", name)
    assert Snapshot.objects.filter(cluster__name=name).count() == 1
    assert f"{name}: unchanged" in capsys.readouterr().out


def test_it_loads_node_groups_and_reservations_from_yaml(tmp_path):
    from reservations.models import Reservation
    from topology.models import NodeGroup

    name = _name()
    call_command("ingest", name, "--source", "files", "--path", str(_export(tmp_path)))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump_all([NODE_GROUP, RESERVATION]))
    call_command("load_config", name, str(config))
    group = NodeGroup.objects.get(cluster__name=name)
    assert (group.name, group.price_per_node_hour, group.max_size) == ("h100-pool", 88.0, 16)
    reservation = Reservation.objects.get(cluster__name=name)
    assert reservation.owner_namespaces == ["team-a"]


def test_it_exits_2_naming_the_bad_field_and_saves_nothing(tmp_path):
    from topology.models import NodeGroup

    name = _name()
    call_command("ingest", name, "--source", "files", "--path", str(_export(tmp_path)))
    bad = json.loads(json.dumps(NODE_GROUP))
    bad["spec"]["template"]["allocatable"]["memory"] = "a lot"
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump_all([RESERVATION, bad]))
    with pytest.raises(CommandError) as raised:
        call_command("load_config", name, str(config))
    assert raised.value.returncode == 2
    assert "NodeGroup/h100-pool" in str(raised.value) and "memory" in str(raised.value)
    assert not NodeGroup.objects.filter(cluster__name=name).exists()


def test_it_replays_the_trace_step_by_step(capsys):
    from recommender.models import Evaluation
    from topology.models import Snapshot

    name = _name()
    call_command(
        "replay", "--cluster", name, "--steps", "3", "--speed", "600", "--interval", "60",
        "--data-dir", str(OPENB_DIR.parent),
    )  # fmt: skip
    snapshots = Snapshot.objects.filter(cluster__name=name).count()
    assert 1 <= snapshots <= 3
    assert Evaluation.objects.filter(cluster__name=name).count() == snapshots
    assert f"{name}: {snapshots} of 3 steps stored" in capsys.readouterr().out


def test_it_replays_the_fill_protocol_step_by_step(capsys):
    """Fill mode: pods arrive until a few no longer fit, then each step replaces
    some, so every step is a new snapshot of a busy cluster with a short queue."""
    from recommender.models import Evaluation
    from topology.models import Snapshot

    name = _name()
    call_command(
        "replay", "--cluster", name, "--mode", "fill", "--steps", "2", "--interval", "60",
        "--max-pending", "5", "--pods-per-step", "30", "--data-dir", str(OPENB_DIR.parent),
    )  # fmt: skip
    snapshots = list(Snapshot.objects.filter(cluster__name=name).order_by("taken_at"))
    assert len(snapshots) == 2
    assert snapshots[0].content_hash != snapshots[1].content_hash
    latest = Evaluation.objects.get(snapshot=snapshots[-1])
    assert latest.gpus_allocated / latest.gpus > 0.85
    assert 1 <= latest.pending_count <= 5
    assert f"{name}: 2 of 2 steps stored" in capsys.readouterr().out
