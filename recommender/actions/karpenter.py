"""A Karpenter card: Karpenter launches for the pending pods by itself, so the only
thing that can stop it is the NodePool's ``spec.limits``.

kubernetes-sigs/karpenter ``pkg/apis/v1/nodepool.go`` (``Limits``: "Limits define a set
of bounds for provisioning capacity"; a pool without limits is unbounded) and
``pkg/controllers/provisioning/scheduling`` (an instance type is launched only while
the pool's nodes' capacity plus its own stays within each limit). Hence:

- a NodePool without ``spec.limits`` gets NO patch: adding a limit would cap a pool
  that had none (at exactly what the card adds);
- a limit the card's nodes fit under stays as it is;
- a limit they do not fit under is raised by the shortfall only (limit + what the
  card's nodes need beyond what is left), and only that resource is patched.

The limits, what the pool's nodes leave of them and what one node counts against them
come from discovery (``topology.kube.karpenter``, ``AutoscalerRef.limits``).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from fractions import Fraction

from recommender.engine.evaluate.evaluation import Evaluation, Recommendation
from topology.model.hardware import Cluster, NodeGroup, PoolLimit

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GIB, MIB = 2**30, 2**20


def karpenter_text(
    rec: Recommendation, evaluation: Evaluation, cluster: Cluster, group: NodeGroup
) -> str:
    ref = group.autoscaler
    assert ref is not None
    pool = ref.name
    kind = group.template.labels.get(INSTANCE_TYPE_LABEL, group.name)
    where = f"; the pods need nodeSelector {_labels(rec.placement)}" if rec.placement else ""
    head = (
        f"# NodePool {pool}: Karpenter launches the {rec.count} x {kind} itself for the "
        f"pending pods{where}.\n"
    )
    if not ref.limits:
        return (
            head
            + f"# NodePool {pool} sets no spec.limits: nothing to change (a limit would cap it).\n"
        )
    raised = raised_limits(
        ref.limits, {lim.resource: rec.count * Fraction(lim.per_node) for lim in ref.limits}
    )
    together = _together(rec, evaluation, cluster, pool)
    if not raised:
        return head + "# its spec.limits leave room for them: nothing to change.\n" + together
    patch = {"spec": {"limits": raised}}
    return (
        head
        + "# its spec.limits are too low for them: raised by what they need beyond what is left\n"
        + together
        + f"kubectl patch nodepool {pool} --type merge -p '{json.dumps(patch, sort_keys=True)}'\n"
    )


def raised_limits(limits: tuple[PoolLimit, ...], needed: dict[str, Fraction]) -> dict[str, str]:
    """Each limit ``needed`` goes past, raised by the shortfall (quantity text)."""
    raised = {}
    for lim in limits:
        short = needed.get(lim.resource, Fraction(0)) - Fraction(lim.left)
        if short > 0:
            raised[lim.resource] = quantity(Fraction(lim.limit) + short, lim.resource)
    return raised


def _together(rec: Recommendation, evaluation: Evaluation, cluster: Cluster, pool: str) -> str:
    """With other cards of the same NodePool: the limits all of them need at once."""
    groups = {
        g.name: g
        for g in cluster.node_groups
        if g.autoscaler and g.autoscaler.kind == "karpenter" and g.autoscaler.name == pool
    }
    cards = [r for r in evaluation.recommendations if r.node_group in groups]
    if len(cards) < 2:
        return ""
    needed: dict[str, Fraction] = {}
    limits: tuple[PoolLimit, ...] = ()
    for card in cards:
        ref = groups[card.node_group].autoscaler
        assert ref is not None
        limits = ref.limits
        for lim in ref.limits:
            needed[lim.resource] = needed.get(lim.resource, Fraction(0)) + card.count * Fraction(
                lim.per_node
            )
    raised = raised_limits(limits, needed)
    text = ", ".join(f"{k}: {v}" for k, v in sorted(raised.items())) or "none raised"
    return (
        f"# with the other {len(cards) - 1} card(s) of NodePool {pool}: limits {text} in all "
        "(apply that once instead; limits do not add up)\n"
    )


def quantity(value: Fraction, resource: str) -> str:
    """A Kubernetes quantity for ``value`` (rounded up: a limit never ends below need)."""
    if resource == "cpu" and value.denominator != 1:
        return f"{math.ceil(value * 1000)}m"
    whole = math.ceil(value)
    if resource == "memory":
        for suffix, size in (("Gi", GIB), ("Mi", MIB)):
            if whole % size == 0:
                return f"{whole // size}{suffix}"
    return str(whole)


def _labels(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
