"""The array scores (scheduler/vector.py) are the rules' own, node by node, to the bit.

Each query's array is compared with ``NodePicker._score_node`` (the filters and the
policy's rules run on one node, no memo, no index) on every node, while the state
changes under it the ways a pass changes it: pods bound and released, a node added,
the state copied. The nodes include the awkward ones: no memory or no cpu
allocatable (NodeResourcesFit and BalancedAllocation leave that resource out), bound
pods without requests (counted as 100m / 200 MiB by NodeResourcesFit), an extended
resource, GPUs whole, shared and too few; the pods request nothing, only cpu, only
memory, more than any node holds, some name a GPU model by nodeSelector.
"""

import random

import pytest

from recommender.engine.scheduler import fgd
from recommender.engine.scheduler.allocate import gpu_fits, gpu_options
from recommender.engine.scheduler.caches import SharedMemo
from recommender.engine.scheduler.memo import NO_SCORE
from recommender.engine.scheduler.pick import NodePicker
from recommender.engine.scheduler.scores import policy_named
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.vector import supports
from tests.builders import make_node, make_pod
from topology.model.hardware import Cluster, GpuRequest, Node, Pod, Resources

RDMA = "example.com/rdma"


def _node(rng: random.Random, name: str) -> Node:
    cpu = rng.choice((0, 4_000, 32_000, 96_000, 96_000, 192_000))
    memory = rng.choice((0, 2**30, 2**36, 2**39, 2**40, 1536 * 2**30))
    if cpu == 0 and memory == 0:
        memory = 2**36
    extended = {RDMA: rng.choice((1, 2, 8))} if rng.random() < 0.3 else {}
    count = rng.choice((0, 0, 2, 4, 8))
    model = rng.choice(("H100", "A100"))
    shareable = rng.random() < 0.4
    pods = rng.choice((3, 110))
    return (
        make_node(name)
        .labels({"kubernetes.io/hostname": name, "gpu": model})
        .resources(Resources(cpu, memory, pods=pods, extended=extended))
        .gpus(count, model, gpu_name="{node}-gpu{i}", shareable=shareable)
        .build()
    )


def _pod(rng: random.Random, name: str, node: str | None = None) -> Pod:
    cpu = rng.choice((0, 0, 100, 1_000, 7_500, 64_000, 500_000))
    memory = rng.choice((0, 0, 2**20, 2**31, 2**35, 2**41))
    extended = {RDMA: 1} if rng.random() < 0.15 else {}
    gpu = rng.choice((None, None, GpuRequest(1), GpuRequest(1, 250), GpuRequest(2), GpuRequest(8)))
    if gpu is not None and rng.random() < 0.2:
        gpu = GpuRequest(gpu.count, gpu.milli_per_gpu, models=("A100",))
    selector = {"gpu": rng.choice(("A100", "H100"))} if node is None and rng.random() < 0.25 else {}
    requests = Resources(cpu, memory, pods=1, extended=extended)
    return (
        make_pod(name, "team")
        .resources(requests)
        .set(gpu=gpu)
        .on(node)
        .node_selector(selector)
        .build()
    )


def _cluster(seed: int) -> tuple[Cluster, list[Pod]]:
    rng = random.Random(seed)
    nodes = [_node(rng, f"n{i:02d}") for i in range(40)]
    bound = [_pod(rng, f"b{i}", nodes[i % len(nodes)].name) for i in range(30)]
    # bound pods only where they fit, so the state starts valid
    cluster = Cluster("vector", nodes=tuple(nodes))
    state = ClusterState.from_cluster(cluster)
    kept = []
    for pod in bound:
        alloc = state.alloc(pod.node_name or "")
        if (
            pod.gpu is None
            and not pod.requests.extended
            and (
                pod.requests.cpu_milli <= alloc.cpu_free_milli
                and pod.requests.memory_bytes <= alloc.memory_free_bytes
            )
        ):
            kept.append(pod)
            state = ClusterState.from_cluster(
                Cluster("vector", nodes=tuple(nodes), pods=tuple(kept))
            )
    shapes = [_pod(rng, f"s{i}") for i in range(60)]
    return Cluster("vector", nodes=tuple(nodes), pods=tuple(kept)), shapes


def _picker(cluster: Cluster, state: ClusterState, policy: str, shapes: list[Pod]) -> NodePicker:
    rules = policy_named(policy)
    typical = fgd.typical_pods(shapes) if rules.needs_fragmentation else None
    shared = SharedMemo.of(cluster, state, {}, None, rules, typical)
    return NodePicker(cluster, state, rules, shared, seed=0, indexed=True)


def _agrees(picker: NodePicker, pod: Pod) -> int:
    """Every node's array score equals the rules' score; how many nodes fit."""
    array = picker.vector_scores(pod)
    names = picker.state.node_names()
    assert len(array) == len(names)
    fitting = 0
    for name, value in zip(names, array, strict=True):
        scored = picker._score_node(name, pod, picker._base)
        expected = NO_SCORE if scored is None else scored[0]
        assert value == expected, (pod, name, value, expected)
        fitting += scored is not None
        if pod.gpu is not None:
            info, alloc = picker.state.info(name), picker.state.alloc(name)
            options = gpu_options(info, alloc, pod.gpu)
            assert gpu_fits(info, alloc, pod.gpu) == (not isinstance(options, str)), (pod, name)
    return fitting


@pytest.mark.parametrize("policy", ["kube-default", "kube-default:1.36", "fgd"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_array_scores_are_the_rules_scores_as_the_state_changes(policy: str, seed: int) -> None:
    cluster, shapes = _cluster(seed)
    assert supports(policy_named(policy))
    rng = random.Random(seed)
    state = ClusterState.from_cluster(cluster)
    picker = _picker(cluster, state, policy, shapes)
    bound: list[tuple[str, Pod, object]] = []
    fitting = 0
    for step in range(80):
        pod = rng.choice(shapes)
        fitting += _agrees(picker, pod)
        choice = picker.best_node(pod, picker.scope(state.node_names()))
        if choice is not None:
            placed = Pod(pod.namespace, f"{pod.name}-{step}", pod.requests, pod.gpu)
            state.apply(choice.node, placed.key, choice.allocation, placed)
            bound.append((choice.node, placed, choice.allocation))
        if step % 9 == 4 and bound:  # resources given back
            node, placed, allocation = bound.pop(rng.randrange(len(bound)))
            state.release(node, placed.key, allocation, placed)  # type: ignore[arg-type]
        if step == 30:  # a node added, as a scale-up adds one
            state.add_node(_node(rng, "added"))
        if step == 50:  # a copy (the index and its arrays cloned, written apart)
            original, state = state, state.copy()
            picker = _picker(cluster, state, policy, shapes)
            untouched = shapes[0]
            _agrees(_picker(cluster, original, policy, shapes), untouched)
    assert fitting > 0  # some shapes fit somewhere, so scores were compared, not only misses


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_array_reasons_are_the_filters_first_failing_reason_node_by_node(seed: int) -> None:
    """``NodePicker.node_reasons`` on the index's arrays says of every node what
    ``filters.run_filters`` says first (static rules, cpu, memory, pod slots, the
    extended resource, GPUs), while the state changes as a pass changes it."""
    from recommender.engine.scheduler.filters import run_filters

    cluster, shapes = _cluster(seed)
    rng = random.Random(seed)
    state = ClusterState.from_cluster(cluster)
    picker = _picker(cluster, state, "kube-default", shapes)
    said: set[str] = set()
    for step in range(60):
        pod = rng.choice(shapes)
        names = state.node_names()
        reasons = picker.node_reasons(pod)
        expected = [
            run_filters(state.info(n), state.alloc(n), pod, picker.filters).reason for n in names
        ]
        assert reasons == expected, pod
        said.update(expected)
        choice = picker.best_node(pod, picker.scope(names))
        if choice is not None:
            placed = Pod(pod.namespace, f"{pod.name}-{step}", pod.requests, pod.gpu)
            state.apply(choice.node, placed.key, choice.allocation, placed)
        if step == 30:
            state.add_node(_node(rng, "added"))
    # the comparison covered a fitting node and several kinds of refusal
    assert "" in said and {"Insufficient cpu", "Insufficient memory"} <= said
    assert any(reason.startswith("Insufficient nvidia.com/gpu") for reason in said)


def _fragmentation_loop(
    typical: tuple[fgd.TypicalPod, ...], model: str | None, cpu_left: int, lefts: tuple[int, ...]
) -> float:
    """The FGD simulator's loop, as ``FragmentationModel._compute`` read before its arrays."""
    idle = sum(lefts)
    frag = 0.0
    for pod in typical:
        value = idle
        if pod.gpu_milli and (not pod.models or model in pod.models):
            wide = sum(1 for left in lefts if left >= pod.gpu_milli)
            if wide >= pod.gpu_count and cpu_left >= pod.cpu_milli:
                value = sum(left for left in lefts if left < pod.gpu_milli)
        frag += pod.frequency * value
    return frag


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_array_fragmentation_is_the_simulators_loop_to_the_bit(seed: int) -> None:
    rng = random.Random(seed)
    pods = [_pod(rng, f"t{i}") for i in range(400)]
    typical = fgd.typical_pods(pods)
    assert len(typical) > 20
    model = fgd.FragmentationModel(typical)
    for _ in range(300):
        lefts = tuple(
            rng.choice((0, 0, 250, 500, 750, 1000, 1000)) for _ in range(rng.randrange(9))
        )
        cpu_left = rng.choice((-1000, 0, 1000, 7_500, 64_000, 10**6))
        node_model = rng.choice((None, "A100", "H100"))
        expected = _fragmentation_loop(typical, node_model, cpu_left, lefts)
        assert model._compute(node_model, cpu_left, lefts) == expected
