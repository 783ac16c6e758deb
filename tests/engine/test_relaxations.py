"""What would unblock a blocked workload, found and verified by the engine.

Each cluster is worked by hand; each relaxation named is one a person can check on it.
"""

from dataclasses import replace
from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import WorkloadEvaluation, evaluate
from tests.builders import make_group, make_reservation
from tests.engine.test_placement import H100, TEAM_A_POD, gang_cluster
from tests.engine.test_same_template import _cluster as shared_cluster
from topology.model.hardware import Cluster

AT = datetime(2026, 12, 1, tzinfo=UTC)


def _workload(cluster: Cluster, key: str) -> WorkloadEvaluation:
    found = {w.key: w for w in evaluate(cluster, at=AT).workloads}
    return found[key]


def _texts(cluster: Cluster, key: str) -> list[tuple[str, str]]:
    return [(r.text, r.verdict) for r in _workload(cluster, key).relaxations]


POOL = make_group("pool", H100.named("template").build()).selector({"pool": "x"}).price(10.0)


def _partial_gang() -> Cluster:
    """3 members x 8 GPUs, no node: a group of 8-GPU nodes at max 2 fits 2 of 3."""
    gang = gang_cluster(members=3, gpus_each=8)
    cluster = replace(gang, nodes=(), node_groups=(POOL.max_size(2).build(),))
    cluster = replace(cluster, pods=tuple(replace(p, required_topology=None) for p in gang.pods))
    return replace(cluster, gangs=tuple(replace(g, required_topology=None) for g in gang.gangs))


def test_it_says_the_max_size_is_what_stops_a_partial_gang() -> None:
    assert _workload(_partial_gang(), "team-a/job").joint.reasons == (
        "with 2 new node(s) of group pool, all its max size 2 allows: only 2 of 3 members fit",
    )


def test_it_raises_the_max_size_by_the_least_that_fits_the_gang() -> None:
    cluster = _partial_gang()
    assert _texts(cluster, "team-a/job") == [
        ("raise node group pool's max size by 1 (2 → 3)", "runs_after_scale_up")
    ]


def test_it_drops_a_block_requirement_no_block_can_meet() -> None:
    # 3 x 4 GPUs in one block; blocks b1 and b2 have 8 free GPUs each, 16 together
    cluster = gang_cluster(members=3, gpus_each=4)
    assert _texts(cluster, "team-a/job") == [("drop team-a/job's topology requirement", "runs_now")]


def test_it_names_the_reservation_of_another_team_that_would_take_it() -> None:
    reserved = make_reservation("r-b", "team-b").nodes("n1").build()
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(),),
        pods=(TEAM_A_POD.named("p").gpus(2).build(),),
        reservations=(reserved,),
    )
    # once team-a owns it too, the reservation filter admits team-a's pod on n1
    assert _texts(cluster, "team-a/p") == [("let team-a use reservation r-b", "runs_now")]


def test_it_enables_sharing_on_a_pool_of_whole_gpus_for_a_fraction() -> None:
    # the group has no member: its declared template of one whole GPU refuses 0.5 GPU
    cluster = shared_cluster(with_member=False)
    assert _texts(cluster, "team-a/share") == [
        (
            "enable GPU sharing (fractions of a GPU per pod) on node group shared",
            "runs_after_scale_up",
        )
    ]


def test_it_offers_a_gpu_model_with_room_for_the_pods() -> None:
    pod = TEAM_A_POD.named("p").gpus(2, models=("V100",)).build()
    cluster = Cluster("c", nodes=(H100.named("n1").build(),), pods=(pod,))
    assert _texts(cluster, "team-a/p") == [("ask for GPU model H100 instead", "runs_now")]


def test_it_says_nothing_when_no_single_change_helps() -> None:
    # 16 GPUs in one pod, 8-GPU nodes, no group, no reservation, no model, no level
    cluster = Cluster(
        "c", nodes=(H100.named("n1").build(),), pods=(TEAM_A_POD.named("p").gpus(16).build(),)
    )
    workload = _workload(cluster, "team-a/p")
    assert (workload.joint.verdict, workload.relaxations) == ("blocked", ())


def test_it_says_when_the_workloads_before_it_are_what_blocks_it() -> None:
    # two 8-GPU pods, one 8-GPU node: the older runs, the younger alone would run too
    first = TEAM_A_POD.named("a").gpus(8).arrival(1.0).build()
    second = TEAM_A_POD.named("b").gpus(8).arrival(2.0).build()
    cluster = Cluster("c", nodes=(H100.named("n1").build(),), pods=(first, second))
    relaxations = _workload(cluster, "team-a/b").relaxations
    assert [(r.kind, r.verdict) for r in relaxations] == [("order", "runs_now")]


def test_it_lists_them_in_the_json_of_the_workload() -> None:
    cluster = gang_cluster(members=3, gpus_each=4)
    item = _workload(cluster, "team-a/job").to_json()
    assert item["relaxations"][0]["edit"] == {"kind": "topology", "target": "", "amount": 0}


def test_it_leaves_a_runnable_workload_without_relaxations() -> None:
    cluster = Cluster(
        "c", nodes=(H100.named("n1").build(),), pods=(TEAM_A_POD.named("p").gpus(1).build(),)
    )
    assert _workload(cluster, "team-a/p").relaxations == ()


def test_it_counts_the_members_past_the_max_before_any_raise_helps() -> None:
    # 5 full 8-GPU members of a group whose max is 2: room 2 - 5 < 0; one more node
    # for the 8-GPU pod needs a max of 6, a raise of 4
    members = tuple(H100.named(f"m{i}").group("pool").build() for i in range(5))
    busy = tuple(TEAM_A_POD.named(f"busy-{i}").gpus(8).on(f"m{i}").build() for i in range(5))
    group = POOL.max_size(2).current_size(5).build()
    cluster = Cluster(
        "c",
        nodes=members,
        pods=(*busy, TEAM_A_POD.named("p").gpus(8).build()),
        node_groups=(group,),
    )
    raises = [r for r in _workload(cluster, "team-a/p").relaxations if r.kind == "raise-max"]
    assert [(r.text, r.verdict) for r in raises] == [
        ("raise node group pool's max size by 4 (2 → 6; it has 5 nodes)", "runs_after_scale_up")
    ]


def test_it_names_the_least_priority_that_evicts_what_holds_its_gpus() -> None:
    # the node's 8 GPUs run a priority-5 pod (and a priority-1 pod holds none): the
    # pending priority-0 pod of 8 GPUs runs by preemption only above 5, so priority 6
    holder = TEAM_A_POD.named("holder").gpus(8).on("n1").priority(5).build()
    idle = TEAM_A_POD.named("small").set(gpu=None).on("n1").priority(1).build()
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(),),
        pods=(holder, idle, TEAM_A_POD.named("p").gpus(8).build()),
    )
    relaxations = _workload(cluster, "team-a/p").relaxations
    assert [(r.text, r.verdict, r.reasons) for r in relaxations] == [
        (
            "give it priority 6 (lower-priority pods may then be evicted)",
            "preempts",
            ("runs after preempting team-a/holder",),
        )
    ]


def test_it_says_when_the_search_stopped_before_trying_every_change() -> None:
    # 45 other teams' reservations on a node the pod cannot use anyway (it asks 16 GPUs
    # of an 8-GPU node): 40 plans are spent on them, the rest is said to be untried
    reserved = tuple(
        make_reservation(f"r-{i:02d}", "team-b").nodes("n1").build() for i in range(45)
    )
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(),),
        pods=(TEAM_A_POD.named("p").gpus(16).build(),),
        reservations=reserved,
    )
    relaxations = _workload(cluster, "team-a/p").relaxations
    assert [(r.kind, r.text) for r in relaxations] == [
        ("not-searched", "not all changes tried: the search stops after 40 plans")
    ]


def test_it_gives_pods_alike_but_for_their_name_the_same_answer() -> None:
    # as above, with two pending pods the same but for their name: searched once, both
    # get priority 6 (the second is not left with nothing)
    holder = TEAM_A_POD.named("holder").gpus(8).on("n1").priority(5).build()
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(),),
        pods=(holder, TEAM_A_POD.named("p").gpus(8).build(), TEAM_A_POD.named("q").gpus(8).build()),
    )
    for key in ("team-a/p", "team-a/q"):
        assert _texts(cluster, key) == [
            ("give it priority 6 (lower-priority pods may then be evicted)", "preempts")
        ]


def test_it_answers_pods_that_differ_beyond_their_name_each_on_its_own() -> None:
    # n1's 8 GPUs run a priority-5 pod, n2's a priority-1 and a priority-3 pod of 4 each:
    # p (8 GPUs) needs both of n2's evicted (priority 4), q (4 GPUs) only the first (2)
    cluster = Cluster(
        "c",
        nodes=(H100.named("n1").build(), H100.named("n2").build()),
        pods=(
            TEAM_A_POD.named("holder").gpus(8).on("n1").priority(5).build(),
            TEAM_A_POD.named("low").gpus(4).on("n2").priority(1).build(),
            TEAM_A_POD.named("mid").gpus(4).on("n2").priority(3).build(),
            TEAM_A_POD.named("p").gpus(8).build(),
            TEAM_A_POD.named("q").gpus(4).build(),
        ),
    )
    assert [_texts(cluster, key) for key in ("team-a/p", "team-a/q")] == [
        [("give it priority 4 (lower-priority pods may then be evicted)", "preempts")],
        [("give it priority 2 (lower-priority pods may then be evicted)", "preempts")],
    ]
