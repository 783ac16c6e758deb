"""What a pod template needs to land on a reservation's nodes: the ``nodeSelector``
that picks them and the tolerations of their taints the pods lack.

One function for every action that sends pods to a reservation: a reservation card's
owner fields (``recommender.actions.reservation``) and a reconciliation's owner patch
(``recommender.engine.moves.owners``). A taint with effect ``PreferNoSchedule`` only
scores (``TaintToleration`` Filter skips it): never asked for.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from topology.model.hardware import Pod, Taint, Toleration


def pod_template_fields(
    selector: Mapping[str, str], taints: Iterable[Taint], pods: Sequence[Pod]
) -> dict[str, Any]:
    """``{"nodeSelector": ..., "tolerations": [...]}`` as a pod template's spec takes
    them, each only when not empty: ``{}`` when the pods need nothing."""
    spec: dict[str, Any] = {}
    if selector:
        spec["nodeSelector"] = dict(selector)
    tolerations = missing_tolerations(taints, pods)
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


def missing_tolerations(taints: Iterable[Taint], pods: Sequence[Pod]) -> list[dict[str, str]]:
    """The NoSchedule/NoExecute taints some pod does not tolerate (all of them when no
    pod is given), as tolerations."""
    missing = []
    for taint in taints:
        if taint.effect == "PreferNoSchedule":
            continue
        if pods and all(any(t.tolerates(taint) for t in p.tolerations) for p in pods):
            continue
        missing.append(toleration_json(Toleration(taint.key, "Equal", taint.value, taint.effect)))
    return missing


def toleration_json(toleration: Toleration) -> dict[str, str]:
    fields = (
        ("key", toleration.key),
        ("operator", "Equal" if toleration.value else "Exists"),
        ("value", toleration.value),
        ("effect", toleration.effect),
    )
    return {k: v for k, v in fields if v}
