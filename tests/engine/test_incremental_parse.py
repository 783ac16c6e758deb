"""A followed cluster's parse and JSON are kept between ingests (``topology.kube.parsecache``,
``serialize.JsonCache``): the model is the one a parse from scratch gives, and only the
objects whose resourceVersion changed are read again."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.ingest.kubeobjects import openb_rows, trace_node_object, trace_pod_object
from topology.ingest.files import read_objects
from topology.kube import parse as kube
from topology.kube.parsecache import ParseCache
from topology.model import serialize
from topology.model.hardware import ModelError

FOLDERS = ("nodes", "dra", "gangs")
NODE_ROWS = "openb_node_list_gpu_node.csv"
POD_ROWS = "openb_pod_list_default.csv"


def _served(shared_data: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every named object of the k8s-examples folders and 20 nodes and 20 pods of the openb
    trace, with the uid and resourceVersion an API server gives each (files that do not
    parse on their own are left out)."""
    objects = []
    for folder in FOLDERS:
        for path in sorted((shared_data / "k8s-examples" / folder).glob("*.yaml")):
            try:
                objects += read_objects(path)
            except ModelError:
                continue
    objects += [("trace", trace_node_object(r)) for r in openb_rows(NODE_ROWS, 20)]
    objects += [("trace", trace_pod_object(r)) for r in openb_rows(POD_ROWS, 20)]
    objects = [
        (source, obj)
        for source, obj in objects
        if isinstance(obj, dict) and obj.get("kind") and (obj.get("metadata") or {}).get("name")
    ]
    served = []
    for index, (source, obj) in enumerate(objects):
        metadata = obj.setdefault("metadata", {})
        metadata.setdefault("uid", f"uid-{index}")
        metadata["resourceVersion"] = str(100 + index)
        served.append((source, obj))
    return served


@pytest.fixture
def served(shared_data: Path) -> list[tuple[str, dict[str, Any]]]:
    objects = _served(shared_data)
    assert {o["kind"] for _s, o in objects} >= {"Node", "Pod", "ResourceSlice", "PodGroup"}
    return objects


def _with_pod_labelled(objects: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, Any]]:
    """The same objects with the first Pod's labels changed, as an update gives it: a new
    resourceVersion, every other object as it was."""
    changed = list(objects)
    index = next(i for i, (_s, o) in enumerate(objects) if o["kind"] == "Pod")
    source, pod = changed[index]
    pod = copy.deepcopy(pod)
    pod["metadata"]["labels"] = {**(pod["metadata"].get("labels") or {}), "team": "changed"}
    pod["metadata"]["resourceVersion"] = "9999"
    changed[index] = (source, pod)
    return changed


def _parse(objects: list[tuple[str, Any]], cache: ParseCache | None = None) -> Any:
    return kube.parse_objects(objects, cluster_name="examples", cache=cache)


def _comparable(parsed: Any) -> Any:
    """The parse's result, its errors as their dicts (errors compare by identity)."""
    return replace(parsed, errors=tuple(e.as_dict() for e in parsed.errors))


def test_it_parses_the_same_model_from_its_cache_as_from_scratch(served):
    cache = ParseCache()
    _parse(served, cache)
    changed = _with_pod_labelled(served)
    assert _comparable(_parse(changed, cache)) == _comparable(_parse(changed))


def test_it_reads_again_only_the_object_whose_resource_version_changed(served):
    cache = ParseCache()
    _parse(served, cache)
    _parse(_with_pod_labelled(served), cache)
    nodes_and_pods = sum(1 for _s, o in served if o["kind"] in ("Node", "Pod"))
    assert (cache.misses, cache.hits) == (1, nodes_and_pods - 1)


def test_it_forgets_the_objects_the_last_parse_no_longer_had(served):
    cache = ParseCache()
    _parse(served, cache)
    without_nodes = [(s, o) for s, o in served if o["kind"] != "Node"]
    _parse(without_nodes, cache)
    assert not [key for key in cache.entries if key[1].startswith("Node/")]


def test_it_keeps_no_parse_of_an_object_without_a_resource_version(served):
    bare = [(s, {**o, "metadata": {"name": o["metadata"]["name"]}}) for s, o in served]
    cache = ParseCache()
    _parse(bare, cache)
    assert (cache.entries, cache.misses) == ({}, 0)


def test_it_dumps_and_loads_the_same_json_through_its_cache_as_without(served):
    cache = serialize.JsonCache()
    before = _parse(served).cluster
    serialize.cluster_from_json(serialize.cluster_to_json(before, cache), cache)
    after = _parse(_with_pod_labelled(served)).cluster
    dumped = serialize.cluster_to_json(after, cache)
    assert json.dumps(dumped, sort_keys=True) == json.dumps(
        serialize.cluster_to_json(after), sort_keys=True
    )
    assert serialize.cluster_from_json(dumped, cache) == serialize.cluster_from_json(dumped)


def test_it_dumps_again_only_the_pod_that_changed(served):
    cache = serialize.JsonCache()
    serialize.cluster_to_json(_parse(served).cluster, cache)
    after = _parse(_with_pod_labelled(served)).cluster
    cache.hits = cache.misses = 0
    serialize.cluster_to_json(after, cache)
    assert (cache.misses, cache.hits) == (1, len(after.nodes) + len(after.pods) - 1)
