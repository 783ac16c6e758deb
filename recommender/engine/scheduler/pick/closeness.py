"""How gang closeness enters a policy's node score (``closeness_weight``): what
lets the picker score gang members off the memoised scores, closeness added per
node (``picker.NodePicker._closest_best``)."""

from __future__ import annotations

from ..scores import Policy


def closeness_weight(policy: Policy) -> float | None:
    """How gang closeness enters the policy's node score, for scoring members off the
    memo: 0.0 when it does not (no topology rule), its weight when it is the last,
    positive term (the sum is then the memoised score plus weight × closeness, to
    the bit), None when members must be scored node by node.

    Closeness is one value per node, equal for every device option there, so a
    policy that rates device options with its own score (FGD: ``device_rule`` None)
    picks the same option with or without it: the memo holds for it too."""
    names = [name for name, _ in policy.weights]
    if "topology" not in names:
        return 0.0
    weight = policy.weights[-1][1]
    if names.index("topology") != len(names) - 1 or weight <= 0:
        return None
    return weight
