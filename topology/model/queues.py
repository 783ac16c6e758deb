"""Queues that admit work against a quota before the scheduler sees it (Kueue, Volcano,
KAI): ``QuotaQueue``, re-exported by ``topology.model.hardware`` (the one way in to the
model). Pure: no Django, no I/O; imports no sibling module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class QuotaQueue:
    """A queue that admits work against a quota before the scheduler sees it.

    ``name`` is the reference pods and gangs carry in ``queue`` (e.g.
    ``ClusterQueue/cq``, ``VolcanoQueue/q``, ``KaiQueue/q``); amounts are in the
    pod's base units (cpu milli, memory bytes, whole GPUs / extended units).
    ``limit`` is what may be admitted in total without borrowing (Kueue
    nominalQuota, Volcano capability, KAI limit); ``borrowing_limit`` None means
    unbounded borrowing from the cohort (Kueue), 0 none.
    """

    name: str
    limit: Mapping[str, int]
    cohort: str | None = None
    borrowing_limit: Mapping[str, int] | None = None
    local_queues: tuple[str, ...] = ()  # "namespace/name" of the LocalQueues pointing here
    hides_pending_pods: bool = False  # Kueue: a job is suspended (pods gated) until admitted
    # Kueue: the AdmissionCheck of controller kueue.x-k8s.io/provisioning-request this
    # ClusterQueue runs; Kueue then creates the ProvisioningRequest of each admitted
    # workload itself (None: no such check)
    provisioning_check: str | None = None
    # that check's ProvisioningRequestConfig spec.provisioningClassName ("" unread):
    # check-capacity never scales up, best-effort-atomic-scale-up does
    provisioning_class: str = ""
    # Kueue: each ResourceFlavor's nominalQuota, when a resource group offers several
    # flavors (a pod set draws on its own flavor's quota only, Pod.quota_flavor)
    flavor_limits: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # Kueue lendingLimit (KEP-1224): per resource, the quota the queue never lends its
    # cohort (nominalQuota - lendingLimit, at least 0; absent: lends all), summed over
    # flavors and per flavor; and each flavor's own borrowingLimit (absent: unbounded)
    guaranteed: Mapping[str, int] = field(default_factory=dict)
    flavor_guaranteed: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    flavor_borrowing: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # spec.flavorFungibility.whenCanBorrow: Borrow (MayStopSearch in v1beta2, the
    # default) takes the first flavor that fits by borrowing; TryNextFlavor looks on
    # for one that fits without
    when_can_borrow: str = "Borrow"
