"""VolumeBinding and VolumeZone, decided from PVC, PV and StorageClass objects.

The VolumeZone table is kube-scheduler's own, translated as data:
``pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go`` (TestSingleZone,
TestMultiZone): same volumes, claims, node labels and verdicts. The upstream
claims name their volume without the ``pv.kubernetes.io/bind-completed``
annotation because that test runs VolumeZone alone; here the whole scheduler
runs, whose VolumeBinding treats such a claim as not yet bound (binder.go
isPVCFullyBound), so the translated claims carry the annotation.
"""

import pytest

from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import (
    KubeObject,
    as_dicts,
    node_object,
    pod_object,
    pv_object,
    pvc_object,
    storage_class_object,
)
from topology.kube.core.volumes import (
    BIND_CONFLICT,
    NODE_CONFLICT,
    READ_WRITE_ONCE_POD_REASON,
    STATIC_BINDING_REASON,
    UNBOUND_IMMEDIATE,
    ZONE_CONFLICT,
)
from topology.kube.parse import parse_objects

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BOUND = {"pv.kubernetes.io/bind-completed": "yes"}

UPSTREAM_VOLUMES = {  # name -> labels (TestSingleZone's and TestMultiZone's PVs)
    "vol-1": {BETA_ZONE: "us-west1-a"},
    "vol-2": {BETA_REGION: "us-west1", "uselessLabel": "none"},
    "vol-stable-1": {ZONE: "us-west1-a"},
    "vol-stable-2": {REGION: "us-west1", "uselessLabel": "none"},
    "vol-stable-3": {ZONE: "us-west1-a", REGION: "us-west1-a"},
    "vol-multi-3": {BETA_ZONE: "us-west1-c__us-west1-a"},
    "vol-multi-stable-2": {ZONE: "us-west1-c__us-west1-a"},
}


# host1, 4 cpu; a claim of default (one bound: bind-completed); the pending pod-1 of one cpu
HOST1 = node_object("host1").allocatable(cpu="4", memory="8Gi", pods="10")
CLAIM = pvc_object("default", "")
CLAIM_A = CLAIM.named("a")
BOUND_CLAIM = CLAIM.annotations(BOUND)
POD = pod_object("default", "pod-1").requests(cpu="1")
# GKE's persistent disk classes: binding when the first pod is placed, or at once
GKE_WAITING = storage_class_object("", "pd.csi.storage.gke.io", "WaitForFirstConsumer")
GKE_IMMEDIATE = GKE_WAITING.top(volumeBindingMode="Immediate")


def outcome(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects([("in.yaml", o) for o in as_dicts(*objects)], cluster_name="t")
    assert snapshot.errors == ()
    cluster = snapshot.cluster
    (result,) = place(cluster, pending_workloads(cluster), options=PlacementOptions()).outcomes
    return result


def summary(*objects: KubeObject) -> str | None:
    result = outcome(*objects)
    return None if result.placed else result.diagnosis.summary


def one_node_reason(reason: str) -> str:
    return f"0/1 nodes are available: 1 {reason}."


@pytest.mark.parametrize(
    ("volume", "node_labels", "fits"),
    [
        # TestSingleZone
        ("vol-1", {}, True),  # node without labels
        ("vol-1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, True),
        ("vol-2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, True),
        ("vol-2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, False),
        ("vol-1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, False),
        ("vol-stable-1", {ZONE: "us-west1-a", "uselessLabel": "none"}, True),
        ("vol-stable-2", {REGION: "us-west1", "uselessLabel": "none"}, True),
        ("vol-stable-2", {REGION: "no_us-west1", "uselessLabel": "none"}, False),
        ("vol-stable-1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, False),
        ("vol-stable-3", {ZONE: "us-west1-a"}, False),  # pv zone+region, node only zone
        ("vol-stable-1", {BETA_ZONE: "us-west1-a"}, False),  # pv GA zone, node beta zone
        ("vol-1", {ZONE: "us-west1-a"}, True),  # pv beta label, node GA label, matched
        ("vol-1", {ZONE: "us-west1-b"}, False),  # pv beta label, node GA label, mismatch
        # TestMultiZone
        ("vol-multi-3", {}, True),
        ("vol-multi-3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, True),
        ("vol-1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, False),
        ("vol-multi-stable-2", {ZONE: "us-west1-a", "uselessLabel": "none"}, True),
        ("vol-stable-1", {ZONE: "us-west1-b", "uselessLabel": "none"}, False),
    ],
)
def test_volume_zone_table(volume: str, node_labels: dict[str, str], fits: bool) -> None:
    objects = [
        HOST1.labels(node_labels),
        pv_object(volume).labels(UPSTREAM_VOLUMES[volume]),
        BOUND_CLAIM.named("claim").spec(volumeName=volume),
        POD.volume_claim("claim"),
    ]
    assert summary(*objects) == (None if fits else one_node_reason(ZONE_CONFLICT))


def test_it_keeps_a_pod_off_nodes_its_bound_volume_affinity_excludes() -> None:
    affinity = {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z2"]}]}
            ]
        }
    }
    volume = pv_object("pv-a").spec(nodeAffinity=affinity)
    claim = BOUND_CLAIM.named("a").spec(volumeName="pv-a")
    pod = POD.volume_claim("a")
    assert summary(HOST1.label(ZONE, "z1"), volume, claim, pod) == one_node_reason(NODE_CONFLICT)
    assert summary(HOST1.label(ZONE, "z2"), volume, claim, pod) is None


def test_it_ands_volume_affinity_with_the_pods_own_and_names_whichever_fails() -> None:
    own = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1", "z2"]}]}
                ]
            }
        }
    }
    objects = [
        pv_object("pv-a").label(ZONE, "z2"),
        BOUND_CLAIM.named("a").spec(volumeName="pv-a"),
        POD.volume_claim("a").affinity(**own),
    ]
    # z1: the pod's own affinity passes, the volume's zone does not
    assert summary(HOST1.label(ZONE, "z1"), *objects) == one_node_reason(ZONE_CONFLICT)
    # z3: the pod's own affinity fails first (NodeAffinity runs before the volume plugins)
    assert summary(HOST1.label(ZONE, "z3"), *objects) == one_node_reason(
        "node(s) didn't match Pod's node affinity/selector"
    )
    assert summary(HOST1.label(ZONE, "z2"), *objects) is None


def test_it_provisions_wait_for_first_consumer_claims_only_in_allowed_topologies() -> None:
    allowed = [{"matchLabelExpressions": [{"key": ZONE, "values": ["z2"]}]}]
    objects = [
        GKE_WAITING.named("zonal").top(allowedTopologies=allowed),
        CLAIM_A.spec(storageClassName="zonal"),
        POD.volume_claim("a"),
    ]
    assert summary(HOST1.label(ZONE, "z1"), *objects) == one_node_reason(BIND_CONFLICT)
    assert summary(HOST1.label(ZONE, "z2"), *objects) is None


def test_it_cannot_provision_with_no_provisioner() -> None:
    local = storage_class_object("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
    objects = [local, CLAIM_A.spec(storageClassName="local"), POD.volume_claim("a")]
    assert summary(HOST1, *objects) == one_node_reason(BIND_CONFLICT)


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ([GKE_IMMEDIATE.named("std"), CLAIM_A.spec(storageClassName="std")], UNBOUND_IMMEDIATE),
        ([CLAIM_A], UNBOUND_IMMEDIATE),  # no class: immediate binding
        ([CLAIM_A.spec(storageClassName="gone")], UNBOUND_IMMEDIATE),  # class not found
        ([CLAIM_A.spec(volumeName="pv-a")], UNBOUND_IMMEDIATE),  # pre-bound, binding not completed
        ([], 'persistentvolumeclaim "a" not found'),
        (
            [BOUND_CLAIM.named("a").spec(volumeName="pv-gone")],
            'persistentvolume "pv-gone" not found',
        ),
    ],
    ids=["immediate", "no-class", "class-not-found", "pre-bound", "no-claim", "no-volume"],
)
def test_it_rejects_the_pod_before_any_node(objects: list[KubeObject], message: str) -> None:
    summarised = summary(HOST1, *objects, POD.volume_claim("a"))
    assert summarised == f"0/1 nodes are available: {message}."


def test_it_reports_static_binding_of_a_waiting_claim_as_unsupported() -> None:
    objects = [
        GKE_WAITING.named("local"),
        pv_object("free-pv").spec(storageClassName="local"),
        CLAIM_A.spec(storageClassName="local"),
        POD.volume_claim("a"),
    ]
    result = outcome(HOST1, *objects)
    assert not result.placed
    assert result.diagnosis.summary == f"unsupported: {STATIC_BINDING_REASON}"


def test_it_no_longer_ignores_the_volume_kinds() -> None:
    objects = as_dicts(GKE_IMMEDIATE.named("std"), pv_object("p"), CLAIM.named("c"), HOST1)
    snapshot = parse_objects([("in.yaml", o) for o in objects], cluster_name="t")
    assert snapshot.cluster.ignored == {}


def test_it_reports_a_read_write_once_pod_claim_as_unsupported() -> None:
    claim = BOUND_CLAIM.named("a").spec(volumeName="pv-a", accessModes=["ReadWriteOncePod"])
    result = outcome(HOST1, pv_object("pv-a"), claim, POD.volume_claim("a"))
    assert result.diagnosis.summary == f"unsupported: {READ_WRITE_ONCE_POD_REASON}"
