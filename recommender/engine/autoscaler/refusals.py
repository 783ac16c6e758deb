"""Why no node group can host some pods, in one sentence both autoscaler columns use.

The naive column (cluster-autoscaler's model: no template accepts the pod) and the
joint column (``explain``: no group can host the workload) name the same cause in the
same words: "no node group offers GPU model G2", else each group's refusal on its
empty template node ("no node group can host its pods: g3-pool: 0/1 nodes are
available: 1 Insufficient nvidia.com/gpu share."), so the two columns of one row
never read as two different answers.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from recommender.engine.scheduler.caches import kept
from recommender.engine.scheduler.state import ClusterState
from topology.model.hardware import Node, NodeGroup, Pod

PRODUCT_LABEL = "nvidia.com/gpu.product"
NO_GROUP = "no node group is configured to add nodes from"


def no_group_can_host(
    groups: Sequence[NodeGroup],
    wanted_models: Iterable[str],
    refusals: Iterable[str],
    missing: Sequence[str] = (),
) -> str:
    """``refusals``: "group: reason" for each group whose template refuses the pods;
    ``missing``: what the pods need that no node has (``unmatched``), said first where
    no group could add it either."""
    if not groups:
        return "; ".join((*missing, NO_GROUP))
    wanted = sorted(set(wanted_models))
    offered = {template_model(g) for g in groups}
    if wanted and not offered & set(wanted):
        return f"no node group offers GPU model {' or '.join(wanted)}"
    return "no node group can host its pods: " + "; ".join(refusals)


def unmatched(pods: Iterable[Pod], state: ClusterState, nodes: Sequence[Node]) -> tuple[str, ...]:
    """The pods' nodeSelector labels (a Kueue ResourceFlavor's ``nodeLabels`` among
    them, ``pkg/podset/podset.go`` ``Merge``) and Kueue topology level (a node label
    key: kueue ``pkg/cache/tas`` builds its domains from the nodes carrying every level)
    that no node of ``nodes`` carries. The labels present are gathered once per
    ``nodes`` and kept with ``state`` (every blocked pod asks)."""
    present = kept(state, ("labels present",), nodes, lambda: _labels_present(nodes))
    said: list[str] = []
    for pod in pods:
        for key, value in sorted(pod.node_selector.items()):
            if value not in present.get(key, ()):
                said.append(f"no node has label {key}={value}")
        level = pod.required_topology or pod.preferred_topology
        if level and level not in present:
            said.append(f"no node has topology level {level}")
    return tuple(dict.fromkeys(said))


def _labels_present(nodes: Iterable[Node]) -> dict[str, set[str]]:
    present: dict[str, set[str]] = {}
    for node in nodes:
        for key, value in node.labels.items():
            present.setdefault(key, set()).add(value)
    return present


def template_model(group: NodeGroup) -> str | None:
    """The GPU model a group's new node carries (its GPUs', else its product label)."""
    models = {g.model for g in group.template.gpus if g.model}
    if models:
        return sorted(models)[0]
    return group.template.labels.get(PRODUCT_LABEL)
