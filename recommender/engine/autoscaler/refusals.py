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

from topology.model.hardware import NodeGroup

PRODUCT_LABEL = "nvidia.com/gpu.product"
NO_GROUP = "no node group is configured to add nodes from"


def no_group_can_host(
    groups: Sequence[NodeGroup], wanted_models: Iterable[str], refusals: Iterable[str]
) -> str:
    """``refusals``: "group: reason" for each group whose template refuses the pods."""
    if not groups:
        return NO_GROUP
    wanted = sorted(set(wanted_models))
    offered = {template_model(g) for g in groups}
    if wanted and not offered & set(wanted):
        return f"no node group offers GPU model {' or '.join(wanted)}"
    return "no node group can host its pods: " + "; ".join(refusals)


def template_model(group: NodeGroup) -> str | None:
    """The GPU model a group's new node carries (its GPUs', else its product label)."""
    models = {g.model for g in group.template.gpus if g.model}
    if models:
        return sorted(models)[0]
    return group.template.labels.get(PRODUCT_LABEL)
