"""One pod: filter the nodes, score the feasible (node, devices), pick the best
(``picker.NodePicker``)."""

from .picker import Choice, NodePicker, Scores, closeness_weight

__all__ = ["Choice", "NodePicker", "Scores", "closeness_weight"]
