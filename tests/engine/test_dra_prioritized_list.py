"""DRA prioritized lists (``firstAvailable``, KEP-4816): a request's subrequests are
tried in order and the first one the node can allocate, with the claim's other
requests and constraints, is taken.

Upstream: kubernetes ``staging/src/k8s.io/dynamic-resource-allocation/structured/
internal/stable/allocator_stable.go`` ``allocateOne`` (depth first; for a request with
subrequests, each subrequest in order, the first full solution kept; a matchAttribute
naming the request applies to whichever subrequest is chosen, one naming
``<request>/<subrequest>`` only to that subrequest: ``matchAttributeConstraint.matches``).
The cluster: dra-example-driver's own ResourceSlice (its README, 8 GPUs of model
LATEST-GPU-MODEL with 80Gi) on its node, and its ``prioritized-alternatives`` example
as written (data/upstream-examples/kubernetes-sigs+dra-example-driver). The DeviceClass
is the one its Helm chart installs (``device.driver == 'gpu.example.com'``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.workloads import pending_workloads
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

EXAMPLES = (
    Path(__file__).parents[2] / "data" / "upstream-examples" / "kubernetes-sigs+dra-example-driver"
)
NODE_NAME = "dra-example-driver-cluster-worker"
DEVICE_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": NODE_NAME, "labels": {"kubernetes.io/hostname": NODE_NAME}},
    "status": {
        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def slice_with(gpus: int) -> dict[str, Any]:
    """The README's ResourceSlice, its first ``gpus`` devices."""
    (found,) = read_objects(EXAMPLES / "readme" / "kubectl-get-resourceslice.yaml")
    resource_slice = copy.deepcopy(found[1])
    resource_slice["spec"]["devices"] = resource_slice["spec"]["devices"][:gpus]
    return resource_slice


def example_objects() -> list[dict[str, Any]]:
    path = EXAMPLES / "demo" / "examples" / "prioritized-alternatives"
    return [obj for _, obj in read_objects(path / "prioritized-alternatives.yaml")]


def placed(*objects: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each placed pod's devices; a pod not placed is absent."""
    snapshot = parse_objects([("t.yaml", o) for o in objects], cluster_name="t")
    assert snapshot.errors == ()
    cluster = snapshot.cluster
    assert all(not p.unsupported for p in cluster.pods), [p.unsupported for p in cluster.pods]
    outcomes = place(cluster, pending_workloads(cluster)).outcomes
    return {b.pod: b.devices for o in outcomes if o.placed for b in o.bindings}


def claim_template(name: str, requests: list[dict[str, Any]], constraints=()) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = list(constraints)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"namespace": "ml", "name": name},
        "spec": {"spec": {"devices": devices}},
    }


def pod_with(template: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "ml", "name": template},
        "spec": {
            "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
        },
        "status": {"phase": "Pending"},
    }


PAIR_OR_ONE = [
    {
        "name": "gpu",
        "firstAvailable": [
            {"name": "pair", "deviceClassName": "gpu.example.com", "count": 2},
            {"name": "one", "deviceClassName": "gpu.example.com"},
        ],
    }
]


def test_the_upstream_example_runs_both_pods_on_one_gpu_each() -> None:
    # pod0 falls through to older-gpu (no BLEEDING-EDGE-GPU, no 1Ti device), pod1 takes
    # latest-gpu: the example's "Expected: each pod gets exactly 1 GPU"
    found = placed(DEVICE_CLASS, NODE, slice_with(2), *example_objects())
    assert sorted(found) == ["prioritized-alternatives/pod0", "prioritized-alternatives/pod1"]
    assert [len(devices) for devices in found.values()] == [1, 1]
    assert set(found["prioritized-alternatives/pod0"]) | set(
        found["prioritized-alternatives/pod1"]
    ) == {"gpu-0", "gpu-1"}


def test_the_first_subrequest_that_fits_is_taken() -> None:
    # 3 GPUs: the pair fits, so the first pod takes 2; the second pod finds 1 left and
    # falls back to "one"
    first, second = pod_with("first"), pod_with("second")
    objects = [DEVICE_CLASS, NODE, slice_with(3), claim_template("first", PAIR_OR_ONE)]
    found = placed(*objects, claim_template("second", PAIR_OR_ONE), first, second)
    assert len(found["ml/first"]) == 2
    assert len(found["ml/second"]) == 1


def test_a_constraint_on_one_subrequest_makes_the_allocator_fall_back() -> None:
    # the README's devices have distinct indexes: a pair whose index must match cannot
    # be allocated; the constraint names only gpu/pair, so "one" is free of it
    same_index = {"matchAttribute": "gpu.example.com/index", "requests": ["gpu/pair"]}
    template = claim_template("pod", PAIR_OR_ONE, [same_index])
    found = placed(DEVICE_CLASS, NODE, slice_with(4), template, pod_with("pod"))
    assert len(found["ml/pod"]) == 1


def test_a_constraint_on_the_request_applies_to_the_chosen_subrequest() -> None:
    # named by the request, the same constraint binds every subrequest: "one" holds one
    # device (it always matches itself), so the pod still runs on one GPU
    same_index = {"matchAttribute": "gpu.example.com/index", "requests": ["gpu"]}
    template = claim_template("pod", PAIR_OR_ONE, [same_index])
    found = placed(DEVICE_CLASS, NODE, slice_with(4), template, pod_with("pod"))
    assert len(found["ml/pod"]) == 1


def test_no_subrequest_fitting_leaves_the_pod_pending() -> None:
    only_pairs = [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "four", "deviceClassName": "gpu.example.com", "count": 4},
                {"name": "pair", "deviceClassName": "gpu.example.com", "count": 2},
            ],
        }
    ]
    template = claim_template("pod", only_pairs)
    assert placed(DEVICE_CLASS, NODE, slice_with(1), template, pod_with("pod")) == {}
    assert len(placed(DEVICE_CLASS, NODE, slice_with(2), template, pod_with("pod"))["ml/pod"]) == 2
