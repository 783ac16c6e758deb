"""The kube source keeps each object less what no parse reads (issue 31 item 9): slimmed
or not, the same objects make the same model."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from bench.realpods import json_bytes, running_pod
from topology.ingest.files import read_objects
from topology.ingest.kubeslim import slimmed
from topology.kube.parse import parse_objects
from topology.model.hardware import ModelError
from topology.model.serialize import cluster_to_json

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [
    *sorted((REPO / "data" / "k8s-examples").rglob("*.yaml")),
    *sorted((REPO / "data" / "upstream-examples").rglob("*.yaml")),
    *sorted((REPO / "tests" / "scenarios").glob("*.yaml")),
    *sorted((REPO / "tests" / "engine" / "fixtures").glob("*.yaml")),
]


def _model(objects):
    snapshot = parse_objects(objects, cluster_name="t")
    errors = sorted(str(e) for e in snapshot.errors)
    return json.dumps([cluster_to_json(snapshot.cluster), errors], sort_keys=True, default=str)


def _both(objects):
    whole = [(s, copy.deepcopy(o)) for s, o in objects]
    slim = [(s, slimmed(copy.deepcopy(o)) if isinstance(o, dict) else o) for s, o in objects]
    return _model(whole), _model(slim)


def test_it_parses_every_example_to_the_same_model_slimmed():
    compared = 0
    for path in EXAMPLES:
        try:
            objects = read_objects(path)
        except ModelError:
            continue  # not an object file (a CRD schema, an expected-result file)
        whole, slim = _both(objects)
        assert whole == slim, path
        compared += 1
    assert compared > 100


def test_it_parses_a_real_looking_pod_to_the_same_model_slimmed():
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    whole, slim = _both([("c", node), ("c", running_pod(7, "n1"))])
    assert whole == slim


def test_it_keeps_under_a_third_of_a_real_looking_pod():
    pod = running_pod(7, "n1")
    before = json_bytes(pod)
    after = json_bytes(slimmed(pod))
    assert "managedFields" not in pod["metadata"]
    assert "env" not in pod["spec"]["containers"][0]
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "100m",
        "memory": "128Mi",
    }
    assert after < before / 3
