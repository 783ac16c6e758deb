"""Every real fixture in data/k8s-examples parses or is rejected precisely."""

import pytest

from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import ModelError

# k8s-examples/SOURCES.md "Parsing notes": originals with "..." elisions
NOT_YAML = {
    "dra/kep5075-resourceclaim-capacity-request-fragment.yaml",
    "dra/kep5075-resourceslice-consumable-capacity-fragment.yaml",
    "nodes/gfd-readme-kubectl-get-nodes-a100-dgx2h.yaml",
}
# parse as YAML but are not (valid) objects; the reason each is refused
REJECTED = {
    "dra/kep4815-fragment-a100-mig-devices-consumescounters.yaml": "kind: required",
    "dra/kep4815-fragment-a100-sharedcounters.yaml": "kind: required",
    "dra/rocm-amd-resourceclaim-status-allocation-fragment.yaml": "kind: required",
    "dra/kep4815-resourceclaim-mig-devices-parentuuid.yaml": (
        "ResourceClaim/default/mig-devices: spec.spec: a ResourceClaim has spec.devices; "
        "spec.spec belongs to a template"
    ),
    "dra/kep4815-resourceslice-multihost-tpu.yaml": (
        "ResourceSlice/device-slice: metadata.name: duplicate"
    ),
    "dra/rocm-amd-resourceslice-mi300x-pcieroot.yaml": "spec.driver: required",
}


def example_files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.y*ml"))


@pytest.fixture(scope="module")
def examples(shared_data):
    return shared_data / "k8s-examples"


def test_it_knows_every_example_file(examples):
    files = example_files(examples)
    assert len(files) == 41
    assert NOT_YAML | REJECTED.keys() <= set(files)


def test_it_rejects_the_known_broken_yaml_with_a_model_error(examples):
    for name in sorted(NOT_YAML):
        with pytest.raises(ModelError, match="not valid YAML: .* at line"):
            read_objects(examples / name)


def test_it_rejects_invalid_objects_naming_field_and_reason(examples):
    for name, reason in REJECTED.items():
        snapshot = parse_objects(read_objects(examples / name), cluster_name="x")
        assert any(reason in str(e) for e in snapshot.errors), (name, snapshot.errors)


def test_it_parses_every_other_example_without_errors(examples):
    for name in example_files(examples):
        if name in NOT_YAML or name in REJECTED:
            continue
        snapshot = parse_objects(read_objects(examples / name), cluster_name="x")
        assert snapshot.errors == (), name


def test_it_reads_the_kueue_topology_levels(examples):
    objects = read_objects(examples / "gangs/kueue-tas-sample-gpu-queues.yaml")
    topology = parse_objects(objects, cluster_name="x").cluster.topology
    assert [lv.key for lv in topology.levels] == [
        "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack",
        "kubernetes.io/hostname",
    ]  # fmt: skip
