"""ProvisioningRequests read and booked as upcoming (issue 31 item 8).

The objects follow kubernetes/autoscaler ``cluster-autoscaler/apis/provisioningrequest/
autoscaling.x-k8s.io/v1/types.go`` (and validate against its CRD,
``apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml`` in
data/upstream-examples); the condition reasons and messages are upstream's constants
(``provisioningrequest/conditions/conditions.go``: ``AcceptedReason``/``AcceptedMsg``,
``CapacityIsProvisionedReason``, ``CapacityIsNotFoundReason``). The cluster is
``discovered-gke-cluster.yaml``: both a2 nodes are full and the gang ml/train needs
2 x 8 GPUs, for which the joint plan otherwise adds 2 a2-highgpu-8g nodes.
"""

from __future__ import annotations

import copy

import jsonschema

from tests.engine.test_actions import FIXTURES, evaluated
from tests.engine.test_safe_actions import PR_CRD, crd_schema
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects

CONSUME = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS = "autoscaling.x-k8s.io/provisioning-class-name"
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
ACCEPTED = {
    "type": "Accepted",
    "status": "True",
    "reason": "Accepted",
    "message": "ProvisioningRequest is accepted by ClusterAutoscaler",
    "lastTransitionTime": "2026-12-01T23:50:00Z",
}
NOT_FOUND = {
    "type": "Failed",
    "status": "True",
    "reason": "CapacityIsNotFound",
    "message": "CA could not find requested capacity",
    "lastTransitionTime": "2026-12-01T23:55:00Z",
}


def request(conditions, version="v1", klass=ATOMIC):
    return {
        "apiVersion": f"autoscaling.x-k8s.io/{version}",
        "kind": "ProvisioningRequest",
        "metadata": {
            "name": "train-req",
            "namespace": "ml",
            "creationTimestamp": "2026-12-01T23:49:00Z",
        },
        "spec": {
            "provisioningClassName": klass,
            "podSets": [{"podTemplateRef": {"name": "train-template"}, "count": 2}],
        },
        "status": {"conditions": conditions},
    }


def cluster_with(*extra, consume=True):
    objects = [copy.deepcopy(o) for _, o in read_objects(FIXTURES / "discovered-gke-cluster.yaml")]
    for obj in objects:
        if consume and obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("train"):
            obj["metadata"]["annotations"].update({CONSUME: "train-req", CLASS: ATOMIC})
    return [("cluster.yaml", o) for o in (*objects, *extra)]


def test_it_reads_a_request_with_its_pod_sets_and_conditions():
    snapshot = parse_objects(cluster_with(request([ACCEPTED])), cluster_name="t")
    assert snapshot.errors == ()
    (read,) = snapshot.cluster.provisioning_requests
    assert (read.key, read.class_name, read.pods) == ("ml/train-req", ATOMIC, 2)
    assert read.state == "pending"
    assert read.pod_sets[0].template == "train-template"
    assert read.condition("Accepted").reason == "Accepted"


TEMPLATE = {
    "apiVersion": "v1",
    "kind": "PodTemplate",
    "metadata": {"name": "train-template", "namespace": "ml"},
    "template": {
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "8"}}}
            ]
        }
    },
}


def test_it_reads_the_pod_templates_a_request_names():
    # provisioningrequest/pods/pods.go PodsForProvisioningRequest: the template's spec in
    # the request's namespace is the pod cluster-autoscaler simulates
    snapshot = parse_objects(cluster_with(request([ACCEPTED]), TEMPLATE), cluster_name="t")
    assert snapshot.errors == ()
    assert "PodTemplate" not in snapshot.ignored
    pod = snapshot.cluster.pod_templates["ml/train-template"]
    assert (pod.namespace, pod.gpu_count, pod.requests.cpu_milli) == ("ml", 8, 4000)


def test_it_reads_v1beta1_as_v1():
    snapshot = parse_objects(cluster_with(request([ACCEPTED], "v1beta1")), cluster_name="t")
    assert [r.key for r in snapshot.cluster.provisioning_requests] == ["ml/train-req"]


def test_it_buys_nothing_for_a_workload_whose_request_is_pending():
    _, evaluation = evaluated(cluster_with(request([ACCEPTED])))
    assert evaluation.recommendations == ()
    (train,) = [w for w in evaluation.workloads if w.key == "ml/train"]
    assert train.joint.verdict == "runs_after_scale_up"
    assert train.joint.add_nodes == {}
    assert "ProvisioningRequest ml/train-req" in train.joint.reasons[0]
    assert "counted as upcoming, nothing bought again" in train.joint.reasons[0]


def test_it_buys_nothing_for_a_workload_whose_request_is_booked():
    provisioned = {
        "type": "Provisioned",
        "status": "True",
        "reason": "CapacityIsProvisioned",
        "message": "Capacity is found in the cluster",
        "lastTransitionTime": "2026-12-01T23:58:00Z",
    }
    _, evaluation = evaluated(cluster_with(request([ACCEPTED, provisioned])))
    assert evaluation.recommendations == ()
    (train,) = [w for w in evaluation.workloads if w.key == "ml/train"]
    assert "booked for these pods" in train.joint.reasons[0]


def test_it_plans_again_for_a_workload_whose_request_failed():
    _, evaluation = evaluated(cluster_with(request([ACCEPTED, NOT_FOUND])))
    (rec,) = evaluation.recommendations
    assert (rec.node_group, rec.count, rec.workloads) == ("a2-pool", 2, ("ml/train",))
    (train,) = [w for w in evaluation.workloads if w.key == "ml/train"]
    said = [r for r in train.joint.reasons if "ProvisioningRequest ml/train-req" in r]
    assert said and "Failed=True CapacityIsNotFound" in said[0]


def test_it_names_each_condition_as_an_autoscaler_event():
    snapshot = parse_objects(cluster_with(request([ACCEPTED, NOT_FOUND])), cluster_name="t")
    events = snapshot.cluster.autoscaler_events
    assert {(e.source, e.object) for e in events} == {
        ("ProvisioningRequest", "ProvisioningRequest/ml/train-req")
    }
    assert [(e.reason, e.time) for e in events] == [
        ("Failed=True CapacityIsNotFound", "2026-12-01T23:55:00Z"),
        ("Accepted=True Accepted", "2026-12-01T23:50:00Z"),
    ]


def test_it_refuses_a_request_without_pod_sets_naming_the_field():
    bad = request([])
    bad["spec"]["podSets"] = []
    snapshot = parse_objects(cluster_with(bad), cluster_name="t")
    (error,) = snapshot.errors
    assert (error.object, error.field) == ("ProvisioningRequest/ml/train-req", "spec.podSets")


def test_the_requests_read_here_are_ones_the_upstream_crd_accepts(shared_data):
    for version in ("v1", "v1beta1"):
        schema = crd_schema(shared_data, PR_CRD, version)
        jsonschema.validate(request([ACCEPTED, NOT_FOUND], version), schema)
