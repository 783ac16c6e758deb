"""The replay's first-fit binding of pods a trace says were running (worked by hand)."""

from recommender.engine.scheduler.first_fit import bind_first_fit
from topology.model.hardware import Gpu, GpuRequest, Node, Pod, Resources

GIB = 1024**3


def _node(name: str, gpus: int, model: str = "V100M16") -> Node:
    return Node(
        name=name,
        allocatable=Resources(8000, 64 * GIB, 110),
        gpus=tuple(Gpu(f"{name}-gpu-{i}", model=model) for i in range(gpus)),
    )


def _pod(name: str, gpu: GpuRequest | None = None, cpu_milli: int = 1000) -> Pod:
    return Pod("team-a", name, requests=Resources(cpu_milli, GIB, 1), gpu=gpu)


def test_it_binds_each_pod_to_the_first_node_with_room() -> None:
    nodes = [_node("n1", 1), _node("n2", 2)]
    pods = [
        _pod("whole-1", GpuRequest(1)),  # n1's only GPU
        _pod("whole-2", GpuRequest(1)),  # n1 full: n2 GPU 0
        _pod("share-500", GpuRequest(1, 500)),  # n2 GPU 1 → 500 left
        _pod("share-600", GpuRequest(1, 600)),  # no GPU has 600 left
        _pod("share-400", GpuRequest(1, 400)),  # n2 GPU 1 again (500 ≥ 400)
        _pod("whole-3", GpuRequest(1)),  # no untouched GPU anywhere
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
        _pod("a", GpuRequest(1, 300)),  # GPU 0 → 700 left
        _pod("b", GpuRequest(1, 800)),  # GPU 0 cannot (700): GPU 1 → 200 left
        _pod("c", GpuRequest(1, 200)),  # fits GPU 0 (700) and GPU 1 (200): the fuller, GPU 1
        _pod("d", GpuRequest(1, 700)),  # only GPU 0 has 700
        _pod("e", GpuRequest(1, 1)),  # nothing left on either GPU
    ]
    bound, unplaced = bind_first_fit(pods, [_node("n1", 2)])
    assert [p.name for p in bound] == ["a", "b", "c", "d"]
    assert [p.name for p in unplaced] == ["e"]


def test_it_respects_the_gpu_model_and_cpu() -> None:
    nodes = [_node("v100", 1), _node("a100", 1, model="A100")]
    pods = [
        _pod("wants-a100", GpuRequest(1, models=("A100",))),
        _pod("too-much-cpu", cpu_milli=9000),
    ]
    bound, unplaced = bind_first_fit(pods, nodes)
    assert [(p.name, p.node_name) for p in bound] == [("wants-a100", "a100")]
    assert [p.name for p in unplaced] == ["too-much-cpu"]
