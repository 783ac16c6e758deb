"""One pod: filter the nodes, score the feasible (node, devices), pick the best.

::

    pod ──► static rules (kept per node) ──► resource and device rules
        ──► score per device option (policy) ──► best score; ties: first or seeded pick

For a pod whose verdict depends only on the node's template and free
resources (``memo.memoisable``), kube-default and FGD score every node at once
as arrays (``vector``); other policies' scores are memoised per (pod shape,
node key) and kept per node in the state's score index. Either way a pick
costs the nodes that changed, not every node's rules. Gang closeness is added
on top of the memoised score (see ``closeness_weight``). Also the per-node
failure reasons a diagnosis counts.

Modules, each importing only those above it::

    closeness  how gang closeness enters a policy's score (``closeness_weight``)
    base       ``PickerBase``: the state, the caches it reads through, the node
               accessors (pod shape, memo key, static rules, filter context)
    scoring    ``NodeScoring``: score columns, array scores (FGD's keyed ones),
               memoised and full scores of a node, its device options
    reasons    ``NodeReasons`` (a ``NodeScoring``: it reads the same node arrays): why
               not, each node's first failing filter
    picker     ``NodePicker``: the best node, ties, taints and preferred scores,
               gang closeness; its ``Choice``
"""

from .closeness import closeness_weight
from .picker import Choice, NodePicker, Scores

__all__ = ["Choice", "NodePicker", "Scores", "closeness_weight"]
