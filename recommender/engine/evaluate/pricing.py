"""What is priced and what is not: "price unknown", never 0/h.

A node group whose price is not known (``NodeGroup.price_known`` False: its instance
type is not in the price table and nobody set ``pricePerNodeHour``) counts 0 in the
plans' arithmetic, so a total over it is only a lower bound. Every figure that
includes such nodes says so: a card of an unpriced group reads "price unknown", and a
total names the nodes it leaves out ("$58.77/h + price unknown for 2 x a3-pool").
Nodes paid by a reservation cost nothing new and are priced (0 is their price).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from topology.model.hardware import NodeGroup
from topology.model.money import format_per_hour

PRICE_UNKNOWN = "price unknown"


def unpriced_groups(node_groups: Iterable[NodeGroup]) -> frozenset[str]:
    return frozenset(g.name for g in node_groups if not g.price_known)


def unpriced_nodes(
    additions: Iterable[tuple[str, int, str | None]], unpriced: frozenset[str]
) -> dict[str, int]:
    """Nodes per unpriced group among ``(group, count, reservation)`` additions."""
    counts: dict[str, int] = {}
    for group, count, reservation in additions:
        if group in unpriced and reservation is None:
            counts[group] = counts.get(group, 0) + count
    return dict(sorted(counts.items()))


def total_text(amount: float, unpriced: Mapping[str, int], currency: str) -> str:
    """``$58.77/h``, or ``$58.77/h + price unknown for 2 x a3-pool`` when some nodes of
    the total have no price (``topology.model.money``'s format)."""
    text = format_per_hour(amount, currency)
    if not unpriced:
        return text
    nodes = ", ".join(f"{count} x {group}" for group, count in unpriced.items())
    return f"{text} + {PRICE_UNKNOWN} for {nodes}"
