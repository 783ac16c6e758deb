"""The files source re-reads only changed input; the replay source is a function of time."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.ingest.kubeobjects import DATA_DIR, EXAMPLES_DIR
from topology.sources import FilesSource, GangSpec, ReplaySource

ORIGIN = datetime(2026, 12, 1, tzinfo=UTC)
OPENB = DATA_DIR / "alibaba-gpu-v2023"


def _copied_examples(tmp_path: Path) -> Path:
    folder = tmp_path / "export"
    folder.mkdir()
    names = ("k8s-website-deviceclass-v1beta2.yaml", "rocm-amd-resourceslice-mi300x-pcieroot.yaml")
    for name in names:
        shutil.copy(EXAMPLES_DIR / "dra" / name, folder / name)
    return folder


def _files_source(path: Path) -> FilesSource:
    return FilesSource(path, max_bytes=2**20, max_objects=1000)


def test_it_reads_every_object_of_a_directory(tmp_path):
    read = _files_source(_copied_examples(tmp_path)).read(ORIGIN)
    assert {obj["kind"] for _s, obj in read.objects} == {"DeviceClass", "ResourceSlice"}


def test_it_reports_unchanged_files_as_unchanged(tmp_path):
    source = _files_source(_copied_examples(tmp_path))
    source.read(ORIGIN)
    assert source.read(ORIGIN).unchanged


def test_it_rereads_a_file_after_it_changed(tmp_path):
    folder = _copied_examples(tmp_path)
    source = _files_source(folder)
    source.read(ORIGIN)
    changed = folder / "k8s-website-deviceclass-v1beta2.yaml"
    changed.write_text(changed.read_text().replace("example-device-class", "renamed-class"))
    os.utime(changed, ns=(1, 10**18))
    read = source.read(ORIGIN)
    names = {obj["metadata"]["name"] for _s, obj in read.objects if obj["kind"] == "DeviceClass"}
    assert "renamed-class" in names


def _replay(**options) -> ReplaySource:
    return ReplaySource(data_dir=OPENB, cluster_name="replay", origin=ORIGIN, **options)


def test_it_replays_the_same_model_for_the_same_time():
    now = ORIGIN + timedelta(minutes=37)
    first = _replay(start_seconds=12_800_000).read(now).model
    second = _replay(start_seconds=12_800_000).read(now).model
    assert first == second
    assert len(first.nodes) == 1213


def test_it_maps_wall_clock_to_trace_time_by_the_speed_factor():
    source = _replay(speed=600, start_seconds=1_000)
    assert source.trace_seconds_at(ORIGIN + timedelta(seconds=10)) == 7_000


def test_it_holds_only_pods_alive_at_the_trace_time():
    source = _replay()
    model = source.at(12_800_000)
    alive = {
        r.pod.name
        for r in source.rows()
        if r.creation_seconds <= 12_800_000 < (r.deletion_seconds or 10**12)
    }
    assert {p.name for p in model.pods} == alive
    assert model.bound_pods() and model.pending_pods()


def test_it_binds_running_pods_within_node_gpu_capacity():
    model = _replay().at(12_850_000)
    milli_by_node: dict[str, int] = {}
    for pod in model.bound_pods():
        if pod.gpu is None:
            continue
        milli_by_node[pod.node_name] = milli_by_node.get(pod.node_name, 0) + pod.gpu.total_milli
    gpus = {n.name: n.gpu_count for n in model.nodes}
    assert all(milli <= gpus[name] * 1000 for name, milli in milli_by_node.items())


def test_it_keeps_trace_pods_off_reserved_nodes():
    everything = _replay().at(12_850_000)
    used = sorted({p.node_name for p in everything.bound_pods()})
    model = _replay(reserved_nodes=tuple(used)).at(12_850_000)
    assert not {p.node_name for p in model.bound_pods()} & set(used)


def test_it_adds_the_configured_gangs_as_pending_members():
    gang = GangSpec(namespace="team-a", name="train", members=4, gpus_per_member=8)
    model = _replay(gangs=(gang,)).at(12_850_000)
    members = [p for p in model.pods if p.gang == "team-a/train"]
    assert len(members) == 4 and all(p.node_name is None for p in members)
    assert model.gangs[0].min_member == 4
