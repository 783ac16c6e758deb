"""Naive and joint judge a group's new node by one capacity: its ready member's.

Worked by hand: group ``shared`` declares a template of one whole GPU (a device
plugin GPU, never shared), while its one member ``m1`` runs the trace's shared
GPUs (one GPU, 0.6 of it used). A pending 0.5-GPU pod fits no existing node
(0.4 left). cluster-autoscaler copies the member (``mixed_nodeinfos_processor.go``):
one new node of ``shared`` takes the share, so it adds 1. The joint plan judges the
same node: add 1 of ``shared`` too, where it said "Insufficient nvidia.com/gpu share"
on the declared template before. With no member, both read the declared template and
both refuse the share in the same words.
"""

from dataclasses import replace
from datetime import UTC, datetime

from recommender.engine.autoscaler.plan import BLOCKED, JOINT, NAIVE, RUNS_AFTER_SCALE_UP
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.autoscaler.template import with_member_capacity
from recommender.engine.scheduler.allocate import INSUFFICIENT_SHARE
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_group
from tests.engine.test_placement import H100, TEAM_A_POD
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 1, tzinfo=UTC)


# its declared template: one whole GPU, never shared
SHARED = (
    make_group("shared", H100.named("template").gpus(1, shareable=False).build())
    .selector({"pool": "shared"})
    .size(0, 4)
    .price(3.0)
)


def _cluster(with_member: bool) -> Cluster:
    member = H100.named("m1").gpus(1).group("shared").build()
    nodes = (member,) if with_member else ()
    bound = (TEAM_A_POD.named("busy").gpus(1, 600).on("m1").build(),) if with_member else ()
    return Cluster(
        "c",
        nodes=nodes,
        pods=(*bound, TEAM_A_POD.named("share").gpus(1, 500).build()),
        node_groups=(SHARED.current_size(len(nodes)).build(),),
    )


def _plans(cluster: Cluster) -> tuple[object, object]:
    pending = pending_workloads(cluster)
    state = ClusterState.from_cluster(cluster)
    naive = scale_up(cluster, pending, state=state, mode=NAIVE, at=AT)
    joint = scale_up(cluster, pending, state=state, mode=JOINT, at=AT)
    return naive.outcomes["team-a/share"], joint.outcomes["team-a/share"]


def test_it_buys_the_node_the_naive_plan_buys_from_the_member() -> None:
    naive, joint = _plans(_cluster(with_member=True))
    assert dict(naive.add_nodes) == {"shared": 1}  # type: ignore[attr-defined]
    assert joint.verdict == RUNS_AFTER_SCALE_UP  # type: ignore[attr-defined]
    assert dict(joint.add_nodes) == {"shared": 1}  # type: ignore[attr-defined]


def test_it_says_the_template_took_the_members_capacity() -> None:
    group = with_member_capacity(_cluster(with_member=True)).node_groups[0]
    assert group.template.devices[0].shareable
    assert group.notes == (
        "template capacity taken from ready member m1 (as cluster-autoscaler builds its "
        "template): the declared template's devices differ",
    )


def test_it_refuses_the_share_in_the_same_words_without_a_member() -> None:
    naive, joint = _plans(_cluster(with_member=False))
    assert dict(naive.add_nodes) == {}  # type: ignore[attr-defined]
    assert joint.verdict == BLOCKED  # type: ignore[attr-defined]
    assert INSUFFICIENT_SHARE in " ".join(joint.reasons)  # type: ignore[attr-defined]
    assert INSUFFICIENT_SHARE in " ".join(naive.reasons)  # type: ignore[attr-defined]


def test_it_says_why_neither_adds_in_the_same_words_for_a_share() -> None:
    from recommender.engine.evaluate.evaluation import evaluate

    item = evaluate(_cluster(with_member=False), at=AT).workloads[0].to_json()
    expected = (
        "no node group can host its pods: shared: 0/1 nodes are available: "
        "1 Insufficient nvidia.com/gpu share."
    )
    assert (item["reasons"], item["naiveReasons"]) == ([expected], [expected])


def test_it_says_why_neither_adds_in_the_same_words_for_a_model() -> None:
    from recommender.engine.evaluate.evaluation import evaluate

    cluster = _cluster(with_member=False)
    pod = replace(cluster.pods[0], gpu=replace(cluster.pods[0].gpu, models=("V100",)))
    item = evaluate(replace(cluster, pods=(pod,)), at=AT).workloads[0].to_json()
    expected = "no node group offers GPU model V100"
    assert (item["reasons"], item["naiveReasons"]) == ([expected], [expected])


def test_a_discovered_group_whose_node_group_overrides_its_template_copies_the_member() -> None:
    # the demo's pools: found from their label and cluster-autoscaler's status, the
    # capacityweb.io NodeGroup overriding the template; CA still copies the member
    cluster = _cluster(with_member=True)
    (group,) = cluster.node_groups
    found = "cluster-autoscaler status ConfigMap + GKE node pool label"
    overridden = replace(group, source=f"{found} + capacityweb.io NodeGroup overrides")
    naive, joint = _plans(replace(cluster, node_groups=(overridden,)))
    assert dict(naive.add_nodes) == {"shared": 1}  # type: ignore[attr-defined]
    assert dict(joint.add_nodes) == {"shared": 1}  # type: ignore[attr-defined]
    # a discovered group no NodeGroup overrides has a member-built template already
    alone = replace(cluster, node_groups=(replace(group, source=found),))
    assert with_member_capacity(alone) is alone
