"""Which modelled autoscaler is "naive": the registry of autoscaler profiles.

A profile is a name and an entry with ``cluster_autoscaler.naive_scale_up``'s
signature (cluster, pending, *, state, at, policy, nominated, ca_settings)
returning a ``ScaleUpPlan``; ``ca_settings`` (``caflags.parse_flags``: the
cluster's real command line) replaces the defaults of a cluster-autoscaler profile.

- ``cluster-autoscaler`` (= ``cluster-autoscaler:1.36``, the newest modelled):
  ``cluster_autoscaler.NaivePlanner`` with upstream's default flags
  (``--expander=least-waste``, ``--expendable-pods-priority-cutoff=-10``, no
  cluster-wide limits). DRA claims are checked on nodes and templates with the
  scheduler's logic, partitionable devices included (DRAPartitionableDevices beta
  and on in 1.36; kubernetes/autoscaler#8559).
- ``cluster-autoscaler:1.35``: the same, but its vendored scheduler's
  DRAPartitionableDevices gate is alpha and off by default, so a device that
  consumes counters (KEP-4815 partition) is never allocated (the structured
  allocator's ``allocateDevice``): a pod only partitions can serve gets nothing.
- ``cluster-autoscaler:1.34``: the same, but ``--enable-dynamic-resource-allocation``
  defaults to false, and with kubernetes/autoscaler#8598 ("Fix DRA enablement
  logic") the DynamicResources plugin is then off in its framework: claims are not
  checked at all (pods are seen without them). Which 1.34 patch releases carry
  #8598 is not established; builds without it panic on pending pods with
  ResourceClaims, which each such workload's reasons say.

Pods without claims behave alike under the three: the other modelled mechanisms
(default expander least-waste since 1.33, kubernetes/autoscaler#7631; estimator;
limits; upcoming nodes; ProvisioningRequests) show no difference between them.
See docs/FIDELITY.md.
- ``karpenter``: ``karpenter.karpenter_scale_up`` (kubernetes-sigs/karpenter's
  provisioner: NodePools by weight, cheapest instance type, no gangs).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from recommender.engine.autoscaler.cluster_autoscaler import naive_outcome_range, naive_scale_up
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.karpenter import karpenter_scale_up
from recommender.engine.autoscaler.nominated import Nominated
from recommender.engine.autoscaler.outcome_range import OtherOutcome
from recommender.engine.autoscaler.plan import ScaleUpPlan
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Cluster

CLUSTER_AUTOSCALER = "cluster-autoscaler"
KARPENTER = "karpenter"
DEFAULT_PROFILE = CLUSTER_AUTOSCALER


class NaiveEntry(Protocol):
    def __call__(
        self,
        cluster: Cluster,
        pending: Sequence[Workload],
        *,
        state: ClusterState,
        at: datetime,
        policy: str = ...,
        nominated: Nominated | None = ...,
        ca_settings: CaSettings | None = ...,
        outcome_range: bool = ...,
    ) -> ScaleUpPlan: ...


def _cluster_autoscaler(version: str) -> NaiveEntry:

    def entry(
        cluster: Cluster,
        pending: Sequence[Workload],
        *,
        state: ClusterState,
        at: datetime,
        policy: str = "default",
        nominated: Nominated | None = None,
        ca_settings: CaSettings | None = None,
        outcome_range: bool = True,
    ) -> ScaleUpPlan:
        return naive_scale_up(
            ca_managed(cluster),
            pending,
            state=state,
            at=at,
            policy=policy,
            settings=_ca_settings(version, ca_settings),
            nominated=nominated,
            outcome_range=outcome_range,
        )

    return entry


def _ca_settings(version: str, ca_settings: CaSettings | None) -> CaSettings:
    """The flags a cluster-autoscaler profile of ``version`` runs with."""
    return replace(ca_settings or CaSettings(), version=version)


def naive_range(
    name: str,
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    at: datetime,
    policy: str = "default",
    nominated: Nominated | None = None,
    ca_settings: CaSettings | None = None,
) -> tuple[OtherOutcome, ...]:
    """The other outcomes the profile's entry leaves out with ``outcome_range=False``
    (the same arguments): cluster-autoscaler's (``cluster_autoscaler.
    naive_outcome_range``); none for a profile without them (Karpenter)."""
    profile_named(name)
    if not uses_ca_flags(name):
        return ()
    version = name.partition(":")[2] or CaSettings().version  # as the registry says
    return naive_outcome_range(
        ca_managed(cluster),
        pending,
        state=state,
        at=at,
        policy=policy,
        settings=_ca_settings(version, ca_settings),
        nominated=nominated,
    )


def ca_managed(cluster: Cluster) -> Cluster:
    """The cluster as cluster-autoscaler sees it: without the groups of Karpenter
    NodePools. CA's node groups come from its cloud provider (``cloudprovider.
    CloudProvider.NodeGroups``: ASGs, MIGs, VMSSs, ...); a NodePool is none of them,
    so CA never scales one up (its nodes are nodes of no node group to CA)."""
    kept = tuple(
        g for g in cluster.node_groups if g.autoscaler is None or g.autoscaler.kind != KARPENTER
    )
    if len(kept) == len(cluster.node_groups):
        return cluster
    return replace(cluster, node_groups=kept)


def _karpenter(
    cluster: Cluster,
    pending: Sequence[Workload],
    *,
    state: ClusterState,
    at: datetime,
    policy: str = "default",
    nominated: Nominated | None = None,
    ca_settings: CaSettings | None = None,
    outcome_range: bool = True,
) -> ScaleUpPlan:
    """Karpenter reads no cluster-autoscaler flags (``uses_ca_flags`` says so) and
    works out no other outcomes."""
    return karpenter_scale_up(
        cluster, pending, state=state, at=at, policy=policy, nominated=nominated
    )


def uses_ca_flags(name: str) -> bool:
    """Whether the profile is a cluster-autoscaler, which cluster-autoscaler flags set."""
    return name.partition(":")[0] == CLUSTER_AUTOSCALER


def _registry() -> dict[str, NaiveEntry]:
    return {
        CLUSTER_AUTOSCALER: _cluster_autoscaler("1.36"),
        f"{CLUSTER_AUTOSCALER}:1.34": _cluster_autoscaler("1.34"),
        f"{CLUSTER_AUTOSCALER}:1.35": _cluster_autoscaler("1.35"),
        f"{CLUSTER_AUTOSCALER}:1.36": _cluster_autoscaler("1.36"),
        KARPENTER: _karpenter,
    }


PROFILES = _registry()


def profile_names() -> tuple[str, ...]:
    return tuple(sorted(PROFILES))


def profile_named(name: str) -> NaiveEntry:
    """The profile's entry; a ValueError naming the valid profiles otherwise."""
    entry = PROFILES.get(name)
    if entry is None:
        valid = ", ".join(profile_names())
        raise ValueError(f"unknown autoscaler profile {name!r}; valid profiles: {valid}")
    return entry
