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
from recommender.engine.autoscaler.nominated import of_outcomes
from recommender.engine.autoscaler.plan import JOINT, NAIVE, ScaleUpPlan
from recommender.engine.autoscaler.profiles import DEFAULT_PROFILE, profile_named
from recommender.engine.autoscaler.template import with_member_capacity
from recommender.engine.scheduler.placement import WorkloadOutcome
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Cluster
from topology.model.money import DEFAULT_CURRENCY


def scale_up(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    mode: str,
    at: datetime,
    policy: str = "default",
    autoscaler: str = DEFAULT_PROFILE,
    scheduled: Sequence[WorkloadOutcome] | None = None,
    ca_settings: CaSettings | None = None,
    outcome_range: bool = True,
    currency: str = DEFAULT_CURRENCY,
) -> ScaleUpPlan:
    """What ``mode`` would add for ``pending``; never mutates ``state``.

    ``autoscaler``: the naive mode's profile (``profiles``); ``scheduled``: the
    scheduler pass's outcomes on ``state`` (``placement.place`` with the same policy
    and time), when the caller ran it: the naive profile takes the workloads it places
    by preemption as nominated (``nominated``; None: it runs that pass itself), and the
    joint plan follows it while nothing is added (``JointPlanner.following``);
    ``ca_settings``: the cluster-autoscaler flags the naive profile runs with (None:
    upstream's defaults); ``outcome_range``: False leaves the naive plan's other
    outcomes out (``profiles.naive_range`` works them out apart); ``currency``: the
    joint plan's reasons' money (the naive plan's notes name none). Both modes judge a
    group's new node by the same capacity, its ready member's where it has one
    (``template.with_member_capacity``)."""
    cluster = with_member_capacity(cluster)
    if mode == NAIVE:
        entry = profile_named(autoscaler)
        nominated = None if scheduled is None else of_outcomes(scheduled)
        return entry(
            cluster,
            pending,
            state=state,
            at=at,
            policy=policy,
            nominated=nominated,
            ca_settings=ca_settings,
            outcome_range=outcome_range,
        )
    if mode == JOINT:
        planner = JointPlanner(cluster, state.copy(), at, policy, currency=currency)
        return planner.plan(pending, scheduled)
    raise ValueError(f"unknown scale-up mode {mode!r}")
