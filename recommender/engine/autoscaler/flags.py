"""The cluster-autoscaler flags the model reads, with upstream's defaults
(``config/flags/flags.go``).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from recommender.engine.autoscaler.expander import DEFAULT_EXPANDERS

# --expendable-pods-priority-cutoff default
EXPENDABLE_PODS_PRIORITY_CUTOFF = -10
# RunOnce loops the model runs at most (upstream loops every --scan-interval for ever)
LOOP_LIMIT = 50


@dataclass(frozen=True, slots=True)
class CaSettings:
    """The cluster-autoscaler flags the model reads (defaults as upstream's flags.go)."""

    version: str = "1.36"
    expanders: tuple[str, ...] = DEFAULT_EXPANDERS  # --expander=a,b
    max_nodes_total: int = 0  # --max-nodes-total (0: no limit)
    # --cores-total / --memory-total maxima (0: no limit; upstream's defaults, 320000
    # cores and 6400000 GiB, bind no cluster the model sees) and --gpu-total per GPU type
    max_cores_total: int = 0
    max_memory_total_bytes: int = 0
    max_gpus_total: Mapping[str, int] = field(default_factory=dict)
    balance_similar_node_groups: bool = False  # --balance-similar-node-groups
    balancing_ignore_labels: tuple[str, ...] = ()  # --balancing-ignore-label
    priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # priority expander
    seed: int = 0  # the random expander's seed: the same evaluation, the same choice
    loops: int = LOOP_LIMIT
