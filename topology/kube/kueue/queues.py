"""Queues: which ones a cluster has and which queue a pod is in.

Pure: no Django, no I/O. ``topology.kube.kueue.quotas`` works out who waits for quota
in them.

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
- Kueue ``Cohort`` (``apis/kueue/v1beta1/cohort_types.go``): ``spec.parentName`` and its
  own ``resourceGroups``, read like a ClusterQueue's and kept apart (``Cluster.cohorts``,
  ``Cohort/<name>``): hierarchical cohorts, ``topology.kube.kueue.quotas._CohortTree``.
- Volcano ``Queue`` (volcano-sh/apis ``pkg/apis/scheduling/v1beta1/types.go``):
  ``spec.capability``. Its pods are created and stay Pending, Unschedulable:
  the cluster autoscaler sees them and scales up (volcano#4710).
- KAI ``Queue`` (``scheduling.run.ai/v2``): ``spec.resources.{gpu,cpu,memory}.limit``
  (``-1`` unlimited; gpu in GPUs, cpu in millicores, memory in megabytes);
  ``quota`` for non-preemptible work (priority >= 100, KAI's default split).
  Its pods are marked Unschedulable: the autoscaler scales up (autoscaler#9828).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from topology.kube.fields import ObjectContext, resource_amount
from topology.kube.kueue import flavors as kueueflavors
from topology.model.hardware import GPU_RESOURCE, Gang, Pod, QuotaQueue

KUEUE = "kueue.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
KAI = "scheduling.run.ai"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# kubernetes-sigs/kueue pkg/controller/admissionchecks/provisioning: the controller that
# creates a ProvisioningRequest per admitted workload
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
PROVISIONING_CONFIG = "ProvisioningRequestConfig"  # its AdmissionCheck's spec.parameters
TRY_NEXT_FLAVOR = "TryNextFlavor"  # spec.flavorFungibility.whenCanBorrow
KAI_QUEUE_LABELS = ("kai.scheduler/queue", "runai/queue")
NON_PREEMPTIBLE_PRIORITY = 100  # KAI: priority >= 100 is non-preemptible by default
COHORT = "Cohort/"
QUEUE_KINDS = (
    ("ClusterQueue", KUEUE),
    ("Cohort", KUEUE),
    ("LocalQueue", KUEUE),
    ("Queue", VOLCANO),
    ("Queue", KAI),
)
KAI_UNITS = {GPU_RESOURCE: 1, "cpu": 1, "memory": 1_000_000}  # per unit of the Queue spec
KAI_RESOURCES = {"gpu": GPU_RESOURCE, "cpu": "cpu", "memory": "memory"}


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
        cohort = ctx.text(spec.get("cohort", spec.get("cohortName")), "spec.cohort") or None
        collected.queues.append(_cluster_queue(ctx, f"ClusterQueue/{name}", spec, cohort))
        collected.queue_checks[f"ClusterQueue/{name}"] = _check_names(ctx, spec)
        kueueflavors.record_order(collected, ctx, name, spec)
    elif kind == "Cohort":
        collected.queues.append(_cohort(ctx, name, spec))
    elif group == VOLCANO:
        capability = ctx.mapping(spec.get("capability"), "spec.capability")
        limit = {
            str(k): resource_amount(ctx, str(k), v, f"spec.capability.{k}")
            for k, v in capability.items()
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


def _cohort(ctx: ObjectContext, name: str, spec: dict[str, Any]) -> QuotaQueue:
    """A Kueue ``Cohort`` (``apis/kueue/v1beta1/cohort_types.go``; v1alpha1 named the
    parent ``spec.parent``): its own ``resourceGroups`` quota and its parent cohort, read
    as a ClusterQueue's; ``guaranteed`` holds its lendingLimit itself (what a cohort keeps,
    SubtreeQuota - lendingLimit, depends on its children: ``quotas._CohortTree``)."""
    raw_parent = spec.get("parentName", spec.get("parent"))
    parent = ctx.text(raw_parent, "spec.parentName") or None
    return _cluster_queue(ctx, f"{COHORT}{name}", spec, parent, lending_limits=True)


def _cluster_queue(
    ctx: ObjectContext,
    name: str,
    spec: dict[str, Any],
    cohort: str | None,
    *,
    lending_limits: bool = False,
) -> QuotaQueue:
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
                raw = resource.get("nominalQuota", 0)
                amount = resource_amount(ctx, key, raw, f"{path}.nominalQuota")
                nominal[key] += amount
                own[key] = own.get(key, 0) + amount
                if resource.get("borrowingLimit") is None:
                    unbounded.add(key)
                else:
                    raw = resource["borrowingLimit"]
                    cap = resource_amount(ctx, key, raw, f"{path}.borrowingLimit")
                    borrowing[key] += cap
                    flavor_borrowing.setdefault(flavor_name, {})[key] = cap
                if resource.get("lendingLimit") is not None:
                    raw = resource["lendingLimit"]
                    lends = resource_amount(ctx, key, raw, f"{path}.lendingLimit")
                    # resource_node.go guaranteedQuota (a Cohort's: the limit, see _cohort)
                    kept = lends if lending_limits else max(0, amount - lends)
                    guaranteed[key] += kept
                    flavor_guaranteed.setdefault(flavor_name, {})[key] = kept
    limits = None if cohort is None else {k: borrowing[k] for k in nominal if k not in unbounded}
    return QuotaQueue(
        name,
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
                if not q.name.startswith(COHORT)
            ),
            key=lambda q: q.name,
        )
    )


def assembled_cohorts(collected: Any) -> tuple[QuotaQueue, ...]:
    """The Kueue Cohort objects read (``Cohort/<name>``), sorted by name."""
    return tuple(
        sorted((q for q in collected.queues if q.name.startswith(COHORT)), key=lambda q: q.name)
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
