"""Queues and quotas: work that waits for quota, not for nodes.

Pure: no Django, no I/O. A workload whose queue has no free quota is not
scheduled whatever the cluster holds; buying nodes for it buys nothing
(kubernetes/autoscaler#9828, NVIDIA/KAI-Scheduler#1615, volcano-sh/volcano#4710).

Which queues exist and which queue a pod is in: ``topology.kube.kueue.queues``.

``quota_waiting`` walks the pending workloads in scheduling order, like the
queue managers admit them: used = requests of the bound pods of the queue plus
what earlier pending workloads of the queue were admitted; a workload whose
request exceeds ``limit + borrowable - used`` for some resource waits::

    waiting for quota in queue ClusterQueue/cq (needs 8 nvidia.com/gpu, free 0)

Borrowing (Kueue cohorts, ``_CohortTree``): as kueue ``pkg/cache/resource_node.go``
``available``: each ClusterQueue lends its cohort its nominalQuota up to its
``lendingLimit`` (all when unset) and borrows up to its ``borrowingLimit``
(unbounded when unset); usage past a queue's unlent quota counts against the
cohort. Cohort objects (hierarchical cohorts, KEP-79) add their own quota and lend
and borrow from their parent cohort the same way.

Volcano PodGroups still Pending with ``spec.minResources`` pass Volcano's enqueue
action first (``VolcanoEnqueue``): the queue's capability and the cluster's size.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Protocol

from topology.kube.kueue.queues import (
    COHORT,
    NON_PREEMPTIBLE_PRIORITY,
    TRY_NEXT_FLAVOR,
    pod_queue,
)
from topology.model.hardware import GPU_RESOURCE, Cluster, FlavorOption, Gang, Pod, QuotaQueue

QUOTA_WAIT_PREFIX = "waiting for quota in queue "  # how every quota wait's reason begins
VOLCANO_QUEUE = "VolcanoQueue/"
OVERCOMMIT_FACTOR = Fraction(6, 5)  # volcano overcommit.go defaultOverCommitFactor 1.2


class _Workload(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def pods(self) -> tuple[Pod, ...]: ...
    @property
    def priority(self) -> int: ...


@dataclass(frozen=True, slots=True)
class QuotaWait:
    """Why a workload waits, and whether the cluster autoscaler sees its pods at all."""

    queue: str
    reason: str
    autoscaler_sees_pods: bool
    # Kueue partial admission: how many of the workload's pods it admits instead (the
    # rest are never created); None: the workload waits whole
    admitted: int | None = None
    # flavorFungibility: the later flavor Kueue admits the pod set on instead (its
    # pods' nodeSelector and tolerations); None: the first, or it waits
    flavor: FlavorOption | None = None


@dataclass(frozen=True, slots=True)
class _Part:
    """The first pods of a workload, as Kueue admits a reduced PodSet."""

    key: str
    pods: tuple[Pod, ...]
    priority: int


def requests_of(pods: Iterable[Pod]) -> Counter[str]:
    total: Counter[str] = Counter()
    for pod in pods:
        total["cpu"] += pod.requests.cpu_milli
        total["memory"] += pod.requests.memory_bytes
        total[GPU_RESOURCE] += pod.gpu_count
        total.update(pod.requests.extended)
    return Counter({k: v for k, v in total.items() if v})


# --- who waits -------------------------------------------------------------------------------


def quota_waiting(cluster: Cluster, pending: Sequence[_Workload]) -> dict[str, QuotaWait]:
    """Per pending workload key (in scheduling order) that cannot be admitted: why."""
    queues = {q.name: q for q in (*cluster.queues, *cluster.cohorts)}
    gangs = {g.key: g for g in cluster.gangs}
    if not queues and all(g.min_resources is None for g in gangs.values()):
        return {}
    local_queues = {lq: q.name for q in cluster.queues for lq in q.local_queues}
    used = admitted_usage(cluster)
    enqueue = VolcanoEnqueue.of(cluster, used)
    waiting = {}
    for workload in pending:
        queue = next(
            (q for p in workload.pods if (q := pod_queue(p, gangs, local_queues)) is not None),
            None,
        )
        if queue is None:
            continue
        gang = gangs.get(workload.key)
        if queue.startswith(VOLCANO_QUEUE) and gang is not None:
            held = enqueue.refusal(gang, queues.get(queue), workload.pods)
            if held is not None:
                waiting[workload.key] = held
                continue
        loop = _cohort_cycle(queues, queue)
        if loop:
            reason = (
                f"{QUOTA_WAIT_PREFIX}{queue} (its cohorts' parents make a cycle, "
                f"{' -> '.join(loop)}: Kueue admits nothing in that tree)"
            )
            waiting[workload.key] = QuotaWait(queue, reason, autoscaler_sees_pods=False)
            continue
        wait = _admit(queues, used, queue, workload)
        least = gangs[workload.key].min_count if workload.key in gangs else None
        if wait is not None and wait.flavor is None and least is not None:
            wait = _partially(queues, used, queue, workload, least, wait)
        if wait is not None:
            waiting[workload.key] = wait
    return waiting


def _partially(
    queues: Mapping[str, QuotaQueue],
    used: dict[str, Counter[str]],
    queue: str,
    workload: _Workload,
    least: int,
    wait: QuotaWait,
) -> QuotaWait:
    """Kueue partial admission (kueue ``pkg/scheduler/flavorassigner/podset_reducer.go``
    ``Reduce``, one PodSet): the largest count between ``minCount`` and the full count
    whose quota fits, found by binary search; that many pods are admitted (and counted
    used), the rest never created. None fits: the workload waits whole."""
    total = len(workload.pods)
    low, high, best = least, total - 1, None
    while low <= high:
        middle = (low + high) // 2
        trial = {name: Counter(amounts) for name, amounts in used.items()}
        part = _Part(workload.key, workload.pods[:middle], workload.priority)
        result = _admit(queues, trial, queue, part)
        if result is None or result.flavor is not None:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    if best is None:
        return wait
    _admit(queues, used, queue, _Part(workload.key, workload.pods[:best], workload.priority))
    reason = (
        f"Kueue admits {best} of {total} pods (partial admission, minCount {least}): "
        f"all {total} do not fit, {wait.reason}"
    )
    return replace(wait, reason=reason, admitted=best)


def admitted_usage(cluster: Cluster) -> dict[str, Counter[str]]:
    """Per queue: the requests of its bound pods, what it has admitted and still runs
    (``<queue>#quota``: the same, for KAI's non-preemptible share; ``_at(queue, flavor)``:
    per Kueue ResourceFlavor, for pods that drew on one). The queues page
    shows it against ``QuotaQueue.limit``; ``quota_waiting`` starts from it."""
    gangs = {g.key: g for g in cluster.gangs}
    local_queues = {lq: q.name for q in cluster.queues for lq in q.local_queues}
    used: dict[str, Counter[str]] = {}
    for pod in cluster.bound_pods():
        queue = pod_queue(pod, gangs, local_queues)
        if queue is not None:
            used.setdefault(queue, Counter()).update(requests_of([pod]))
            used.setdefault(f"{queue}#quota", Counter()).update(requests_of([pod]))
            if pod.quota_flavor:
                used.setdefault(_at(queue, pod.quota_flavor), Counter()).update(requests_of([pod]))
    return used


def _admit(
    queues: Mapping[str, QuotaQueue],
    used: dict[str, Counter[str]],
    queue_name: str,
    workload: _Workload,
) -> QuotaWait | None:
    if queue_name.startswith("LocalQueue/"):
        if any(q.name.startswith("ClusterQueue/") for q in queues.values()):
            reason = f"waiting: LocalQueue {queue_name.removeprefix('LocalQueue/')} not found"
            return QuotaWait(queue_name, reason, autoscaler_sees_pods=False)
        return None  # no Kueue queue in the input at all: nothing to check against
    checked = [queue_name]
    if queue_name.startswith("KaiQueue/") and workload.priority >= NON_PREEMPTIBLE_PRIORITY:
        checked.append(f"{queue_name}#quota")
    need = requests_of(workload.pods)
    flavor = next((p.quota_flavor for p in workload.pods if p.quota_flavor), None)
    own = queues.get(queue_name)
    if flavor is not None and own is not None and flavor in own.flavor_limits:
        options = next((p.flavor_options for p in workload.pods if p.flavor_options), ())
        names = [o.name for o in options if o.name in own.flavor_limits] or [flavor]
        return _admit_fungible(queues, used, own, names, need, options)
    for name in checked:
        queue = queues.get(name)
        if queue is None:
            continue
        for resource, amount in sorted(need.items()):
            free = _free(queues, used, queue, resource)
            if free is not None and amount > free:
                shown = name.removesuffix("#quota")
                reason = (
                    f"{QUOTA_WAIT_PREFIX}{shown} (needs {amount_text(resource, amount)} "
                    f"{resource}, free {amount_text(resource, max(0, free))})"
                )
                return QuotaWait(shown, reason, autoscaler_sees_pods=not queue.hides_pending_pods)
    for name in checked:
        used.setdefault(name, Counter()).update(need)
    return None


def _at(queue: str, flavor: str) -> str:
    return f"{queue}@{flavor}"


def _admit_fungible(
    queues: Mapping[str, QuotaQueue],
    used: dict[str, Counter[str]],
    queue: QuotaQueue,
    names: list[str],
    need: Counter[str],
    options: tuple[FlavorOption, ...],
) -> QuotaWait | None:
    """Kueue admits a pod set against one flavor's quota (flavorassigner.go: quota is
    per flavor and resource, borrowing that flavor's unused quota in the cohort),
    trying the flavors it fits in the ClusterQueue's order (``findFlavorForPodSetResource``,
    ``shouldTryNextFlavor``): a flavor that fits without borrowing is taken; one that
    fits by borrowing is taken under whenCanBorrow Borrow, else kept while the next are
    tried; one that does not fit is passed (Kueue's preemption is not modelled: whenCanPreempt
    Preempt, which stops at a flavor where preempting would make room, is taken as
    TryNextFlavor). The pod set moved to another flavor than the first: a QuotaWait with
    ``flavor`` set and nothing to wait for."""
    best, refusals = None, []
    for name in names:
        short = _flavor_short(queues, used, queue, name, need)
        if short is not None:
            refusals.append(short)
            continue
        borrows = any(
            used.get(_at(queue.name, name), Counter())[resource] + amount
            > queue.flavor_limits[name].get(resource, 0)
            for resource, amount in need.items()
        )
        if not borrows or queue.when_can_borrow != TRY_NEXT_FLAVOR:
            best = name
            break
        best = best or name
    if best is None:
        reason = f"waiting for quota in queue {queue.name} " + "; ".join(refusals)
        return QuotaWait(queue.name, reason, autoscaler_sees_pods=False)
    used.setdefault(queue.name, Counter()).update(need)
    used.setdefault(_at(queue.name, best), Counter()).update(need)
    if best == names[0]:
        return None
    moved = next(o for o in options if o.name == best)
    reason = (
        f"Kueue admits it on flavor {best} ({'; '.join(refusals) or 'it needs no borrowing'}"
        f"; flavorFungibility whenCanBorrow {queue.when_can_borrow})"
    )
    return QuotaWait(queue.name, reason, autoscaler_sees_pods=False, flavor=moved)


def _flavor_short(
    queues: Mapping[str, QuotaQueue],
    used: dict[str, Counter[str]],
    queue: QuotaQueue,
    flavor: str,
    need: Counter[str],
) -> str | None:
    """What the flavor lacks for ``need`` ("flavor F (needs …, free …)"), None: it fits."""
    for resource, amount in sorted(need.items()):
        free = _flavor_free(queues, used, queue, flavor, resource)
        if amount > free:
            needs, left = amount_text(resource, amount), amount_text(resource, max(0, free))
            return f"flavor {flavor} (needs {needs} {resource}, free {left})"
    return None


def _flavor_free(
    queues: Mapping[str, QuotaQueue],
    used: dict[str, Counter[str]],
    queue: QuotaQueue,
    flavor: str,
    resource: str,
) -> int:
    if resource not in queue.flavor_limits[flavor]:
        return 0  # the flavor does not cover it
    return _CohortTree.of(queues, used, resource, flavor).available(queue.name)


def _free(
    queues: Mapping[str, QuotaQueue],
    used: dict[str, Counter[str]],
    queue: QuotaQueue,
    resource: str,
) -> int | None:
    """What the queue may still admit of ``resource``; None: the queue does not limit it."""
    if resource not in queue.limit:
        if queue.hides_pending_pods:  # Kueue: a resource the ClusterQueue does not cover
            return 0
        return None
    return _CohortTree.of(queues, used, resource, None).available(queue.name)


def _cohort_cycle(queues: Mapping[str, QuotaQueue], name: str) -> list[str]:
    """The cohorts of the cycle the queue's parent chain runs into (kueue
    ``pkg/cache`` ``updateCohortTreeResources``: ``ErrCohortHasCycle``, no snapshot of
    that tree, its ClusterQueues admit nothing); [] where the chain ends at a root."""
    chain: list[str] = []
    queue = queues.get(name)
    while queue is not None and queue.cohort:
        parent = f"{COHORT}{queue.cohort}"
        if parent in chain:
            return [*chain[chain.index(parent) :], parent]
        chain.append(parent)
        queue = queues.get(parent)
    return []


@dataclass(frozen=True, slots=True)
class _CohortTree:
    """Kueue's quota tree for one resource (of one flavor; None: summed over flavors):
    ClusterQueues under their cohort, cohorts under their parent (Cohort objects read,
    ``COHORT`` entries of ``queues``; a cohort only named by a queue has no quota and
    no parent). kueue ``pkg/cache/resource_node.go``:

    - a node keeps ``guaranteedQuota``: SubtreeQuota - lendingLimit (0 when unset);
    - a cohort's SubtreeQuota is its own nominalQuota plus each child's SubtreeQuota
      less what the child keeps, its usage each child's usage past what the child keeps
      (``updateCohortResourceNode``, ``accumulateFromChild``);
    - ``available``: a root has SubtreeQuota - usage; any other node its unused kept
      quota plus its parent's available, capped by its borrowingLimit past what it
      stores in the parent.

    A parent chain that loops (Kueue admits nothing in that tree, ``_cohort_cycle``,
    checked first) is cut where it comes back, so the walk ends."""

    queues: Mapping[str, QuotaQueue]
    used: Mapping[str, Counter[str]]
    resource: str
    flavor: str | None
    parents: Mapping[str, str]
    children: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(
        cls,
        queues: Mapping[str, QuotaQueue],
        used: Mapping[str, Counter[str]],
        resource: str,
        flavor: str | None,
    ) -> _CohortTree:
        parents = {
            name: f"{COHORT}{queue.cohort}" for name, queue in queues.items() if queue.cohort
        }
        for name in sorted(parents):
            seen = [name]
            while (up := parents.get(seen[-1])) is not None and up not in seen:
                seen.append(up)
            if up is not None:
                del parents[seen[-1]]
        children: dict[str, list[str]] = {}
        for name, parent in sorted(parents.items()):
            children.setdefault(parent, []).append(name)
        kids = {name: tuple(names) for name, names in children.items()}
        return cls(queues, used, resource, flavor, parents, kids)

    def available(self, name: str) -> int:
        parent = self.parents.get(name)
        if parent is None:
            return self._subtree(name) - self._usage(name)
        kept, usage = self._kept(name), self._usage(name)
        from_parent = self.available(parent)
        limit = self._borrowing_limit(name)
        if limit is not None:
            stored = self._subtree(name) - kept
            from_parent = min(from_parent, stored - max(0, usage - kept) + limit)
        return max(0, kept - usage) + from_parent

    def _amounts(
        self, amounts: Mapping[str, int], per_flavor: Mapping[str, Mapping[str, int]]
    ) -> Mapping[str, int]:
        return amounts if self.flavor is None else per_flavor.get(self.flavor, {})

    def _nominal(self, name: str) -> int:
        queue = self.queues.get(name)
        if queue is None:
            return 0
        return self._amounts(queue.limit, queue.flavor_limits).get(self.resource, 0)

    def _kept(self, name: str) -> int:
        queue = self.queues.get(name)
        if queue is None:
            return 0
        kept = self._amounts(queue.guaranteed, queue.flavor_guaranteed).get(self.resource)
        if not name.startswith(COHORT):
            return kept or 0
        # a Cohort's guaranteed is its lendingLimit (queues._cohort)
        return 0 if kept is None else max(0, self._subtree(name) - kept)

    def _borrowing_limit(self, name: str) -> int | None:
        queue = self.queues.get(name)
        if queue is None:
            return None
        limits = self._amounts(queue.borrowing_limit or {}, queue.flavor_borrowing)
        return limits.get(self.resource)

    def _subtree(self, name: str) -> int:
        below = self.children.get(name, ())
        return self._nominal(name) + sum(self._subtree(c) - self._kept(c) for c in below)

    def _usage(self, name: str) -> int:
        if name.startswith(COHORT):
            below = self.children.get(name, ())
            return sum(max(0, self._usage(c) - self._kept(c)) for c in below)
        key = name if self.flavor is None else _at(name, self.flavor)
        return self.used.get(key, Counter())[self.resource]


# --- Volcano's enqueue action ------------------------------------------------------------


@dataclass(slots=True)
class VolcanoEnqueue:
    """Volcano's enqueue action: a PodGroup still Pending with ``spec.minResources``
    (``Gang.min_resources``) goes Inqueue only when they fit.

    volcano-sh/volcano ``pkg/scheduler/actions/enqueue/enqueue.go`` ``Execute``: a
    pending job goes Inqueue when it has no minResources or every ``JobEnqueueable``
    plugin permits it; each one enqueued adds its minResources to what the next are
    checked against (``JobEnqueued``). The two plugins of Volcano's default
    configuration that check it:

    - proportion (``plugins/proportion/proportion.go`` ``JobEnqueueableFn``):
      minResources + the queue's allocated + its inqueue <= ``realCapability`` on every
      resource (one it does not name is unbounded, ``api.Infinity``; a cpu or memory
      capability <= 0 too), ``realCapability`` = min(``spec.capability``, cluster
      total - the queues' guarantees + its own);
    - overcommit (``plugins/overcommit/overcommit.go`` ``JobEnqueueableFn``): every
      queue's inqueue + minResources <= total allocatable x 1.2 (the default
      overcommit-factor) - what the bound pods use, on the resources minResources names
      (``LessEqualWithDimension``).

    Not read: queue guarantees, the plugins' arguments (another overcommit-factor), the
    elastic resources and the inqueue of PodGroups already Inqueue or Running.

    A queue's capability holds the PodGroup whatever nodes are added: a wait. The
    cluster's size holds it only until nodes are added, and whether the autoscaler
    adds them depends on its pods: a Volcano Job creates none before its PodGroup is
    Inqueue (``pkg/controllers/job/job_controller_actions.go`` ``syncJob``: ``syncTask``
    only once the phase is neither "" nor Pending), so it waits; pods that exist are
    marked Unschedulable (``pkg/scheduler/cache`` ``RecordJobStatusEvent``), the
    autoscaler adds nodes for them and the next session enqueues the PodGroup: left
    to the plan."""

    total: Counter[str]
    used: Counter[str]
    allocated: Mapping[str, Counter[str]]
    inqueue: dict[str, Counter[str]]

    @classmethod
    def of(cls, cluster: Cluster, allocated: Mapping[str, Counter[str]]) -> VolcanoEnqueue:
        """The session's start: allocatable and use on the nodes, each queue's
        allocated (its bound pods), nothing enqueued."""
        total: Counter[str] = Counter()
        for node in cluster.nodes:
            total["cpu"] += node.allocatable.cpu_milli
            total["memory"] += node.allocatable.memory_bytes
            total[GPU_RESOURCE] += node.gpu_count
            total.update(node.allocatable.extended)
        kept = {name: Counter(amounts) for name, amounts in allocated.items()}
        return cls(total, requests_of(cluster.bound_pods()), kept, {})

    def refusal(
        self, gang: Gang, queue: QuotaQueue | None, pods: tuple[Pod, ...]
    ) -> QuotaWait | None:
        """The wait of a PodGroup the enqueue action keeps Pending; None: enqueued
        (counted inqueue), or kept only until the autoscaler adds nodes for its pods."""
        if gang.min_resources is None or gang.queue is None:
            return None
        need = Counter({k: v for k, v in gang.min_resources.items() if v})
        reason = self._short_of_capability(need, gang.queue, queue)
        if reason is None:
            reason = self._short_of_cluster(need, gang.queue)
            if reason is None:
                self.inqueue.setdefault(gang.queue, Counter()).update(need)
                self.inqueue.setdefault("", Counter()).update(need)
                return None
            if not (gang.pods_on_enqueue and all(p.synthesized_by for p in pods)):
                return None
            reason += (
                "; its pods are created only once the PodGroup is Inqueue: "
                "cluster-autoscaler adds no node for it"
            )
        text = f"{QUOTA_WAIT_PREFIX}{gang.queue} (Volcano keeps PodGroup {gang.key} {reason})"
        return QuotaWait(gang.queue, text, autoscaler_sees_pods=False)

    def _short_of_capability(
        self, need: Counter[str], name: str, queue: QuotaQueue | None
    ) -> str | None:
        if queue is None:
            return None
        taken = self.allocated.get(name, Counter()) + self.inqueue.get(name, Counter())
        for resource, amount in sorted(need.items()):
            cap = queue.limit.get(resource)
            if resource in ("cpu", "memory") and cap is not None and cap <= 0:
                cap = None
            if cap is not None and amount + taken[resource] > cap:
                left = amount_text(resource, max(0, cap - taken[resource]))
                return (
                    f"Pending: minResources {amount_text(resource, amount)} {resource}, "
                    f"the queue's capability leaves {left}; enqueue, proportion plugin"
                )
        return None

    def _short_of_cluster(self, need: Counter[str], name: str) -> str | None:
        everywhere = self.inqueue.get("", Counter())
        mine = self.allocated.get(name, Counter()) + self.inqueue.get(name, Counter())
        for resource, amount in sorted(need.items()):
            total, used, enqueued = self.total[resource], self.used[resource], everywhere[resource]
            idle = total * OVERCOMMIT_FACTOR - used
            if amount + enqueued > idle:
                left = max(0, math.floor(idle - enqueued))
                also = f" - enqueued {amount_text(resource, enqueued)}" if enqueued else ""
                return (
                    f"Pending: minResources {amount_text(resource, amount)} {resource}, the "
                    f"cluster's idle with overcommit 1.2 leaves {amount_text(resource, left)} "
                    f"(allocatable {amount_text(resource, total)} x 1.2 - used "
                    f"{amount_text(resource, used)}{also}); enqueue, overcommit plugin"
                )
            if amount + mine[resource] > total:
                return (
                    f"Pending: minResources {amount_text(resource, amount)} {resource}, the "
                    f"cluster's {amount_text(resource, total)} less the queue's "
                    f"{amount_text(resource, mine[resource])} leaves "
                    f"{amount_text(resource, max(0, total - mine[resource]))}; enqueue, "
                    f"proportion plugin"
                )
        return None


def amount_text(resource: str, amount: int) -> str:
    """Amount in the resource's usual unit: cores (or millicores), Gi/Mi/Ki, or a count."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource == "memory":
        for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount % size == 0:
                return f"{amount // size}{unit}"
    return str(amount)
