"""The fgd what-if (evaluate.whatif) answers without its pass only where the pass must agree."""

from recommender.engine.evaluate.whatif import fragmentation_what_if, placed_gpu_milli
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.profiles import FGD, KUBE_DEFAULT
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_node, make_pod
from topology.model.hardware import Cluster

# one A100 on an 8-cpu node; pods of 1 cpu, 1Gi and one GPU
A100 = make_node().allocatable(8, "64Gi", 110).gpus(1, "A100")
ONE_GPU = make_pod().requests(1, "1Gi").gpus(1)


def _stuck_cluster() -> Cluster:
    """Two 1-GPU nodes whose GPUs run priority-10 pods; three pending priority-0 lone
    pods ask a GPU each: none fits, none may preempt."""
    nodes = (A100.named("a").build(), A100.named("b").build())
    bound = tuple(
        ONE_GPU.namespace("run").named(f"r-{n.name}").priority(10).on(n.name).build() for n in nodes
    )
    pending = tuple(ONE_GPU.namespace("ml").named(f"p{k}").arrival(k).build() for k in range(3))
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
