"""The fgd what-if (evaluate.whatif) answers without its pass only where the pass must agree."""

from recommender.engine.evaluate.whatif import fragmentation_what_if, placed_gpu_milli
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.profiles import FGD, KUBE_DEFAULT
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import Cluster, Device, Gpu, GpuRequest, Node, Pod, Resources

REQUESTS = Resources(cpu_milli=1000, memory_bytes=2**30, pods=1)


def _node(name: str) -> Node:
    gpus = (Gpu("gpu-0", model="A100"),)
    return Node(
        name=name,
        allocatable=Resources(cpu_milli=8000, memory_bytes=2**36, pods=110),
        gpus=gpus,
        devices=(Device("gpu-0", gpu="gpu-0", model="A100", capacity={"gpu_milli": 1000}),),
    )


def _stuck_cluster() -> Cluster:
    """Two 1-GPU nodes whose GPUs run priority-10 pods; three pending priority-0 lone
    pods ask a GPU each: none fits, none may preempt."""
    nodes = (_node("a"), _node("b"))
    bound = tuple(
        Pod("run", f"r-{n.name}", REQUESTS, GpuRequest(1), priority=10, node_name=n.name)
        for n in nodes
    )
    pending = tuple(Pod("ml", f"p{k}", REQUESTS, GpuRequest(1), arrival=k) for k in range(3))
    return Cluster("stuck", nodes=nodes, pods=bound + pending)


def test_it_answers_lone_pods_placed_nowhere_as_the_fgd_pass_does() -> None:
    cluster = _stuck_cluster()
    pending = pending_workloads(cluster)
    state = ClusterState.from_cluster(cluster)
    options = PlacementOptions(policy=KUBE_DEFAULT)
    chosen = place(cluster, pending, state=state, options=options)
    fgd_pass = place(cluster, pending, state=state, options=PlacementOptions(policy=FGD))
    what_if = fragmentation_what_if(cluster, pending, state, chosen, options, KUBE_DEFAULT)
    assert what_if is not None
    assert placed_gpu_milli(fgd_pass) == {}  # what the pass itself finds: nothing placed
    assert (what_if.extra_gpu_milli, what_if.workloads, what_if.not_placed) == (0, (), ())
