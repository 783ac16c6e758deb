"""What the autoscalers report, read as autoscaler events (issue 34 item 5).

Event messages are in the words cluster-autoscaler writes them
(kubernetes/autoscaler ``processors/status/eventing_scale_up_processor.go``:
``pod triggered scale-up: %v``, ``pod didn't trigger scale-up: %s``), its recorder's
component is ``cluster-autoscaler`` (``utils/kubernetes/events.go``); Karpenter's
``InsufficientCapacityError`` is the event ``pkg/controllers/nodeclaim/lifecycle/
launch.go`` publishes before deleting the NodeClaim. The status ConfigMaps are
``fixtures/ca-status-yaml-upstream-test.yaml`` (upstream's own test data) and
``fixtures/ca-status-text-aks-docs.yaml``; NodeClaim conditions follow
kubernetes-sigs/karpenter ``pkg/apis/v1/nodeclaim_status.go``.
"""

from __future__ import annotations

import copy

from tests.engine.test_actions import FIXTURES, sourced
from topology.ingest.files import read_objects
from topology.kube.parse import MAX_EVENTS, parse_objects
from topology.model.serialize import cluster_to_json

TRIGGERED = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "train-0.18a2b3c4d5e6f708", "namespace": "ml"},
    "involvedObject": {"kind": "Pod", "namespace": "ml", "name": "train-0"},
    "reason": "TriggeredScaleUp",
    "message": "pod triggered scale-up: [{a2-pool 2->4 (max: 4)}]",
    "source": {"component": "cluster-autoscaler"},
    "firstTimestamp": "2026-12-01T23:51:00Z",
    "lastTimestamp": "2026-12-01T23:53:00Z",
    "count": 3,
    "type": "Normal",
}


def events_of(*objects):
    snapshot = parse_objects(sourced(*objects), cluster_name="t")
    assert snapshot.errors == ()
    return snapshot


def test_it_keeps_a_cluster_autoscaler_event_at_its_first_time():
    (event,) = events_of(TRIGGERED).cluster.autoscaler_events
    assert (event.source, event.object, event.reason, event.type, event.time) == (
        "Event (cluster-autoscaler)",
        "Pod/ml/train-0",
        "TriggeredScaleUp",
        "Normal",
        "2026-12-01T23:51:00Z",
    )
    assert event.message == "pod triggered scale-up: [{a2-pool 2->4 (max: 4)}]"


def test_it_counts_events_of_other_components_ignored():
    scheduler = copy.deepcopy(TRIGGERED)
    scheduler.update(reason="FailedScheduling", source={"component": "default-scheduler"})
    snapshot = events_of(scheduler)
    assert snapshot.cluster.autoscaler_events == ()
    assert snapshot.ignored == {"Event (v1) not from an autoscaler": 1}


def test_it_reads_an_events_k8s_io_event_too():
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "gpu-xyz.18a2", "namespace": "default"},
        "regarding": {"kind": "NodeClaim", "name": "gpu-xyz"},
        "reason": "InsufficientCapacityError",
        "note": "NodeClaim gpu-xyz event: creating instance, insufficient capacity",
        "reportingController": "karpenter",
        "reportingInstance": "karpenter-6d9c",
        "eventTime": "2026-12-01T23:52:00.123456Z",
        "type": "Warning",
        "action": "Launch",
    }
    (read,) = events_of(event).cluster.autoscaler_events
    assert (read.source, read.object, read.reason, read.time) == (
        "Event (karpenter)",
        "NodeClaim/gpu-xyz",
        "InsufficientCapacityError",
        "2026-12-01T23:52:00Z",
    )


def test_a_repeat_of_the_same_event_changes_nothing_stored():
    repeated = copy.deepcopy(TRIGGERED)
    repeated.update(count=9, lastTimestamp="2026-12-02T00:20:00Z")
    once = cluster_to_json(events_of(TRIGGERED).cluster)
    assert cluster_to_json(events_of(repeated).cluster) == once


def test_it_keeps_only_the_newest_events():
    many = []
    for minute in range(MAX_EVENTS + 50):
        event = copy.deepcopy(TRIGGERED)
        event["metadata"]["name"] = f"e{minute}"
        event["firstTimestamp"] = f"2026-12-01T{minute // 60:02d}:{minute % 60:02d}:00Z"
        many.append(event)
    kept = events_of(*many).cluster.autoscaler_events
    assert len(kept) == MAX_EVENTS
    assert kept[0].time == "2026-12-01T04:09:00Z" and kept[-1].time == "2026-12-01T00:50:00Z"


def test_it_reports_a_node_group_in_backoff_from_the_yaml_status():
    snapshot = events_of(
        *(o for _, o in read_objects(FIXTURES / "ca-status-yaml-upstream-test.yaml"))
    )
    (event,) = snapshot.cluster.autoscaler_events  # cluster-wide: Healthy, NoActivity
    assert (event.source, event.object, event.reason, event.time) == (
        "cluster-autoscaler status",
        "NodeGroup/sample-node-group",
        "ScaleUp Backoff",
        "2023-11-23T14:52:02Z",
    )
    assert event.message.startswith("QUOTA_EXCEEDED: Instance 'sample-node-group-40ce0341-t28s'")


def test_an_idle_text_status_reports_nothing():
    snapshot = events_of(*(o for _, o in read_objects(FIXTURES / "ca-status-text-aks-docs.yaml")))
    assert snapshot.cluster.autoscaler_events == ()


def test_it_reports_a_scale_up_in_progress_from_the_text_status():
    (config_map,) = [o for _, o in read_objects(FIXTURES / "ca-status-text-aks-docs.yaml")]
    config_map = copy.deepcopy(config_map)
    text = config_map["data"]["status"]
    group = text.index("NodeGroups:")
    config_map["data"]["status"] = text[:group] + text[group:].replace(
        "ScaleUp:     NoActivity (ready=1 cloudProviderTarget=1)",
        "ScaleUp:     InProgress (ready=1 cloudProviderTarget=3)",
    )
    (event,) = events_of(config_map).cluster.autoscaler_events
    assert (event.object, event.reason, event.message, event.time) == (
        "NodeGroup/nodepool1",
        "ScaleUp InProgress",
        "(ready=1 cloudProviderTarget=3)",
        "2018-07-25T00:38:36Z",
    )


def test_it_reports_a_node_claims_launch_conditions():
    claim = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": "gpu-abc", "labels": {"karpenter.sh/nodepool": "gpu"}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}
        },
        "status": {
            "conditions": [
                {
                    "type": "Launched",
                    "status": "True",
                    "reason": "Launched",
                    "lastTransitionTime": "2026-12-01T23:40:00Z",
                },
                {
                    "type": "Registered",
                    "status": "False",
                    "reason": "NodeNotFound",
                    "message": "Node not registered with cluster",
                    "lastTransitionTime": "2026-12-01T23:40:01Z",
                },
                {
                    "type": "Drifted",
                    "status": "False",
                    "lastTransitionTime": "2026-12-01T23:40:01Z",
                },
            ]
        },
    }
    events = parse_objects(sourced(claim), cluster_name="t").cluster.autoscaler_events
    assert [(e.reason, e.node_group, e.time) for e in events] == [
        ("Registered=False NodeNotFound", "gpu", "2026-12-01T23:40:01Z"),
        ("Launched=True Launched", "gpu", "2026-12-01T23:40:00Z"),
    ]
