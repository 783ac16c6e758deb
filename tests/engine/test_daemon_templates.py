"""DaemonSet and mirror pods on the template of a group only a capacityweb.io NodeGroup
declares, as cluster-autoscaler builds it (``simulator/node_info_utils.go``):

- no live member: ``SanitizedTemplateNodeInfoFromNodeGroup``, the declared template
  plus ``daemonset.GetDaemonSetPodsForNode`` for each DaemonSet that would run there;
- a live member: ``SanitizedTemplateNodeInfoFromNodeInfo``, the member's pods that
  ``podsExpectedOnFreshNode`` keeps (DaemonSet pods, by controller or annotation, and
  mirror pods; none being deleted), every other pod dropped.

Each figure below is worked out from the objects' requests, not from our output.
"""

from datetime import UTC, datetime

from recommender.engine.autoscaler.ledger import SCALE_UP
from recommender.engine.autoscaler.plan import BLOCKED, RUNS_AFTER_SCALE_UP
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 4, tzinfo=UTC)
API = "capacityweb.io/v1alpha1"
POOL = "example.com/pool"
GI = 2**30


def node_group(**spec):  # type: ignore[no-untyped-def]
    """8 GPUs, 96 cpu: what a new node of the group has, before any DaemonSet."""
    base = {
        "nodeSelector": {POOL: "gpu-pool"},
        "minSize": 0,
        "maxSize": 4,
        "pricePerNodeHour": 30.0,
        "template": {
            "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
            "allocatable": {"cpu": "96", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": "8"},
        },
    }
    return {
        "apiVersion": API,
        "kind": "NodeGroup",
        "metadata": {"name": "gpu-pool"},
        "spec": base | spec,
    }


def daemon_set(name, cpu, **pod_spec):  # type: ignore[no-untyped-def]
    container = {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"template": {"spec": {"containers": [container], **pod_spec}}},
    }


def pod(name, cpu, gpus=0, namespace="ml", node=None, **meta):  # type: ignore[no-untyped-def]
    requests = {"cpu": cpu, "memory": "1Gi"}
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    spec = {"containers": [{"name": "c", "resources": {"requests": requests, "limits": limits}}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def owned_by_daemon_set(name):  # type: ignore[no-untyped-def]
    ref = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name, "uid": "u1"}
    return {"ownerReferences": [{**ref, "controller": True}]}


def member():  # type: ignore[no-untyped-def]
    """A ready member of the group: 96 cpu, 8 GPUs (advertised by the device plugin)."""
    allocatable = {"cpu": "96", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": "8"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-1", "labels": {POOL: "gpu-pool"}},
        "status": {
            "allocatable": allocatable,
            "capacity": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def parse(*objects):  # type: ignore[no-untyped-def]
    snapshot = parse_objects([("snapshot.yaml", o) for o in objects], cluster_name="t")
    assert snapshot.errors == ()
    return snapshot.cluster


def outcome(cluster, mode):  # type: ignore[no-untyped-def]
    state = ClusterState.from_cluster(cluster)
    plan = scale_up(cluster, pending_workloads(cluster), state=state, mode=mode, at=AT)
    (found,) = (o for o in plan.outcomes.values() if o.workload.endswith("ml/train"))
    return found


def verdict(cluster, mode):  # type: ignore[no-untyped-def]
    return outcome(cluster, mode).verdict


# --- no live member: the declared template plus the DaemonSets that would run there ------------


def test_a_daemonset_running_on_the_declared_template_leaves_no_room_for_a_95_cpu_pod() -> None:
    # 96 cpu - 2 cpu (node-agent, no selector, the template has no taint) = 94 < 95:
    # no template fits, for cluster-autoscaler (naive) and for the joint plan alike
    cluster = parse(node_group(), daemon_set("node-agent", "2"), pod("train", "95", gpus=8))
    (group,) = cluster.node_groups
    assert group.template.allocatable.cpu_milli == 94_000
    assert group.template.allocatable.memory_bytes == 999 * GI
    assert group.template.allocatable.pods == 109
    for mode in ("naive", "joint"):
        blocked = outcome(cluster, mode)
        assert blocked.verdict == BLOCKED
        assert "gpu-pool: 0/1 nodes are available: 1 Insufficient cpu." in blocked.reasons[0]


def test_a_daemonset_whose_node_selector_does_not_match_the_template_takes_nothing() -> None:
    # nodeSelector kind=cpu: not on the template's labels, so 96 cpu stay: 95 fits
    selective = daemon_set("cpu-agent", "2", nodeSelector={"kind": "cpu"})
    cluster = parse(node_group(), selective, pod("train", "95", gpus=8))
    assert cluster.node_groups[0].template.allocatable.cpu_milli == 96_000
    assert verdict(cluster, "naive") == SCALE_UP
    assert verdict(cluster, "joint") == RUNS_AFTER_SCALE_UP


def test_a_daemonset_not_tolerating_the_templates_taint_takes_nothing() -> None:
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    template = {
        "taints": [taint],
        "allocatable": {"cpu": "96", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": "8"},
    }
    tolerating = daemon_set(
        "dcgm", "1", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}]
    )
    cluster = parse(node_group(template=template), daemon_set("plain", "2"), tolerating)
    # only dcgm tolerates the GPU taint: 96 - 1 = 95
    assert cluster.node_groups[0].template.allocatable.cpu_milli == 95_000


# --- a live member: its DaemonSet and mirror pods kept, the rest dropped --------------------


def test_the_template_from_a_live_member_keeps_its_daemonset_pod() -> None:
    # gpu-1 runs node-agent's pod (2 cpu) and a 90-cpu job holding its 8 GPUs, so the
    # pending 95-cpu pod cannot run there. CA's template is gpu-1 with the job dropped
    # and node-agent's pod kept: 96 - 2 = 94 < 95, no template fits (the DaemonSet object
    # itself is not in the snapshot: the pod on the member is what CA reads)
    agent = pod("node-agent-x1", "2", namespace="kube-system", node="gpu-1")
    agent["metadata"].update(owned_by_daemon_set("node-agent"))
    job = pod("job", "90", gpus=8, node="gpu-1")
    cluster = parse(node_group(), member(), agent, job, pod("train", "95", gpus=8))
    assert verdict(cluster, "naive") == BLOCKED
    # without the DaemonSet pod the member's 96 cpu are all a new node's: buys one
    cluster = parse(node_group(), member(), job, pod("train", "95", gpus=8))
    assert verdict(cluster, "naive") == SCALE_UP


def test_a_plain_pod_on_the_member_is_not_carried_but_a_mirror_pod_is() -> None:
    # the job (90 cpu) is dropped; the static kube-proxy's mirror pod (3 cpu) is kept:
    # 96 - 3 = 93: a 93-cpu pod fits, a 94-cpu pod does not
    mirror = pod("kube-proxy-gpu-1", "3", namespace="kube-system", node="gpu-1")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    job = pod("job", "90", gpus=8, node="gpu-1")
    fits = parse(node_group(), member(), mirror, job, pod("train", "93", gpus=8))
    assert verdict(fits, "naive") == SCALE_UP
    too_big = parse(node_group(), member(), mirror, job, pod("train", "94", gpus=8))
    assert verdict(too_big, "naive") == BLOCKED


def test_a_daemonset_with_its_pod_on_the_member_counts_once() -> None:
    # node-agent's pod on gpu-1 (2 cpu) and the DaemonSet object (2 cpu) are one
    # DaemonSet: 96 - 2 = 94, so a 94-cpu pod fits (twice counted it would not)
    agent = pod("node-agent-x1", "2", namespace="kube-system", node="gpu-1")
    agent["metadata"].update(owned_by_daemon_set("node-agent"))
    job = pod("job", "90", gpus=8, node="gpu-1")
    cluster = parse(
        node_group(),
        member(),
        daemon_set("node-agent", "2"),
        agent,
        job,
        pod("train", "94", gpus=8),
    )
    assert verdict(cluster, "naive") == SCALE_UP


def test_a_daemonset_pod_being_deleted_is_not_carried() -> None:
    # podsExpectedOnFreshNode skips pods with a deletionTimestamp: 96 cpu, 95 fits
    agent = pod("node-agent-x1", "2", namespace="kube-system", node="gpu-1")
    agent["metadata"].update(owned_by_daemon_set("node-agent"))
    agent["metadata"]["deletionTimestamp"] = "2026-12-04T00:00:00Z"
    job = pod("job", "90", gpus=8, node="gpu-1")
    cluster = parse(node_group(), member(), agent, job, pod("train", "95", gpus=8))
    assert verdict(cluster, "naive") == SCALE_UP


# --- which pods a fresh node runs too (Pod.node_daemon) ---------------------------------------


def test_it_marks_the_pods_a_fresh_node_runs_too() -> None:
    by_controller = pod("a", "1", node="n")
    by_controller["metadata"].update(owned_by_daemon_set("agent"))
    not_controller = pod("b", "1", node="n")
    ref = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u1"}
    not_controller["metadata"]["ownerReferences"] = [ref]
    annotated = pod("c", "1", node="n")
    annotated["metadata"]["annotations"] = {
        "cluster-autoscaler.kubernetes.io/daemonset-pod": "true"
    }
    replica = pod("d", "1", node="n")
    replica["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": "u2",
            "controller": True,
        }
    ]
    cluster = parse(by_controller, not_controller, annotated, replica)
    marks = {p.name: p.node_daemon for p in cluster.pods}
    assert marks == {
        "a": "DaemonSet/ml/agent",
        "b": None,  # GetControllerOf: only a reference with controller: true
        "c": "cluster-autoscaler.kubernetes.io/daemonset-pod",
        "d": None,
    }
