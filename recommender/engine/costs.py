"""Money per hour: what additions cost and what part of them is wasted.

All figures are in the input's currency per hour. A node is billed whole, so
the waste of a node that hosts some pods is its price times the fraction of
its GPUs nobody uses; a node that hosts no pod at all is wasted whole (its
CPU-only price included), which is what an operator pays for a mistake.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

MONEY_DECIMALS = 6  # rounding of every published figure: byte-identical JSON across runs


def round_money(amount: float) -> float:
    """One rounding rule for every published money figure (stable across float noise)."""
    return round(amount + 0.0, MONEY_DECIMALS)


def nodes_cost_per_hour(count: int, price_per_node_hour: float) -> float:
    """What ``count`` new nodes of one group cost per hour."""
    return round_money(count * price_per_node_hour)


def stranded_cost_per_hour(
    price_per_node_hour: float, gpu_count: int, unused_gpus: int, hosts_pods: bool
) -> float:
    """The wasted part of one added node's price.

    >>> stranded_cost_per_hour(80.0, 8, 2, True)   # 80 × 2/8
    20.0
    >>> stranded_cost_per_hour(80.0, 8, 8, False)  # nothing landed: all of it
    80.0
    """
    if not hosts_pods:
        return round_money(price_per_node_hour)
    if gpu_count <= 0:
        return 0.0
    return round_money(price_per_node_hour * unused_gpus / gpu_count)


def reserved_gpus_cost_per_hour(idle_gpus: int, price_per_gpu_hour: float) -> float:
    """Idle reserved GPUs × the reservation's GPU-hour price."""
    return round_money(idle_gpus * price_per_gpu_hour)
