"""``scale_up``: what one modelled autoscaler would add for the pending workloads.

``naive`` is the cluster's real autoscaler as its code does it (the
profile chosen in ``profiles``, ``cluster_autoscaler`` by default); ``joint``
is ours (``joint``). Both return a ``plan.ScaleUpPlan`` and never mutate the
state they are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.joint import JointPlanner
from recommender.engine.autoscaler.plan import JOINT, NAIVE, ScaleUpPlan
from recommender.engine.autoscaler.profiles import DEFAULT_PROFILE, profile_named
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.hardware import Cluster


def scale_up(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    mode: str,
    at: datetime,
    policy: str = "default",
    autoscaler: str = DEFAULT_PROFILE,
    ca_settings: CaSettings | None = None,
) -> ScaleUpPlan:
    """What ``mode`` would add for ``pending``; never mutates ``state``.

    ``autoscaler``: the naive mode's profile (``profiles``); ``ca_settings``: the
    cluster-autoscaler flags it runs with (None: upstream's defaults)."""
    if mode == NAIVE:
        entry = profile_named(autoscaler)
        return entry(cluster, pending, state=state, at=at, policy=policy, ca_settings=ca_settings)
    if mode == JOINT:
        return JointPlanner(cluster, state.copy(), at, policy).plan(pending)
    raise ValueError(f"unknown scale-up mode {mode!r}")
