"""TaintToleration's Score: nodes whose PreferNoSchedule taints the pod does not tolerate
come last.

Upstream: kubernetes/kubernetes ``pkg/scheduler/framework/plugins/tainttoleration/
taint_toleration.go``: ``Score`` counts the node's ``PreferNoSchedule`` taints that
none of the pod's tolerations with an empty or ``PreferNoSchedule`` effect tolerates
(``countIntolerableTaintsPreferNoSchedule``, ``getAllTolerationPreferNoSchedule``);
``NormalizeScore`` is ``helper.DefaultNormalizeScore(MaxNodeScore, true, scores)`` over
the nodes that passed Filter: ``100 − 100·count / max count`` (integer division), every
node 100 when no node has such a taint. The profile weighs it 3 (``default_plugins.go``).

The plugin's value depends on every feasible node (the normalisation), so it is not part
of the memoised per-node score: ``pick.NodePicker`` adds it on a full scan, and only for
a pod that some node in its scope has such a taint for (elsewhere it adds the same 300
to every node and changes nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from topology.model.hardware import Node, Pod
from topology.model.terms import Taint

PREFER_NO_SCHEDULE = "PreferNoSchedule"
MAX_NODE_SCORE = 100


def prefer_taints(nodes: Iterable[Node]) -> dict[str, tuple[Taint, ...]]:
    """The PreferNoSchedule taints of the nodes that carry some, by node name."""
    found = {}
    for node in nodes:
        taints = tuple(t for t in node.taints if t.effect == PREFER_NO_SCHEDULE)
        if taints:
            found[node.name] = taints
    return found


def intolerable(pod: Pod, taints: Iterable[Taint]) -> int:
    """``countIntolerableTaintsPreferNoSchedule``: the taints no toleration of the pod
    whose effect is empty or PreferNoSchedule tolerates."""
    tolerations = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(1 for taint in taints if not any(t.tolerates(taint) for t in tolerations))


def normalized(counts: Mapping[str, int], feasible: Iterable[str]) -> dict[str, int]:
    """``DefaultNormalizeScore(100, reverse=true)`` of the counts over the feasible nodes."""
    names = list(feasible)
    top = max((counts.get(n, 0) for n in names), default=0)
    if top == 0:
        return dict.fromkeys(names, MAX_NODE_SCORE)
    return {n: MAX_NODE_SCORE - MAX_NODE_SCORE * counts.get(n, 0) // top for n in names}
