"""The replay's first-fit binding of pods a trace says were running (worked by hand)."""

from recommender.engine.scheduler.first_fit import bind_first_fit
from tests.builders import make_node, make_pod

# 8-cpu, 64Gi nodes of V100M16 GPUs no device carries (first fit counts GPUs only)
V100 = (
    make_node()
    .allocatable(8, "64Gi", 110)
    .gpus(0, "V100M16", gpu_name="{node}-gpu-{i}", devices=False)
)
TEAM_A_POD = make_pod(namespace="team-a").requests(1, "1Gi")


def test_it_binds_each_pod_to_the_first_node_with_room() -> None:
    nodes = [V100.named("n1").gpus(1).build(), V100.named("n2").gpus(2).build()]
    pods = [
        TEAM_A_POD.named("whole-1").gpus(1).build(),  # n1's only GPU
        TEAM_A_POD.named("whole-2").gpus(1).build(),  # n1 full: n2 GPU 0
        TEAM_A_POD.named("share-500").gpus(1, 500).build(),  # n2 GPU 1 → 500 left
        TEAM_A_POD.named("share-600").gpus(1, 600).build(),  # no GPU has 600 left
        TEAM_A_POD.named("share-400").gpus(1, 400).build(),  # n2 GPU 1 again (500 ≥ 400)
        TEAM_A_POD.named("whole-3").gpus(1).build(),  # no untouched GPU anywhere
    ]
    bound, unplaced = bind_first_fit(pods, nodes)
    assert [(p.name, p.node_name) for p in bound] == [
        ("whole-1", "n1"),
        ("whole-2", "n2"),
        ("share-500", "n2"),
        ("share-400", "n2"),
    ]
    assert [p.name for p in unplaced] == ["share-600", "whole-3"]


def test_it_puts_a_share_on_the_fullest_gpu_that_still_fits_it() -> None:
    pods = [
        TEAM_A_POD.named("a").gpus(1, 300).build(),  # GPU 0 → 700 left
        TEAM_A_POD.named("b").gpus(1, 800).build(),  # GPU 0 cannot (700): GPU 1 → 200 left
        # fits GPU 0 (700) and GPU 1 (200): the fuller, GPU 1
        TEAM_A_POD.named("c").gpus(1, 200).build(),
        TEAM_A_POD.named("d").gpus(1, 700).build(),  # only GPU 0 has 700
        TEAM_A_POD.named("e").gpus(1, 1).build(),  # nothing left on either GPU
    ]
    bound, unplaced = bind_first_fit(pods, [V100.named("n1").gpus(2).build()])
    assert [p.name for p in bound] == ["a", "b", "c", "d"]
    assert [p.name for p in unplaced] == ["e"]


def test_it_respects_the_gpu_model_and_cpu() -> None:
    nodes = [V100.named("v100").gpus(1).build(), V100.named("a100").gpus(1, "A100").build()]
    pods = [
        TEAM_A_POD.named("wants-a100").gpus(1, models=("A100",)).build(),
        TEAM_A_POD.named("too-much-cpu").requests(9).build(),
    ]
    bound, unplaced = bind_first_fit(pods, nodes)
    assert [(p.name, p.node_name) for p in bound] == [("wants-a100", "a100")]
    assert [p.name for p in unplaced] == ["too-much-cpu"]
