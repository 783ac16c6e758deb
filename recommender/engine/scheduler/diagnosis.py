"""Why a workload is not placed, in the words kube-scheduler would use.

The node part is an aggregate: every node contributes its first failing
filter's reason, counted and sorted like ``0/12 nodes are available: 8
Insufficient nvidia.com/gpu, 4 node(s) didn't match GPU model V100M32.``.
Gangs add one sentence on the group ("needs 16 GPUs in one block; the best
block has 12 free"), which no per-pod message can say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Diagnosis:
    summary: str
    node_reasons: Mapping[str, int] = field(default_factory=dict)
    gang_reason: str | None = None
    unsupported: tuple[str, ...] = ()


def nodes_summary(total_nodes: int, reasons: Mapping[str, int]) -> str:
    """``0/N nodes are available: <count> <reason>, ….`` — biggest count first."""
    ordered = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    parts = ", ".join(f"{count} {reason}" for reason, count in ordered)
    head = f"0/{total_nodes} nodes are available"
    return f"{head}: {parts}." if parts else f"{head}."


def node_diagnosis(
    total_nodes: int, reasons: Iterable[str], gang_reason: str | None = None
) -> Diagnosis:
    counted = dict(Counter(reasons))
    summary = nodes_summary(total_nodes, counted)
    if gang_reason:
        summary = f"{summary} {gang_reason[0].upper()}{gang_reason[1:]}."
    return Diagnosis(summary=summary, node_reasons=counted, gang_reason=gang_reason)


def unsupported_diagnosis(reasons: tuple[str, ...]) -> Diagnosis:
    """A pod we cannot model is never silently matched: it is reported as such."""
    return Diagnosis(summary=f"unsupported: {'; '.join(reasons)}", unsupported=reasons)


def block_reason(needed_gpus: float, level_name: str, best_free_gpus: float) -> str:
    return (
        f"needs {_gpus(needed_gpus)} GPUs in one {level_name}; "
        f"the best {level_name} has {_gpus(best_free_gpus)} free"
    )


def members_reason(placed: int, needed: int) -> str:
    return f"only {placed} of {needed} members fit"


def _gpus(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
