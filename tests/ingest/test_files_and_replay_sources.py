"""The files source re-reads only changed input; the replay source is a function of time."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recommender.replay import ReplaySource
from tests.ingest.kubeobjects import DATA_DIR, EXAMPLES_DIR
from topology.ingest.replayspecs import (
    GKE_POOL_LABEL,
    AutoscaledPoolSpec,
    GangSpec,
    NodeLabelSpec,
    TeamSpec,
)
from topology.ingest.sources import FilesSource

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


# --- fill mode: the pod list as a workload mix filling the cluster ------------------------------

TEAM_NODES = ("openb-node-0026", "openb-node-0027", "openb-node-0029", "openb-node-0031")


def _fill(**options) -> ReplaySource:
    options.setdefault("seed", 2023)
    options.setdefault("reserved_nodes", TEAM_NODES)
    options.setdefault("teams", (TeamSpec("team-a", TEAM_NODES, share=0.003),))
    return _replay(mode="fill", **options)


@pytest.fixture(scope="module")
def fill_source() -> ReplaySource:
    """One source for the module: its cycle's fill is computed once (about 6 s)."""
    return _fill()


def _gpu_milli(pods) -> int:
    return sum(p.gpu.total_milli for p in pods if p.gpu)


def _bindings(model) -> dict[str, str]:
    return {p.key: p.node_name for p in model.bound_pods()}


def test_it_fills_the_cluster_to_the_gpu_target(fill_source):
    model = fill_source.filled(0)
    capacity_milli = sum(n.gpu_count for n in model.nodes) * 1000
    assert _gpu_milli(model.bound_pods()) >= 0.9 * capacity_milli


def test_it_fills_the_same_cluster_for_the_same_seed_and_tick(fill_source):
    assert _fill().filled(3) == fill_source.filled(3)
    assert _fill(seed=7).filled(0) != fill_source.filled(0)


def test_it_caps_the_pending_trace_pods(fill_source):
    pending = [p for p in fill_source.filled(0).pending_pods() if p.gang is None]
    assert len(pending) == 25
    assert len([p for p in _fill(max_pending=5).filled(0).pending_pods() if p.gang is None]) == 5


def test_it_binds_within_every_nodes_gpu_capacity(fill_source):
    model = fill_source.filled(2)
    milli_by_node: dict[str, int] = {}
    for pod in model.bound_pods():
        milli_by_node[pod.node_name] = milli_by_node.get(pod.node_name, 0) + _gpu_milli([pod])
    gpus = {n.name: n.gpu_count for n in model.nodes}
    assert all(milli <= gpus[name] * 1000 for name, milli in milli_by_node.items())


def test_it_uses_part_of_a_teams_reservation_and_leaves_part_idle(fill_source):
    model = fill_source.filled(0)
    on_team_nodes = [p for p in model.bound_pods() if p.node_name in TEAM_NODES]
    assert on_team_nodes and {p.namespace for p in on_team_nodes} == {"team-a"}
    assert 0 < _gpu_milli(on_team_nodes) < len(TEAM_NODES) * 8 * 1000


def test_it_keeps_other_pods_off_reserved_nodes_without_a_team():
    held = ("openb-node-0035", "openb-node-0057")
    model = _fill(reserved_nodes=(*TEAM_NODES, *held), ticks_per_cycle=1).filled(0)
    assert not {p.node_name for p in model.bound_pods()} & set(held)


def test_it_moves_the_window_on_each_tick(fill_source):
    before, after = _bindings(fill_source.filled(0)), _bindings(fill_source.filled(1))
    left, arrived = before.keys() - after.keys(), after.keys() - before.keys()
    assert len(left) >= 20 and arrived
    stayed = before.keys() & after.keys()
    assert all(before[key] == after[key] for key in stayed if key not in arrived)


def test_it_maps_wall_clock_to_fill_ticks():
    source = _fill(tick_seconds=60)
    assert source.tick_at(ORIGIN + timedelta(seconds=59)) == 0
    assert source.tick_at(ORIGIN + timedelta(minutes=5)) == 5
    assert source.read(ORIGIN + timedelta(minutes=1)).model == source.filled(1)


EXTRA_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "hand-made-0", "labels": {"kubernetes.io/hostname": "hand-made-0"}},
    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"}},
}


def test_it_adds_the_replay_objects_after_the_trace():
    now = ORIGIN + timedelta(minutes=37)
    model = _replay(start_seconds=12_800_000, objects=(EXTRA_NODE,)).read(now).model
    assert len(model.nodes) == 1214  # the 1,213 trace nodes, then the hand-made one
    assert model.nodes[-1].name == "hand-made-0"
    assert model.nodes[-1].gpu_count == 2
    assert all(p.node_name != "hand-made-0" for p in model.pods)


def test_it_refuses_a_replay_object_in_error_naming_it():
    from topology.model.hardware import ModelError

    bad = {**EXTRA_NODE, "status": {"allocatable": {"cpu": "many"}}}
    with pytest.raises(ModelError) as raised:
        _replay(start_seconds=12_800_000, objects=(bad,)).read(ORIGIN)
    assert raised.value.object == "Node/hand-made-0"
    assert "cpu" in raised.value.field


# --- the replay's nodes as a cloud's node pools -------------------------------------------

G3_POOL = NodeLabelSpec(
    match={"nvidia.com/gpu.product": "G3"},
    labels={GKE_POOL_LABEL: "g3", "node.kubernetes.io/instance-type": "x-g3"},
)


def test_it_groups_trace_nodes_into_the_gke_pools_cluster_autoscaler_reports():
    model = (
        _replay(
            start_seconds=12_800_000,
            node_labels=(G3_POOL,),
            autoscaled_pools=(AutoscaledPoolSpec("g3", 1, 50, "zone-0"),),
            prices={"x-g3": 28.0},
        )
        .read(ORIGIN)
        .model
    )
    (group,) = model.node_groups
    # the openb node list has 39 rows of model G3 (8 GPUs each): the pool's members,
    # registered and at target in the status the replay wrote
    assert (group.name, group.min_size, group.max_size, group.current_size) == ("g3", 1, 50, 39)
    ref = group.autoscaler
    assert (ref.kind, ref.pool_kind, ref.pool, ref.target_size) == (
        "cluster-autoscaler",
        "gke",
        "g3",
        39,
    )
    assert ref.name.startswith("https://www.googleapis.com/compute/v1/projects/replay/zones/")
    assert ref.name.split("/")[-1].startswith("gke-replay-g3-")
    assert (group.price_per_node_hour, group.price_known) == (28.0, True)
    members = {n.name for n in model.nodes if n.node_group == "g3"}
    g3 = {n.name for n in model.nodes if n.labels.get("nvidia.com/gpu.product") == "G3"}
    assert members == g3 and len(g3) == 39


def test_it_finds_a_pool_with_no_node_yet_from_the_status_and_the_node_group_naming_it():
    template = {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "8"}}
    spare = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "spare"},
        "spec": {"nodeSelector": {GKE_POOL_LABEL: "spare"}, "template": template},
    }
    model = (
        _replay(
            start_seconds=12_800_000,
            objects=(spare,),
            autoscaled_pools=(AutoscaledPoolSpec("spare", 0, 2, "zone-0"),),
        )
        .read(ORIGIN)
        .model
    )
    (group,) = model.node_groups
    assert (group.name, group.min_size, group.max_size, group.current_size) == ("spare", 0, 2, 0)
    assert (group.autoscaler.kind, group.autoscaler.pool_kind) == ("cluster-autoscaler", "gke")
    assert group.template.gpu_count == 8


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (lambda: NodeLabelSpec.from_json({"match": {}, "labels": {"a": "b"}}), "match"),
        (lambda: NodeLabelSpec.from_json({"match": {"a": "b"}, "labels": "x"}), "labels"),
        (
            lambda: AutoscaledPoolSpec.from_json(
                {"pool": "p", "min_size": 3, "max_size": 2, "zone": "z"}
            ),
            "p: needs 0 <= min_size <= max_size",
        ),
    ],
)
def test_it_refuses_replay_pool_settings_in_error_naming_them(spec, said):
    with pytest.raises(ValueError, match=said):
        spec()
