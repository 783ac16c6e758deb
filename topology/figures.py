"""The cluster's GPU figures, counted once by the glossary's definitions.

Every page that shows free / allocated / idle reserved GPUs of a whole cluster reads them
from here, so the overview, the topology page and the API cannot disagree:

    allocated      = evaluation's gpusAllocated  (a pod holds any share of the GPU)
    idle reserved  = evaluation's gpusIdleReserved
                   = on the heatmap (reserved cells no pod holds)
                   + paid but not started (idleReservations' unprovisionedGpus)
    free           = heatmap cells with no reservation and no pod
    unknown        = heatmap cells whose allocation is unknown

The topology bars count the same cells (``topology.charts.DomainTally``); the GPUs of
reserved nodes nobody has started have no cell, and the page says how many. The heatmap
payload carries them too (``figures_json``), so the page's totals line follows the bars
on a live update.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from topology.charts import DomainTally


@dataclass(frozen=True)
class ClusterGpuFigures:
    gpus: int
    allocated: int
    idle_reserved: int
    idle_reserved_unprovisioned: int
    free: int
    unknown: int

    @property
    def idle_reserved_on_heatmap(self) -> int:
        return self.idle_reserved - self.idle_reserved_unprovisioned


def cluster_gpu_figures(result: Mapping[str, Any]) -> ClusterGpuFigures:
    """The figures of one stored evaluation result (its ``cluster`` block and heatmap)."""
    cluster = result.get("cluster") or {}
    tally = DomainTally()
    for cell in result.get("heatmap") or ():
        tally.add(cell)
    return ClusterGpuFigures(
        gpus=int(cluster.get("gpus") or 0),
        allocated=int(cluster.get("gpusAllocated") or 0),
        idle_reserved=int(cluster.get("gpusIdleReserved") or 0),
        idle_reserved_unprovisioned=sum(
            int(item.get("unprovisionedGpus") or 0) for item in result.get("idleReservations") or ()
        ),
        free=tally.free_gpus,
        unknown=tally.unknown_gpus,
    )


def figures_json(result: Mapping[str, Any]) -> dict[str, int]:
    """The figures as the heatmap payload's ``clusterFigures`` (``static/js/topology.js``)."""
    figures = cluster_gpu_figures(result)
    return {**asdict(figures), "idle_reserved_on_heatmap": figures.idle_reserved_on_heatmap}
