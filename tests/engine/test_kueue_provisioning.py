"""Kueue's ProvisioningRequest admission check (issue 30 item 5): a ClusterQueue whose
AdmissionCheck has controller ``kueue.x-k8s.io/provisioning-request`` (kubernetes-sigs/
kueue ``pkg/controller/admissionchecks/provisioning``) gets a ProvisioningRequest per
admitted workload from Kueue itself, so the card says so and recommends nothing twice.
The queue objects are Kueue's own sample (``site/static/examples/provisioning/
provisioning-setup.yaml``, in data/upstream-examples)."""

import copy
from pathlib import Path

from recommender.actions.report import actions_for
from tests.engine.test_actions import FIXTURES, evaluated, sourced
from topology.ingest.files import read_objects

SETUP = Path("kubernetes-sigs+kueue") / "site/static/examples/provisioning/provisioning-setup.yaml"


def kueue_cluster(shared_data: Path) -> list:
    """The discovered GKE cluster (cluster-autoscaler a2-pool) with its gang moved into
    Kueue's LocalQueue default/user-queue, whose ClusterQueue runs check sample-prov."""
    objects = [copy.deepcopy(o) for _, o in read_objects(FIXTURES / "discovered-gke-cluster.yaml")]
    for obj in objects:
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("train"):
            obj["metadata"]["namespace"] = "default"
            obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "user-queue"
    setup = [copy.deepcopy(o) for _, o in read_objects(shared_data / "upstream-examples" / SETUP)]
    for obj in setup:
        if obj["kind"] == "ClusterQueue":  # quota for the gang (2 x 8 GPUs), else unchanged
            (group,) = obj["spec"]["resourceGroups"]
            (flavor,) = group["flavors"]
            flavor["resources"] = [
                {"name": "cpu", "nominalQuota": 100},
                {"name": "memory", "nominalQuota": "2000Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": 16},
            ]
    return sourced(*objects, *setup)


def test_the_queue_knows_its_provisioning_request_check(shared_data) -> None:
    snapshot, _ = evaluated(kueue_cluster(shared_data))
    queues = {q.name: q for q in snapshot.cluster.queues}
    assert queues["ClusterQueue/cluster-queue"].provisioning_check == "sample-prov"


def test_kueue_creates_the_request_so_nothing_is_recommended_twice(shared_data) -> None:
    snapshot, evaluation = evaluated(kueue_cluster(shared_data))
    (rec,) = evaluation.recommendations
    assert rec.workloads == ("default/train",)
    actions = actions_for(rec, evaluation, snapshot.cluster)
    # no ProvisioningRequest of ours, no pool resize: only what Kueue does, said
    assert [a.kind for a in actions] == ["Kueue"]
    assert "Kueue creates the ProvisioningRequest of default/train itself" in actions[0].text
    assert "admission check sample-prov" in actions[0].text
