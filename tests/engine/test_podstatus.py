"""What the real scheduler said (PodScheduled), node creation, the last change."""

from datetime import UTC, datetime

from topology.kube.core.podstatus import last_change
from topology.kube.parse import parse_objects
from topology.model.hardware import Node, Pod, PodScheduled

UNSCHEDULABLE = {
    "type": "PodScheduled",
    "status": "False",
    "reason": "Unschedulable",
    "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
    "lastProbeTime": None,
    "lastTransitionTime": "2026-12-01T10:00:05Z",
}


def seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).timestamp()


def parsed(status: dict, meta: dict | None = None):
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", **(meta or {})},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Pending", **status},
    }
    return parse_objects([("pods.yaml", obj)], cluster_name="t")


def test_it_reads_the_unschedulable_condition_and_the_nominated_node() -> None:
    snapshot = parsed({"conditions": [UNSCHEDULABLE], "nominatedNodeName": "n2"})
    (pod,) = snapshot.cluster.pods
    assert pod.scheduled == PodScheduled(
        status=False,
        reason="Unschedulable",
        message="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
        since=seconds("2026-12-01T10:00:05Z"),
        nominated_node="n2",
    )
    assert pod.scheduled.unschedulable


def test_a_gated_pod_is_not_unschedulable_and_a_pod_without_the_condition_has_none() -> None:
    gated = {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
    (pod,) = parsed({"conditions": [{"type": "Ready", "status": "False"}, gated]}).cluster.pods
    assert pod.scheduled is not None and not pod.scheduled.unschedulable
    assert pod.scheduled.since == 0.0
    (plain,) = parsed({"conditions": [{"type": "Ready", "status": "False"}]}).cluster.pods
    assert plain.scheduled is None


def test_a_bad_condition_is_an_error_naming_the_field() -> None:
    wrong = parsed({"conditions": [{**UNSCHEDULABLE, "status": "Maybe"}]})
    assert [(e.object, e.field) for e in wrong.errors] == [
        ("Pod/ml/p", "status.conditions[0].status")
    ]
    assert "True, False or Unknown" in wrong.errors[0].reason
    late = parsed({"conditions": [{**UNSCHEDULABLE, "lastTransitionTime": "yesterday"}]})
    assert [e.field for e in late.errors] == ["status.conditions[0].lastTransitionTime"]


def test_it_reads_a_node_creation_time() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "creationTimestamp": "2026-12-01T09:00:00Z"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    (parsed_node,) = parse_objects([("n.yaml", node)], cluster_name="t").cluster.nodes
    assert parsed_node.created == seconds("2026-12-01T09:00:00Z")


def test_the_last_change_is_the_latest_creation_or_binding() -> None:
    nodes = [Node("n1", created=100.0), Node("n2", created=50.0)]
    pods = [
        Pod("ml", "a", arrival=120.0),
        Pod("ml", "b", arrival=90.0, node_name="n1", scheduled=PodScheduled(True, since=130.0)),
        # an Unschedulable condition is no change to the cluster
        Pod("ml", "c", arrival=80.0, scheduled=PodScheduled(False, "Unschedulable", since=500.0)),
    ]
    assert last_change(nodes, pods) == 130.0
    assert last_change(nodes, pods[:1]) == 120.0
    assert last_change([], []) == 0.0
