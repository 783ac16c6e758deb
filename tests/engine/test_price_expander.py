"""cluster-autoscaler's price expander (``expander/price/price.go`` ``BestOption``,
``preferred.go``), figures worked out by hand from that code."""

import math
import random

from recommender.engine.autoscaler.expander import (
    PRICE,
    Option,
    best_option,
    preferred_cpu_milli,
    price_score,
)
from tests.builders import make_group
from tests.engine.test_cluster_autoscaler import MACHINE, ML_POD


def one_pod_option(name: str, cpu: int, price: float, gpus: int = 0, count: int = 1) -> Option:
    template = MACHINE.named(f"{name}-t").allocatable(cpu, "16Gi").gpus(gpus).build()
    return Option(
        make_group(name, template).price(price).build(),
        count,
        (ML_POD.named("p").requests(1, "1Gi").build(),),
        template,
    )


def test_a_cpu_only_pod_never_goes_to_a_cheaper_gpu_group() -> None:
    # price.go: a group whose node has a GPU gets unfitness 1000 (gpuUnfitnessOverride).
    # cpu: 4 cores vs the preferred 1 core (cluster of 0 nodes) -> unfitness 4, one node
    # -> tanh(0) = 0 -> 4; 4 x 1.0/h per pod = 4. gpu: 1000 x 0.5 = 500.
    cpu, gpu = one_pod_option("cpu", 4, 1.0), one_pod_option("gpu", 4, 0.5, gpus=1)
    assert price_score(cpu, 0, "cloud.google.com/gke-accelerator") == 4.0
    assert price_score(gpu, 0, "cloud.google.com/gke-accelerator") == 500.0
    chosen = best_option([cpu, gpu], (PRICE,), random.Random(0), cluster_nodes=0)
    assert chosen is not None and chosen.group.name == "cpu"


def test_the_gpu_label_alone_makes_a_gpu_group() -> None:
    # gpu.NodeHasGpu: the provider's GPU label counts even before GPUs are allocatable
    labelled = one_pod_option("l4", 4, 1.0)
    labelled.template.labels["cloud.google.com/gke-accelerator"] = "nvidia-l4"
    assert price_score(labelled, 0, "cloud.google.com/gke-accelerator") == 1000.0


def test_the_preferred_node_grows_with_the_cluster() -> None:
    # preferred.go: <=2 nodes 1 core, <=6 2, <=20 4, <=60 8, <=200 16, else 32
    sizes = [0, 2, 3, 6, 7, 20, 21, 60, 61, 200, 201]
    assert [preferred_cpu_milli(n) // 1000 for n in sizes] == [1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 32]


def test_unfitness_is_suppressed_for_larger_options() -> None:
    # 16 cores vs preferred 4 (10 nodes): unfitness 4; 16 nodes: (4-1)(1-tanh(15/15))+1
    option = one_pod_option("big", 16, 1.0, count=16)
    expected = (3.0 * (1.0 - math.tanh(1.0)) + 1.0) * 16.0
    assert math.isclose(price_score(option, 10, ""), expected)


def test_at_equal_price_the_node_nearest_the_preferred_size_wins() -> None:
    # 50 nodes: preferred 8 cores; 8-core unfitness 1, 32-core 4; same 1.0/h per pod
    near, far = one_pod_option("near", 8, 1.0), one_pod_option("far", 32, 1.0)
    chosen = best_option([far, near], (PRICE,), random.Random(0), cluster_nodes=50)
    assert chosen is not None and chosen.group.name == "near"
