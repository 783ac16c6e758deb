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
from tests.builders.objects import (
    GPU,
    as_dicts,
    daemon_set_object,
    node_group_object,
    node_object,
    pod_object,
)
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 4, tzinfo=UTC)
POOL = "example.com/pool"
GI = 2**30
NEW_NODE = {"cpu": "96", "memory": "1000Gi", "pods": "110", GPU: "8"}

# the group: 8 GPUs, 96 cpu, what a new node of it has before any DaemonSet; gpu-1, a
# ready member (GPUs advertised by the device plugin)
GPU_POOL = (
    node_group_object("gpu-pool")
    .selector({POOL: "gpu-pool"})
    .size(0, 4)
    .price(30.0)
    .template({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, NEW_NODE)
)
MEMBER = node_object("gpu-1").label(POOL, "gpu-pool").allocatable(NEW_NODE).capacity().ready()
# a kube-system DaemonSet's pods, a pod of ml, and one on gpu-1 of kube-system: 1Gi each
AGENT = daemon_set_object("kube-system", "").requests(memory="1Gi")
POD = pod_object("ml", "").requests(memory="1Gi")
ON_MEMBER = pod_object("kube-system", "").requests(memory="1Gi").on("gpu-1")
# the pending 8-GPU pod ml/train; a 90-cpu job holding gpu-1's 8 GPUs; node-agent's pod
TRAIN = POD.named("train").limits({GPU: "8"})
JOB = POD.named("job").limits({GPU: "8"}).requests(cpu="90").on("gpu-1")
NODE_AGENT_POD = ON_MEMBER.named("node-agent-x1").requests(cpu="2").owner("DaemonSet", "node-agent")


def parse(*objects):  # type: ignore[no-untyped-def]
    snapshot = parse_objects([("snapshot.yaml", o) for o in as_dicts(*objects)], cluster_name="t")
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
    node_agent = AGENT.named("node-agent").requests(cpu="2")
    cluster = parse(GPU_POOL, node_agent, TRAIN.requests(cpu="95"))
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
    selective = AGENT.named("cpu-agent").requests(cpu="2").node_selector({"kind": "cpu"})
    cluster = parse(GPU_POOL, selective, TRAIN.requests(cpu="95"))
    assert cluster.node_groups[0].template.allocatable.cpu_milli == 96_000
    assert verdict(cluster, "naive") == SCALE_UP
    assert verdict(cluster, "joint") == RUNS_AFTER_SCALE_UP


def test_a_daemonset_not_tolerating_the_templates_taint_takes_nothing() -> None:
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    tainted = GPU_POOL.spec(template={"taints": [taint], "allocatable": NEW_NODE})
    tolerating = AGENT.named("dcgm").requests(cpu="1").tolerate(GPU, operator="Exists")
    cluster = parse(tainted, AGENT.named("plain").requests(cpu="2"), tolerating)
    # only dcgm tolerates the GPU taint: 96 - 1 = 95
    assert cluster.node_groups[0].template.allocatable.cpu_milli == 95_000


# --- a live member: its DaemonSet and mirror pods kept, the rest dropped --------------------


def test_the_template_from_a_live_member_keeps_its_daemonset_pod() -> None:
    # gpu-1 runs node-agent's pod (2 cpu) and a 90-cpu job holding its 8 GPUs, so the
    # pending 95-cpu pod cannot run there. CA's template is gpu-1 with the job dropped
    # and node-agent's pod kept: 96 - 2 = 94 < 95, no template fits (the DaemonSet object
    # itself is not in the snapshot: the pod on the member is what CA reads)
    train = TRAIN.requests(cpu="95")
    cluster = parse(GPU_POOL, MEMBER, NODE_AGENT_POD, JOB, train)
    assert verdict(cluster, "naive") == BLOCKED
    # without the DaemonSet pod the member's 96 cpu are all a new node's: buys one
    cluster = parse(GPU_POOL, MEMBER, JOB, train)
    assert verdict(cluster, "naive") == SCALE_UP


def test_a_plain_pod_on_the_member_is_not_carried_but_a_mirror_pod_is() -> None:
    # the job (90 cpu) is dropped; the static kube-proxy's mirror pod (3 cpu) is kept:
    # 96 - 3 = 93: a 93-cpu pod fits, a 94-cpu pod does not
    mirror = ON_MEMBER.named("kube-proxy-gpu-1").requests(cpu="3")
    mirror = mirror.annotation("kubernetes.io/config.mirror", "hash")
    fits = parse(GPU_POOL, MEMBER, mirror, JOB, TRAIN.requests(cpu="93"))
    assert verdict(fits, "naive") == SCALE_UP
    too_big = parse(GPU_POOL, MEMBER, mirror, JOB, TRAIN.requests(cpu="94"))
    assert verdict(too_big, "naive") == BLOCKED


def test_a_daemonset_with_its_pod_on_the_member_counts_once() -> None:
    # node-agent's pod on gpu-1 (2 cpu) and the DaemonSet object (2 cpu) are one
    # DaemonSet: 96 - 2 = 94, so a 94-cpu pod fits (twice counted it would not)
    node_agent = AGENT.named("node-agent").requests(cpu="2")
    cluster = parse(GPU_POOL, MEMBER, node_agent, NODE_AGENT_POD, JOB, TRAIN.requests(cpu="94"))
    assert verdict(cluster, "naive") == SCALE_UP


def test_a_daemonset_pod_being_deleted_is_not_carried() -> None:
    # podsExpectedOnFreshNode skips pods with a deletionTimestamp: 96 cpu, 95 fits
    agent = NODE_AGENT_POD.deleting("2026-12-04T00:00:00Z")
    cluster = parse(GPU_POOL, MEMBER, agent, JOB, TRAIN.requests(cpu="95"))
    assert verdict(cluster, "naive") == SCALE_UP


# --- which pods a fresh node runs too (Pod.node_daemon) ---------------------------------------


def test_it_marks_the_pods_a_fresh_node_runs_too() -> None:
    on_n = POD.requests(cpu="1").on("n")
    ref = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u1"}
    cluster = parse(
        on_n.named("a").owner("DaemonSet", "agent"),
        on_n.named("b").meta(ownerReferences=[ref]),
        on_n.named("c").annotation("cluster-autoscaler.kubernetes.io/daemonset-pod", "true"),
        on_n.named("d").owner("ReplicaSet", "rs", uid="u2"),
    )
    marks = {p.name: p.node_daemon for p in cluster.pods}
    assert marks == {
        "a": "DaemonSet/ml/agent",
        "b": None,  # GetControllerOf: only a reference with controller: true
        "c": "cluster-autoscaler.kubernetes.io/daemonset-pod",
        "d": None,
    }
