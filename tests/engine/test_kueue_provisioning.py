"""Kueue's ProvisioningRequest admission check (issue 30 item 5): a ClusterQueue whose
AdmissionCheck has controller ``kueue.x-k8s.io/provisioning-request`` (kubernetes-sigs/
kueue ``pkg/controller/admissionchecks/provisioning``) gets a ProvisioningRequest per
admitted workload from Kueue itself, so the card says so and recommends nothing twice.
The queue objects are Kueue's own sample (``site/static/examples/provisioning/
provisioning-setup.yaml``, in data/upstream-examples)."""

import copy
from datetime import UTC, datetime
from pathlib import Path

from recommender.actions.report import actions_for
from recommender.engine.autoscaler.cluster_autoscaler import naive_scale_up
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.engine.test_actions import FIXTURES, evaluated, sourced
from topology.ingest.files import read_objects

ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
AT = datetime(2026, 12, 2, tzinfo=UTC)
SETUP = Path("kubernetes-sigs+kueue") / "site/static/examples/provisioning/provisioning-setup.yaml"


def kueue_cluster(shared_data: Path, klass: str | None = None) -> list:
    """The discovered GKE cluster (cluster-autoscaler a2-pool) with its gang moved into
    Kueue's LocalQueue default/user-queue, whose ClusterQueue runs check sample-prov
    (class check-capacity in the sample's ProvisioningRequestConfig, or ``klass``)."""
    objects = [copy.deepcopy(o) for _, o in read_objects(FIXTURES / "discovered-gke-cluster.yaml")]
    for obj in objects:
        if obj["kind"] == "Pod" and obj["metadata"]["name"].startswith("train"):
            obj["metadata"]["namespace"] = "default"
            obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "user-queue"
    setup = [copy.deepcopy(o) for _, o in read_objects(shared_data / "upstream-examples" / SETUP)]
    for obj in setup:
        if obj["kind"] == "ProvisioningRequestConfig" and klass is not None:
            obj["spec"]["provisioningClassName"] = klass
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
    snapshot, evaluation = evaluated(kueue_cluster(shared_data, ATOMIC))
    (rec,) = evaluation.recommendations
    assert rec.workloads == ("default/train",)
    actions = actions_for(rec, evaluation, snapshot.cluster)
    # no ProvisioningRequest of ours, no pool resize: only what Kueue does, said
    assert [a.kind for a in actions] == ["Kueue"]
    assert "Kueue creates the ProvisioningRequest of default/train itself" in actions[0].text
    assert "admission check sample-prov" in actions[0].text


# The sample's ProvisioningRequestConfig has class check-capacity.autoscaling.x-k8s.io.
# kubernetes/autoscaler cluster-autoscaler/provisioningrequest/checkcapacity/
# provisioningclass.go checkCapacity: Provisioned=True only if every pod of the request
# schedules on the existing (and upcoming) nodes, else Provisioned=False
# CapacityIsNotFound ("CA will try to find it later"); no node group is ever grown. Both
# a2 nodes are full and the gang needs 2 x 8 GPUs: Kueue's request finds no room.


def test_the_queue_knows_the_class_its_check_asks_with(shared_data) -> None:
    snapshot, _ = evaluated(kueue_cluster(shared_data))
    queues = {q.name: q for q in snapshot.cluster.queues}
    assert queues["ClusterQueue/cluster-queue"].provisioning_class == CHECK_CAPACITY


def naive_train(objects, settings):
    snapshot, _ = evaluated(objects)
    cluster = snapshot.cluster
    plan = naive_scale_up(
        cluster,
        pending_workloads(cluster),
        state=ClusterState.from_cluster(cluster),
        at=AT,
        settings=settings,
    )
    return plan, plan.outcomes["default/train"]


def test_cluster_autoscaler_never_scales_up_for_a_check_capacity_check(shared_data) -> None:
    plan, train = naive_train(kueue_cluster(shared_data), CaSettings(provisioning_requests=True))
    assert plan.additions == ()
    assert train.add_nodes == {}
    assert "ProvisioningRequest of Kueue's admission check sample-prov" in train.reasons[0]
    assert "this class never scales up" in train.reasons[0]


def test_without_provisioning_requests_nothing_answers_kueues_request(shared_data) -> None:
    plan, train = naive_train(kueue_cluster(shared_data), CaSettings())
    assert plan.additions == ()
    assert "without --enable-provisioning-requests" in train.reasons[0]


def test_a_check_capacity_check_names_what_provisions_instead(shared_data) -> None:
    snapshot, evaluation = evaluated(kueue_cluster(shared_data))
    (rec,) = evaluation.recommendations
    actions = actions_for(rec, evaluation, snapshot.cluster)
    # Kueue's request provisions nothing: the note says so, and a request of a class
    # that scales up (ours, best-effort-atomic) is what provisions
    assert [a.kind for a in actions] == ["Kueue", "ProvisioningRequest"]
    note = actions[0].text
    assert "never scales up" in note and "keeps the workload waiting" in note
    assert "cluster-autoscaler provisions it" not in note
    assert f"provisioningClassName: {ATOMIC}" in actions[1].text


# The joint verdict of a check-capacity workload (kubernetes-sigs/kueue
# pkg/controller/admissionchecks/provisioning: the workload is admitted only once its
# ProvisioningRequest is Provisioned=True; kubernetes/autoscaler checkcapacity/
# provisioningclass.go checkCapacity: Provisioned=False CapacityIsNotFound while the
# pods do not fit existing nodes, never a scale-up). By hand: both a2 nodes are full, the
# gang needs 2 x 8 GPUs, so 2 new a2-highgpu-8g nodes (a2-pool, 2 of max 4) are what
# would provision it, and nothing buys them while the class is check-capacity.


def test_a_check_capacity_workload_waits_and_names_what_would_provision_it(shared_data) -> None:
    _, evaluation = evaluated(kueue_cluster(shared_data))
    (train,) = evaluation.workloads
    assert train.joint.verdict == "waiting"
    assert train.joint.add_nodes == {} and not train.joint.schedulable_after
    (reason,) = train.joint.reasons
    assert "Kueue keeps the workload waiting while the capacity is missing" in reason
    assert "What would provision it: add 2 node(s) of group a2-pool" in reason
    assert f"ProvisioningRequestConfig asks with class {ATOMIC}" in reason
    assert "cluster-autoscaler provisions it" not in reason
    # the capacity that would provision it is still the recommendation
    (rec,) = evaluation.recommendations
    assert (rec.node_group, rec.count, rec.workloads) == ("a2-pool", 2, ("default/train",))
    # both sides agree nothing scales up for it: no never-scales disagreement
    assert train.naive.add_nodes == {} and train.disagreements == ()


def test_a_best_effort_atomic_check_runs_after_its_scale_up(shared_data) -> None:
    # the same workload whose check asks with best-effort-atomic-scale-up: cluster-
    # autoscaler scales up for Kueue's request (besteffortatomic/provisioning_class.go)
    _, evaluation = evaluated(kueue_cluster(shared_data, ATOMIC))
    (train,) = evaluation.workloads
    assert train.joint.verdict == "runs_after_scale_up"
    assert train.joint.add_nodes == {"a2-pool": 2}
