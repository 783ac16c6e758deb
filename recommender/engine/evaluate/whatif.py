"""The fragmentation what-if: how many more pending GPUs would FGD place?

The evaluation's scheduler pass runs the cluster's scoring profile (say
``kube-default``, which spreads pods and scores no GPU). When that profile is not
``fgd``, the same pass runs once more with ``fgd`` (Fragmentation Gradient
Descent, ``scheduler/fgd.py``) on the same cluster, the same pending workloads in
the same order: the difference in GPUs placed is what a fragmentation-aware
profile would win (or, negative, lose) today, without buying anything. The pass
is skipped only where its answer is known without it (``_lone_pods_only``: lone
pods of which the chosen pass placed none), never on a time or size bound.

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recommender.engine.scheduler.placement import PlacementOptions, PlacementResult, place
from recommender.engine.scheduler.profiles import FGD
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import WHOLE_GPU_MILLI, Cluster


@dataclass(frozen=True, slots=True)
class WhatIf:
    profile: str
    extra_gpu_milli: int  # GPUs placed under ``profile`` minus under the chosen one
    workloads: tuple[str, ...]  # placed under ``profile`` only
    not_placed: tuple[str, ...]  # placed under the chosen profile only

    def to_json(self) -> dict[str, Any]:
        gpus = self.extra_gpu_milli / WHOLE_GPU_MILLI
        return {
            "profile": self.profile,
            "extraGpusPlaced": int(gpus) if gpus.is_integer() else round(gpus, 3),
            "workloads": list(self.workloads),
            "notPlaced": list(self.not_placed),
        }


def placed_gpu_milli(result: PlacementResult) -> dict[str, int]:
    """GPU milli of each workload the pass placed."""
    return {o.workload: sum(b.gpu_milli for b in o.bindings) for o in result.outcomes if o.placed}


def fragmentation_what_if(
    cluster: Cluster,
    pending: Sequence[Workload],
    state: ClusterState,
    chosen: PlacementResult,
    options: PlacementOptions,
    profile: str,
) -> WhatIf | None:
    """``None`` when the chosen profile is FGD already; else the FGD pass's difference."""
    if profile == FGD:
        return None
    ours = placed_gpu_milli(chosen)
    if not ours and _lone_pods_only(pending) and options.preemption:
        return WhatIf(profile=FGD, extra_gpu_milli=0, workloads=(), not_placed=())
    fgd_options = PlacementOptions(
        policy=FGD,
        seed=options.seed,
        reservation_grants=options.reservation_grants,
        at=options.at,
        workload_mix=options.workload_mix,
        partitionable_devices=options.partitionable_devices,
    )
    theirs = placed_gpu_milli(
        place(cluster, pending, state=state, options=fgd_options, diagnose=False)
    )
    return WhatIf(
        profile=FGD,
        extra_gpu_milli=sum(theirs.values()) - sum(ours.values()),
        workloads=tuple(sorted(set(theirs) - set(ours))),
        not_placed=tuple(sorted(set(ours) - set(theirs))),
    )


def _lone_pods_only(pending: Sequence[Workload]) -> bool:
    """True when every workload is one pod: then a pass that placed none of them (and
    tried preemption) shows FGD would place none either, without running it.

    Whether a lone pod fits a state is the filters' verdict and DefaultPreemption's
    (victims are chosen by priority and filters, never by score); a score only picks
    among the nodes that fit. A pass that places nothing never changes its state, so
    every workload met the snapshot itself and found no node: the FGD pass, in the
    same order from the same snapshot, meets the same states and finds none too.
    Members of a gang or a multi-pod workload are not covered: where the first one
    lands (a score's choice) decides whether the next fits. Pending pods that ask for
    no GPU are not covered either: FGD scores the cpu they take too (a typical pod's
    cpu no longer fitting turns the node's idle GPUs into fragments), so it packs
    them where the chosen profile may spread them, and what fits later differs."""
    return all(len(w.pods) == 1 for w in pending)
