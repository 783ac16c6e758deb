"""--balance-similar-node-groups with each cloud's comparator (``main.go``
``buildAutoscaler`` picks it by ``--cloud-provider``; ``processors/nodegroupset/
aws_nodegroups.go``, ``azure_nodegroups.go``, ``gce_nodegroups.go``), worked out by hand."""

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.autoscaler.nodegroupset import similar
from tests.builders import make_group
from tests.engine.test_ca_flags import _per_group
from tests.engine.test_cluster_autoscaler import MACHINE, ML_POD, naive
from topology.model.hardware import Cluster

EIGHT_CPU = MACHINE.allocatable(8, "32Gi")  # one machine type, told apart by labels


def eks_cluster() -> Cluster:
    """Two EKS node groups of the same machine, told apart only by their group label."""
    a = (
        make_group("a", EIGHT_CPU.named("a-t").label("eks.amazonaws.com/nodegroup", "a").build())
        .price(1.0)
        .build()
    )
    b = (
        make_group("b", EIGHT_CPU.named("b-t").label("eks.amazonaws.com/nodegroup", "b").build())
        .price(1.0)
        .build()
    )
    return Cluster(
        "c",
        pods=tuple(ML_POD.named(f"p{i}").requests(8, "1Gi").build() for i in range(4)),
        node_groups=(a, b),
    )


def test_the_aws_comparator_ignores_the_eks_node_group_label() -> None:
    # 4 pods of 8 cpu: 4 nodes; aws ignores eks.amazonaws.com/nodegroup: the two groups
    # are similar and BalanceScaleUpBetweenGroups gives 2 and 2
    flags = parse_flags(["--balance-similar-node-groups", "--cloud-provider=aws"])
    assert _per_group(naive(eks_cluster(), flags.settings)) == {"a": 2, "b": 2}


def test_the_default_gce_comparator_keeps_eks_groups_apart() -> None:
    # gce ignores only topology.gke.io/zone (+ the basic labels): the labels differ, no
    # similar group, all 4 nodes to the one group the expander picks
    flags = parse_flags(["--balance-similar-node-groups"])
    assert sorted(_per_group(naive(eks_cluster(), flags.settings)).values()) == [4]


def test_the_azure_comparator_takes_one_agent_pool_as_similar_whatever_else_differs() -> None:
    # nodesFromSameAzureNodePool: same kubernetes.azure.com/agentpool -> similar, even
    # with a different machine
    small = EIGHT_CPU.named("s-t").label("kubernetes.azure.com/agentpool", "gpu").build()
    large = (
        MACHINE.named("l-t")
        .allocatable(16, "64Gi")
        .labels({"kubernetes.azure.com/agentpool": "gpu"})
        .build()
    )
    assert similar(small, large, (), "azure") is True
    assert similar(small, large, (), "gce") is False


def test_the_azure_comparator_ignores_the_vmss_tags() -> None:
    first = EIGHT_CPU.named("x-t").labels({"poolName": "x", "aksEngineVersion": "1"}).build()
    second = EIGHT_CPU.named("y-t").labels({"poolName": "y", "aksEngineVersion": "2"}).build()
    assert similar(first, second, (), "azure") is True
    assert similar(first, second, (), "aws") is False
