"""Queues and quotas: work that waits for quota, not for nodes.

Pure: no Django, no I/O. A workload whose queue has no free quota is not
scheduled whatever the cluster holds; buying nodes for it buys nothing
(kubernetes/autoscaler#9828, NVIDIA/KAI-Scheduler#1615, volcano-sh/volcano#4710).

Queues read (``parse_queue`` is the topology.kube.parse handler):

- Kueue ``ClusterQueue`` (kubernetes-sigs/kueue ``apis/kueue/v1beta1/clusterqueue_types.go``):
  ``spec.resourceGroups[].flavors[].resources[]`` ``nominalQuota`` and
  ``borrowingLimit``, ``spec.cohort`` (``cohortName`` in v1beta2). Flavors are
  summed per resource, and kept per flavor (``flavor_limits``): the flavor a pod
  set is assigned gives it its labels and tolerations (``topology.kube.kueue.flavors``),
  and where one resource group offers several flavors the pod set is admitted
  against that flavor's own quota, or a later flavor's (flavorFungibility, ``_admit_fungible``).
  ``LocalQueue`` ``spec.clusterQueue`` links a namespace's queue name (pod or
  job label ``kueue.x-k8s.io/queue-name``) to it. A Kueue job is suspended,
  its pods gated, until admitted: the cluster autoscaler never sees them.
- Volcano ``Queue`` (volcano-sh/apis ``pkg/apis/scheduling/v1beta1/types.go``):
  ``spec.capability``. Its pods are created and stay Pending, Unschedulable:
  the cluster autoscaler sees them and scales up (volcano#4710).
- KAI ``Queue`` (``scheduling.run.ai/v2``): ``spec.resources.{gpu,cpu,memory}.limit``
  (``-1`` unlimited; gpu in GPUs, cpu in millicores, memory in megabytes);
  ``quota`` for non-preemptible work (priority >= 100, KAI's default split).
  Its pods are marked Unschedulable: the autoscaler scales up (autoscaler#9828).

``quota_waiting`` walks the pending workloads in scheduling order, like the
queue managers admit them: used = requests of the bound pods of the queue plus
what earlier pending workloads of the queue were admitted; a workload whose
request exceeds ``limit + borrowable - used`` for some resource waits::

    waiting for quota in queue ClusterQueue/cq (needs 8 nvidia.com/gpu, free 0)

Borrowing (Kueue cohorts, ``_available``): as kueue ``pkg/cache/resource_node.go``
``available``: each ClusterQueue lends its cohort its nominalQuota up to its
``lendingLimit`` (all when unset) and borrows up to its ``borrowingLimit``
(unbounded when unset); usage past a queue's unlent quota counts against the
cohort. A Cohort object's own quota (hierarchical cohorts) is not modelled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from topology.kube.fields import ObjectContext
from topology.kube.kueue import flavors as kueueflavors
from topology.model.hardware import GPU_RESOURCE, Cluster, FlavorOption, Gang, Pod, QuotaQueue
from topology.model.quantity import cpu_milli, memory_bytes, whole_count

KUEUE = "kueue.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
KAI = "scheduling.run.ai"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
QUOTA_WAIT_PREFIX = "waiting for quota in queue "  # how every quota wait's reason begins
# kubernetes-sigs/kueue pkg/controller/admissionchecks/provisioning: the controller that
# creates a ProvisioningRequest per admitted workload
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
PROVISIONING_CONFIG = "ProvisioningRequestConfig"  # its AdmissionCheck's spec.parameters
TRY_NEXT_FLAVOR = "TryNextFlavor"  # spec.flavorFungibility.whenCanBorrow
KAI_QUEUE_LABELS = ("kai.scheduler/queue", "runai/queue")
NON_PREEMPTIBLE_PRIORITY = 100  # KAI: priority >= 100 is non-preemptible by default
QUEUE_KINDS = (
    ("ClusterQueue", KUEUE),
    ("LocalQueue", KUEUE),
    ("Queue", VOLCANO),
    ("Queue", KAI),
)
KAI_UNITS = {GPU_RESOURCE: 1, "cpu": 1, "memory": 1_000_000}  # per unit of the Queue spec
KAI_RESOURCES = {"gpu": GPU_RESOURCE, "cpu": "cpu", "memory": "memory"}


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


# --- parsing ------------------------------------------------------------------------------


def parse_queue(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """topology.kube.parse handler: queues are kept until assembly links LocalQueues."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    kind = str(obj["kind"])
    spec = ctx.mapping(obj.get("spec"), "spec")
    name = ctx.object.rpartition("/")[2]
    if kind == "LocalQueue":
        target = ctx.text(spec.get("clusterQueue"), "spec.clusterQueue", required=True)
        namespace = ctx.object.split("/")[1]
        collected.local_queues[f"{namespace}/{name}"] = f"ClusterQueue/{target}"
    elif kind == "ClusterQueue":
        collected.queues.append(_cluster_queue(ctx, name, spec))
        collected.queue_checks[f"ClusterQueue/{name}"] = _check_names(ctx, spec)
        kueueflavors.record_order(collected, ctx, name, spec)
    elif group == VOLCANO:
        capability = ctx.mapping(spec.get("capability"), "spec.capability")
        limit = {
            str(k): _amount(ctx, str(k), v, f"spec.capability.{k}") for k, v in capability.items()
        }
        collected.queues.append(QuotaQueue(f"VolcanoQueue/{name}", limit))
    else:
        collected.queues.extend(_kai_queues(ctx, name, spec))
        if spec.get("parentQueue"):
            parent = spec["parentQueue"]
            collected.notes.append(f"{ctx.object}: parent queue {parent} limits not modelled")


def parse_admission_check(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A Kueue AdmissionCheck (``apis/kueue/v1beta1/admissioncheck_types.go``): its
    ``spec.controllerName`` says which controller runs it."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    controller = ctx.text(spec.get("controllerName"), "spec.controllerName", required=True)
    name = ctx.object.rpartition("/")[2]
    collected.discovered.admission_checks[name] = controller
    parameters = ctx.mapping(spec.get("parameters"), "spec.parameters")
    if parameters.get("kind") == PROVISIONING_CONFIG and parameters.get("name"):
        collected.discovered.check_configs[name] = str(parameters["name"])


def parse_provisioning_config(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A Kueue ProvisioningRequestConfig (``apis/kueue/v1beta1/
    provisioningrequestconfig_types.go``): the ``spec.provisioningClassName`` of the
    ProvisioningRequests Kueue creates for a check that names it."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    klass = ctx.text(spec.get("provisioningClassName"), "spec.provisioningClassName")
    collected.discovered.provisioning_classes[ctx.object.rpartition("/")[2]] = klass


def _check_names(ctx: ObjectContext, spec: dict[str, Any]) -> tuple[str, ...]:
    """``spec.admissionChecks`` (names) or ``spec.admissionChecksStrategy.admissionChecks
    [].name`` (``clusterqueue_types.go``; the strategy's ``onFlavors`` is not modelled:
    a check is taken to apply to every flavor)."""
    names = [str(n) for n in spec.get("admissionChecks") or ()]
    strategy = ctx.mapping(spec.get("admissionChecksStrategy"), "spec.admissionChecksStrategy")
    path = "spec.admissionChecksStrategy.admissionChecks"
    for item_path, item in ctx.items(strategy.get("admissionChecks"), path):
        names.append(ctx.text(item.get("name"), f"{item_path}.name", required=True))
    return tuple(dict.fromkeys(names))


def _amount(ctx: ObjectContext, resource: str, raw: Any, path: str) -> int:
    quantity = ctx.quantity(raw, path)
    if resource == "cpu":
        return cpu_milli(quantity)
    if resource == "memory":
        return memory_bytes(quantity)
    return whole_count(quantity)


def _cluster_queue(ctx: ObjectContext, name: str, spec: dict[str, Any]) -> QuotaQueue:
    nominal: Counter[str] = Counter()
    borrowing: Counter[str] = Counter()
    guaranteed: Counter[str] = Counter()
    unbounded: set[str] = set()
    per_flavor: dict[str, dict[str, int]] = {}
    flavor_guaranteed: dict[str, dict[str, int]] = {}
    flavor_borrowing: dict[str, dict[str, int]] = {}
    for group_path, group in ctx.items(spec.get("resourceGroups"), "spec.resourceGroups"):
        for flavor_path, flavor in ctx.items(group.get("flavors"), f"{group_path}.flavors"):
            flavor_name = ctx.text(flavor.get("name"), f"{flavor_path}.name")
            own = per_flavor.setdefault(flavor_name, {})
            for path, resource in ctx.items(flavor.get("resources"), f"{flavor_path}.resources"):
                key = ctx.text(resource.get("name"), f"{path}.name", required=True)
                amount = _amount(ctx, key, resource.get("nominalQuota", 0), f"{path}.nominalQuota")
                nominal[key] += amount
                own[key] = own.get(key, 0) + amount
                if resource.get("borrowingLimit") is None:
                    unbounded.add(key)
                else:
                    cap = _amount(ctx, key, resource["borrowingLimit"], f"{path}.borrowingLimit")
                    borrowing[key] += cap
                    flavor_borrowing.setdefault(flavor_name, {})[key] = cap
                if resource.get("lendingLimit") is not None:
                    lends = _amount(ctx, key, resource["lendingLimit"], f"{path}.lendingLimit")
                    kept = max(0, amount - lends)  # resource_node.go guaranteedQuota
                    guaranteed[key] += kept
                    flavor_guaranteed.setdefault(flavor_name, {})[key] = kept
    cohort = ctx.text(spec.get("cohort", spec.get("cohortName")), "spec.cohort") or None
    limits = None if cohort is None else {k: borrowing[k] for k in nominal if k not in unbounded}
    return QuotaQueue(
        f"ClusterQueue/{name}",
        dict(nominal),
        cohort=cohort,
        borrowing_limit=limits,
        hides_pending_pods=True,
        flavor_limits=per_flavor,
        guaranteed=dict(guaranteed),
        flavor_guaranteed=flavor_guaranteed,
        flavor_borrowing=flavor_borrowing,
        when_can_borrow=ctx.text(
            ctx.mapping(spec.get("flavorFungibility"), "spec.flavorFungibility").get(
                "whenCanBorrow"
            ),
            "spec.flavorFungibility.whenCanBorrow",
        )
        or "Borrow",
    )


def _kai_queues(ctx: ObjectContext, name: str, spec: dict[str, Any]) -> list[QuotaQueue]:
    """Two views of one KAI queue: its limit (all work) and its quota (non-preemptible)."""
    resources = ctx.mapping(spec.get("resources"), "spec.resources")
    limit: dict[str, int] = {}
    quota: dict[str, int] = {}
    for field_name, resource in KAI_RESOURCES.items():
        entry = ctx.mapping(resources.get(field_name), f"spec.resources.{field_name}")
        unit = KAI_UNITS[resource]
        for target, key in ((limit, "limit"), (quota, "quota")):
            value = ctx.number(
                entry.get(key), f"spec.resources.{field_name}.{key}", default=-1, minimum=-1
            )
            if value >= 0:
                target[resource] = int(value * unit)
    return [QuotaQueue(f"KaiQueue/{name}", limit), QuotaQueue(f"KaiQueue/{name}#quota", quota)]


def assembled_queues(collected: Any) -> tuple[QuotaQueue, ...]:
    """Queues with the LocalQueues that point at them and their ProvisioningRequest
    admission check, sorted by name; any other admission check is said."""
    local: dict[str, list[str]] = {}
    for local_name, target in collected.local_queues.items():
        local.setdefault(target, []).append(local_name)
    return tuple(
        sorted(
            (
                replace(
                    q,
                    local_queues=tuple(sorted(local.get(q.name, []))),
                    provisioning_check=(check := _provisioning_check(collected, q.name)),
                    provisioning_class=_check_class(collected, check),
                )
                for q in collected.queues
            ),
            key=lambda q: q.name,
        )
    )


def _check_class(collected: Any, check: str | None) -> str:
    """The class of the requests the check creates ("" where its config is not read)."""
    discovered = collected.discovered
    config = discovered.check_configs.get(check or "")
    return str(discovered.provisioning_classes.get(config or "", ""))


def _provisioning_check(collected: Any, queue: str) -> str | None:
    """The queue's check run by Kueue's ProvisioningRequest controller; the others are
    notes (Kueue admits only once every check is Ready: not modelled)."""
    controllers = collected.discovered.admission_checks
    found = None
    for name in collected.queue_checks.get(queue, ()):
        controller = controllers.get(name)
        if controller == PROVISIONING_CONTROLLER and found is None:
            found = name
            continue
        what = f"controller {controller}" if controller else "no AdmissionCheck object read"
        collected.notes.append(f"{queue}: admission check {name} ({what}) not modelled")
    return found


# --- which queue a pod or workload is in ---------------------------------------------------


def pod_queue(pod: Pod, gangs: Mapping[str, Gang], local_queues: Mapping[str, str]) -> str | None:
    """The queue reference, LocalQueues resolved to their ClusterQueue."""
    reference = pod.queue
    if reference is None and pod.labels.get(KUEUE_QUEUE_LABEL):
        reference = f"LocalQueue/{pod.namespace}/{pod.labels[KUEUE_QUEUE_LABEL]}"
    if reference is None:
        reference = next(
            (
                f"KaiQueue/{pod.labels[label]}"
                for label in KAI_QUEUE_LABELS
                if pod.labels.get(label)
            ),
            None,
        )
    if reference is None and pod.gang is not None and pod.gang in gangs:
        reference = gangs[pod.gang].queue
    if reference is not None and reference.startswith("LocalQueue/"):
        local = reference.removeprefix("LocalQueue/")
        return local_queues.get(local, reference)
    return reference


def _requests(pods: Iterable[Pod]) -> Counter[str]:
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
    queues = {q.name: q for q in cluster.queues}
    if not queues:
        return {}
    gangs = {g.key: g for g in cluster.gangs}
    local_queues = {lq: q.name for q in cluster.queues for lq in q.local_queues}
    used = admitted_usage(cluster)
    waiting = {}
    for workload in pending:
        queue = next(
            (q for p in workload.pods if (q := pod_queue(p, gangs, local_queues)) is not None),
            None,
        )
        if queue is None:
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
            used.setdefault(queue, Counter()).update(_requests([pod]))
            used.setdefault(f"{queue}#quota", Counter()).update(_requests([pod]))
            if pod.quota_flavor:
                used.setdefault(_at(queue, pod.quota_flavor), Counter()).update(_requests([pod]))
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
    need = _requests(workload.pods)
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
    members = [
        _Share(
            other.flavor_limits.get(flavor, {}).get(resource, 0),
            other.flavor_guaranteed.get(flavor, {}).get(resource, 0),
            used.get(_at(other.name, flavor), Counter())[resource],
        )
        for other in queues.values()
        if other.cohort == queue.cohort and other.name != queue.name
    ]
    own = _Share(
        queue.flavor_limits[flavor][resource],
        queue.flavor_guaranteed.get(flavor, {}).get(resource, 0),
        used.get(_at(queue.name, flavor), Counter())[resource],
    )
    cap = queue.flavor_borrowing.get(flavor, {}).get(resource)
    return _available(own, cap, None if queue.cohort is None else members)


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
    members = [
        _Share(
            other.limit.get(resource, 0),
            other.guaranteed.get(resource, 0),
            used.get(other.name, Counter())[resource],
        )
        for other in queues.values()
        if other.cohort == queue.cohort and other.name != queue.name
    ]
    own = _Share(
        queue.limit[resource],
        queue.guaranteed.get(resource, 0),
        used.get(queue.name, Counter())[resource],
    )
    borrowing = queue.borrowing_limit or {}
    cap = borrowing.get(resource) if resource in borrowing else None
    return _available(own, cap, None if queue.cohort is None else members)


@dataclass(frozen=True, slots=True)
class _Share:
    """One ClusterQueue's quota of one (flavor and) resource: nominalQuota, the part
    it never lends (nominalQuota - lendingLimit), what it uses."""

    nominal: int
    guaranteed: int
    used: int


def _available(own: _Share, borrowing_limit: int | None, others: list[_Share] | None) -> int:
    """What a ClusterQueue may still admit, kueue ``pkg/cache/resource_node.go``
    ``available`` for a ClusterQueue under one flat cohort (``others``: its other
    ClusterQueues; None: no cohort). The cohort holds what each queue lends
    (``accumulateFromChild``: nominal - guaranteed) and counts the usage past each
    queue's guaranteed quota; the queue gets its own unused guaranteed quota plus
    what the cohort has left, capped by its borrowingLimit past what it keeps there."""
    if others is None:
        return own.nominal - own.used
    cohort_quota = sum(s.nominal - s.guaranteed for s in (own, *others))
    cohort_used = sum(max(0, s.used - s.guaranteed) for s in (own, *others))
    from_cohort = cohort_quota - cohort_used
    if borrowing_limit is not None:
        stored = own.nominal - own.guaranteed
        used_there = max(0, own.used - own.guaranteed)
        from_cohort = min(from_cohort, stored - used_there + borrowing_limit)
    return max(0, own.guaranteed - own.used) + from_cohort


def amount_text(resource: str, amount: int) -> str:
    """Amount in the resource's usual unit: cores (or millicores), Gi/Mi/Ki, or a count."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource == "memory":
        for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount % size == 0:
                return f"{amount // size}{unit}"
    return str(amount)
