"""The autoscalers' own objects read by list/watch from the local API server by the
real client: ProvisioningRequests (issue 31 item 8) and what cluster-autoscaler and
Karpenter report (issue 34 item 5).

The cluster is ``tests/engine/fixtures/discovered-gke-cluster.yaml`` (both a2 nodes
full, gang ml/train of 2 x 8 GPUs pending), with the gang's pods consuming the
ProvisioningRequest ml/train-req of ``tests/engine/test_provisioning_requests.py``.
"""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime

import pytest

from recommender.engine.evaluate.evaluation import evaluate
from tests.engine.test_autoscaler_events import TRIGGERED
from tests.engine.test_provisioning_requests import ACCEPTED, NOT_FOUND, cluster_with, request
from tests.ingest.kubeserver import KubeServer
from topology.ingest.kubeapi import Backoff, api_client_from
from topology.ingest.kubesource import KubeSource
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 2, tzinfo=UTC)


@pytest.fixture
def server():
    """The local API server holding only what each test puts."""
    running = KubeServer().start()
    yield running
    running.stop()


@pytest.fixture
def make_source(server, tmp_path):
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")

    def make(**options):
        backoff = Backoff(base_seconds=0.05, cap_seconds=0.4, random=random.Random(7))
        return KubeSource(
            api_client_from(kubeconfig=str(kubeconfig)),
            request_timeout_seconds=5.0,
            backoff=backoff,
            **options,
        )

    return make


def _evaluated(source):
    snapshot = parse_objects(source.objects(), cluster_name="live")
    assert snapshot.errors == ()
    return snapshot, evaluate(snapshot.cluster, at=AT)


def _serve(server, objects):
    for _, obj in objects:
        server.put(copy.deepcopy(obj))


def test_it_reads_a_pending_request_and_buys_nothing_for_its_pods(server, make_source):
    _serve(server, cluster_with(request([ACCEPTED])))
    source = make_source()
    source.sync(watch_seconds=1)
    snapshot, evaluation = _evaluated(source)
    assert [r.key for r in snapshot.cluster.provisioning_requests] == ["ml/train-req"]
    assert source.status["ProvisioningRequest.autoscaling.x-k8s.io"].version == "v1"
    (train,) = [w for w in evaluation.workloads if w.key == "ml/train"]
    assert train.joint.verdict == "runs_after_scale_up" and train.joint.add_nodes == {}


def test_it_plans_for_the_pods_once_a_watch_says_the_request_failed(server, make_source):
    _serve(server, cluster_with(request([ACCEPTED])))
    source = make_source()
    source.sync(watch_seconds=1)
    server.put(request([ACCEPTED, NOT_FOUND]))
    source.sync(watch_seconds=1)
    snapshot, evaluation = _evaluated(source)
    (read,) = snapshot.cluster.provisioning_requests
    assert read.state == "failed"
    (train,) = [w for w in evaluation.workloads if w.key == "ml/train"]
    assert train.joint.add_nodes == {"a2-pool": 2}


def _event(name: str, component: str, reason: str) -> dict:
    event = copy.deepcopy(TRIGGERED)
    event["metadata"]["name"] = name
    event.update(source={"component": component}, reason=reason)
    return event


def test_it_lists_only_the_events_the_autoscalers_reported(server, make_source):
    server.put(_event("a", "cluster-autoscaler", "TriggeredScaleUp"))
    server.put(_event("b", "default-scheduler", "FailedScheduling"))
    server.put(_event("c", "karpenter", "InsufficientCapacityError"))
    source = make_source()
    source.sync(watch_seconds=1)
    selectors = {q.get("fieldSelector") for _m, p, q in server.requests if p == "/api/v1/events"}
    assert selectors == {"source=cluster-autoscaler", "source=karpenter"}
    snapshot = parse_objects(source.objects(), cluster_name="live")
    assert sorted(e.reason for e in snapshot.cluster.autoscaler_events) == [
        "InsufficientCapacityError",
        "TriggeredScaleUp",
    ]


def test_it_picks_up_an_event_reported_while_it_watches(server, make_source):
    source = make_source()
    source.sync(watch_seconds=1)
    server.put(_event("later", "cluster-autoscaler", "NotTriggerScaleUp"))
    source.sync(watch_seconds=1)
    snapshot = parse_objects(source.objects(), cluster_name="live")
    assert [e.reason for e in snapshot.cluster.autoscaler_events] == ["NotTriggerScaleUp"]
