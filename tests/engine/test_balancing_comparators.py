"""--balance-similar-node-groups with each cloud's comparator (``main.go``
``buildAutoscaler`` picks it by ``--cloud-provider``; ``processors/nodegroupset/
aws_nodegroups.go``, ``azure_nodegroups.go``, ``gce_nodegroups.go``), worked out by hand."""

from dataclasses import replace

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.autoscaler.nodegroupset import similar
from tests.engine.test_ca_flags import _per_group
from tests.engine.test_cluster_autoscaler import group, naive, node, pod
from topology.model.hardware import Cluster


def labelled(name: str, **labels: str):  # type: ignore[no-untyped-def]
    return replace(node(f"{name}-t", 8, 32), labels=labels)


def eks_cluster() -> Cluster:
    """Two EKS node groups of the same machine, told apart only by their group label."""
    a = group("a", labelled("a", **{"eks.amazonaws.com/nodegroup": "a"}), 1.0)
    b = group("b", labelled("b", **{"eks.amazonaws.com/nodegroup": "b"}), 1.0)
    return Cluster("c", pods=tuple(pod(f"p{i}", 8, 1) for i in range(4)), node_groups=(a, b))


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
    small = labelled("s", **{"kubernetes.azure.com/agentpool": "gpu"})
    large = replace(node("l-t", 16, 64), labels={"kubernetes.azure.com/agentpool": "gpu"})
    assert similar(small, large, (), "azure") is True
    assert similar(small, large, (), "gce") is False


def test_the_azure_comparator_ignores_the_vmss_tags() -> None:
    first = labelled("x", poolName="x", aksEngineVersion="1")
    second = labelled("y", poolName="y", aksEngineVersion="2")
    assert similar(first, second, (), "azure") is True
    assert similar(first, second, (), "aws") is False
