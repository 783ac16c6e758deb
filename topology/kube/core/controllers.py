"""How many pods each controller still wants, as its controller computes it, as pod
objects for ``topology.kube.parse``'s Pod parser (``topology.kube.workloads`` expands every
controller with these builders).

Pure: no Django, no I/O.

How many pods each controller wants, as its controller computes it:

- batch/v1 Job (kubernetes ``pkg/controller/job/job_controller.go``,
  ``manageJob``): ``parallelism`` (default 1) when ``completions`` is unset,
  else ``min(parallelism, completions - status.succeeded)``; a suspended Job
  wants none unless Kueue manages it (label ``kueue.x-k8s.io/queue-name``:
  Kueue suspends it until admission, see ``topology.kube.kueue.quotas``). Indexed Jobs
  name pods ``<job>-<index>`` (lowest free indexes), others
  ``<job>-pending-<n>``. Existing pods: label ``batch.kubernetes.io/job-name``
  (or the legacy ``job-name``), and at least ``status.active``.
- JobSet (kubernetes-sigs/jobset ``api/jobset/v1alpha2/jobset_types.go``):
  every ``replicatedJobs[]`` makes ``replicas`` (default 1) child Jobs named
  ``<jobset>-<replicatedJob>-<jobIndex>``, each counted like a Job; pods match
  the labels ``jobset.sigs.k8s.io/jobset-name``, ``.../replicatedjob-name``,
  ``.../job-index``. Child Jobs in the input owned by a present JobSet are
  not counted again.
- LeaderWorkerSet (kubernetes-sigs/lws ``api/leaderworkerset/v1``): ``replicas``
  groups of ``leaderWorkerTemplate.size`` pods (leader ``<lws>-<i>`` from
  ``leaderTemplate`` or the worker template, workers ``<lws>-<i>-<j>``); each
  group is a gang ``<lws>-<i>`` of ``size`` only where something enforces it: Kueue
  (queue label: each group is one Workload) or a gang scheduler (a template's
  ``schedulerName`` volcano or kai-scheduler: LWS's gang scheduler provider
  ``pkg/schedulerprovider``, KAI's podgrouper). Otherwise kube-scheduler binds the
  pods one by one: each is its own workload, marked ``Pod.app_group``.
- Kueue Workload (kubernetes-sigs/kueue ``apis/kueue/v1beta1/workload_types.go``):
  ``podSets[].count`` pods of ``podSets[].template``, one gang for the whole
  Workload; a Workload whose owner (Job, JobSet, Pod...) is in the input is
  that owner's, and not counted twice.
- Volcano Job (volcano-sh/apis ``pkg/apis/batch/v1alpha1/job.go``):
  ``tasks[].replicas`` pods ``<job>-<task>-<i>``, a gang of ``minAvailable``
  (default: all), queue ``spec.queue`` (default ``default``); with no pod yet its
  PodGroup is still Pending: the pods come once Volcano's enqueue lets it in.
- Deployment / ReplicaSet / StatefulSet (``pkg/controller/replicaset``,
  ``statefulset``): ``spec.replicas`` (default 1) minus the pods it has
  (``status.replicas``, or the pods matching ``spec.selector.matchLabels``);
  StatefulSet pods are ``<sts>-<ordinal>``, the others ``<name>-pending-<n>``.
  A Deployment whose ReplicaSet is in the input is counted through it.

Kubeflow PyTorchJob, MPIJob and TrainJob: ``topology.kube.training``. A controller's
exported pods join the gang its template's pods would (``kubepods.controller_group``).

Gangs declared without pods of their own: Volcano PodGroup
(``scheduling.volcano.sh``: minMember, queue; minResources while the PodGroup is
Pending, what Volcano's enqueue action checks: ``topology.kube.kueue.quotas``
``VolcanoEnqueue``) and KAI PodGroup (NVIDIA/KAI-Scheduler
``pkg/apis/scheduling/v2alpha2/podgroup_types.go``: minMember, queue,
topologyConstraint; subGroups are reported, the gang is enforced on the whole).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from topology.kube.core.podowner import GANG_SCHEDULERS
from topology.kube.fields import ObjectContext, resource_amount
from topology.model.hardware import Gang, Pod

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
JOB_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
VOLCANO_JOB_NAME = "volcano.sh/job-name"
JOBSET_EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOBSET_NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"
JOBSET_JOB_KEY = "jobset.sigs.k8s.io/job-key"
LWS_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology"
LWS_SUBGROUP_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
LWS_GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"
GANG_ANNOTATIONS = ("scheduling.k8s.io/group-name", "pod-group-name")


def annotated_gang(namespace: str, annotations: dict[str, str]) -> str | None:
    """The PodGroup a Volcano or KAI pod belongs to, named by an annotation.

    Volcano: ``scheduling.k8s.io/group-name`` (volcano-sh/apis
    ``KubeGroupNameAnnotationKey``); KAI: ``pod-group-name`` (KAI-Scheduler
    ``PodGroupAnnotationForPod``).
    """
    for key in GANG_ANNOTATIONS:
        if annotations.get(key):
            return f"{namespace}/{annotations[key]}"
    return None


@dataclass(frozen=True, slots=True)
class Wanted:
    """Pods one controller still has to create, as pod objects, plus its gang."""

    controller: str  # "Kind/ns/name"
    pods: tuple[dict[str, Any], ...]
    gangs: tuple[Gang, ...] = ()
    queue: str | None = None
    unsupported: tuple[str, ...] = ()
    # what is not modelled about these pods but does not block them: said on each
    said: tuple[str, ...] = ()
    # the all-or-nothing group nothing enforces, for pods whose labels do not name it
    app_group: str | None = None


@dataclass(frozen=True, slots=True)
class Controller:
    ctx: ObjectContext
    kind: str
    group: str
    obj: dict[str, Any]
    owners: tuple[tuple[str, str], ...]  # (kind, name) of metadata.ownerReferences

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "default")

    @property
    def name(self) -> str:
        return self.ctx.object.rpartition("/")[2]


# --- how many pods each controller wants -------------------------------------------------


def _job_wants(ctx: ObjectContext, spec: dict[str, Any], status: dict[str, Any], base: str) -> int:
    """job_controller manageJob: wantActive."""
    parallelism = ctx.integer(spec.get("parallelism"), f"{base}.parallelism", default=1, minimum=0)
    if spec.get("completions") is None:
        return parallelism
    completions = ctx.integer(spec.get("completions"), f"{base}.completions", minimum=0)
    succeeded = ctx.integer(status.get("succeeded"), "status.succeeded", default=0, minimum=0)
    return max(0, min(parallelism, completions - succeeded))


def _job(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    queue = _kueue_queue(controller)
    if ctx.boolean(spec.get("suspend"), "spec.suspend") and queue is None:
        return "suspended, creates no pods"
    want = _job_wants(ctx, spec, status, "spec")
    mine = [p for p in _live(pods, controller.namespace) if _job_pod_of(p, controller.name)]
    active = ctx.integer(status.get("active"), "status.active", default=0, minimum=0)
    missing = max(0, want - max(len(mine), active))
    if ctx.text(spec.get("completionMode"), "spec.completionMode") == "Indexed":
        taken = {p.name.rpartition("-")[2] for p in mine}
        names = _free_names(controller.name, taken, missing)
    else:
        names = [f"{controller.name}-pending-{n}" for n in range(missing)]
    template = ctx.mapping(spec.get("template"), "spec.template")
    labels = {JOB_NAME_LABELS[0]: controller.name}
    objects = tuple(pod_object(controller, template, n, labels) for n in names)
    wanted = _wanted(controller, objects, queue)
    least = _min_parallelism(controller, len(objects)) if queue is not None else None
    if least is not None and wanted.gangs:
        return replace(wanted, gangs=(replace(wanted.gangs[0], min_count=least),))
    return wanted


def _min_parallelism(controller: Controller, count: int) -> int | None:
    """kueue ``pkg/controller/jobs/job/job_controller.go``: the Job's annotation
    ``kueue.x-k8s.io/job-min-parallelism`` is its PodSet's ``minCount`` (partial
    admission, on by default); ignored unless below the pods wanted (the webhook
    requires it under parallelism) and above 0."""
    raw = _annotations(controller).get(JOB_MIN_PARALLELISM)
    if raw is None or not raw.isdigit() or not 0 < int(raw) < count:
        return None
    return int(raw)


def _annotations(controller: Controller) -> dict[str, str]:
    """The controller object's ``metadata.annotations``."""
    meta = controller.ctx.mapping(controller.obj.get("metadata"), "metadata")
    return controller.ctx.labels(meta.get("annotations"), "metadata.annotations")


def _job_pod_of(pod: Pod, job: str) -> bool:
    return any(pod.labels.get(label) == job for label in JOB_NAME_LABELS)


def _free_names(prefix: str, taken: set[str], count: int) -> list[str]:
    names: list[str] = []
    index = 0
    while len(names) < count:
        if str(index) not in taken:
            names.append(f"{prefix}-{index}")
        index += 1
    return names


def _jobset(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    queue = _kueue_queue(controller)
    if ctx.boolean(spec.get("suspend"), "spec.suspend") and queue is None:
        return "suspended, creates no pods"
    mine = [
        p for p in _live(pods, controller.namespace) if p.labels.get(JOBSET_NAME) == controller.name
    ]
    exclusive, unsupported = _jobset_exclusive(controller)
    objects = []
    for path, replicated in ctx.items(spec.get("replicatedJobs"), "spec.replicatedJobs"):
        rjob = ctx.text(replicated.get("name"), f"{path}.name", required=True)
        replicas = ctx.integer(replicated.get("replicas"), f"{path}.replicas", default=1, minimum=0)
        job_template = ctx.mapping(replicated.get("template"), f"{path}.template")
        job_spec = ctx.mapping(job_template.get("spec"), f"{path}.template.spec")
        want = _job_wants(ctx, job_spec, {}, f"{path}.template.spec")
        template = ctx.mapping(job_spec.get("template"), f"{path}.template.spec.template")
        for job_index in range(replicas):
            have = sum(
                1
                for p in mine
                if p.labels.get(JOBSET_REPLICATED_JOB) == rjob
                and p.labels.get(JOBSET_JOB_INDEX) == str(job_index)
            )
            labels = {
                JOBSET_NAME: controller.name,
                JOBSET_REPLICATED_JOB: rjob,
                JOBSET_JOB_INDEX: str(job_index),
            }
            job_name = f"{controller.name}-{rjob}-{job_index}"
            job_template = template
            if exclusive is not None:
                job_key = _sha1(f"{controller.namespace}/{job_name}")
                labels[JOBSET_JOB_KEY] = job_key
                job_template = _exclusive_template(template, exclusive, job_key)
            objects += [
                pod_object(controller, job_template, f"{job_name}-{n}", labels)
                for n in range(have, want)
            ]
    wanted = _wanted(controller, tuple(objects), queue)
    return replace(wanted, unsupported=unsupported)


def _jobset_exclusive(controller: Controller) -> tuple[str | None, tuple[str, ...]]:
    """The topology key of a JobSet's exclusive placement (``alpha.jobset.sigs.k8s.io/
    exclusive-topology``: one Job per domain of that node label, all its pods in it),
    and what is not modelled: the node-selector strategy (nodes labelled beforehand by
    the user, ``alpha.jobset.sigs.k8s.io/node-selector``: the webhook then leaves pods
    alone, ``pkg/webhooks/pod_mutating_webhook.go`` ``Default``)."""
    annotations = _annotations(controller)
    level = annotations.get(JOBSET_EXCLUSIVE)
    if level is None:
        return None, ()
    if JOBSET_NODE_SELECTOR_STRATEGY in annotations:
        return None, _exclusive(controller, JOBSET_EXCLUSIVE, "JobSet")
    return level, ()


def _exclusive_template(
    template: dict[str, Any],
    level: str,
    job_key: str,
    key_label: str = JOBSET_JOB_KEY,
    every_namespace: bool = True,
) -> dict[str, Any]:
    """The pod template with the terms JobSet adds for exclusive placement
    (kubernetes-sigs/jobset ``setExclusiveAffinities``: once on the Job's pod template,
    ``pkg/controllers/jobset_controller.go``; since the pod webhook, on the leader, the
    followers getting a nodeSelector for the leader's domain,
    ``pkg/webhooks/pod_mutating_webhook.go``; either way every pod of the Job ends in
    the leader's domain and no other Job's pod there): required pod affinity to the
    Job's pods (its ``job-key``) and required anti-affinity to any other Job's, per
    ``level``, in every namespace. The template's own terms stay, the new ones after.
    LeaderWorkerSet's are alike (``key_label`` its group key, the pod's own namespace:
    ``every_namespace`` False; ``SetExclusiveAffinities``, lws ``pkg/webhooks/
    pod_webhook.go``, on the leader; its workers' StatefulSet is made once the leader
    is scheduled, with a nodeSelector for the leader's domain,
    ``pkg/controllers/pod_controller.go``)."""

    def term(expressions: list[dict[str, Any]]) -> dict[str, Any]:
        found = {"labelSelector": {"matchExpressions": expressions}, "topologyKey": level}
        return {**found, "namespaceSelector": {}} if every_namespace else found

    spec = template.get("spec") or {}
    affinity = spec.get("affinity") or {} if isinstance(spec, dict) else None
    if not isinstance(affinity, dict):  # the pod's parse names the field
        return template
    together = affinity.get("podAffinity") or {}
    apart = affinity.get("podAntiAffinity") or {}
    if not isinstance(together, dict) or not isinstance(apart, dict):
        return template
    spec, affinity, together, apart = dict(spec), dict(affinity), dict(together), dict(apart)
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    same_job: list[dict[str, Any]] = [{"key": key_label, "operator": "In", "values": [job_key]}]
    other_jobs: list[dict[str, Any]] = [
        {"key": key_label, "operator": "Exists"},
        {"key": key_label, "operator": "NotIn", "values": [job_key]},
    ]
    together[required] = [*(together.get(required) or []), term(same_job)]
    apart[required] = [*(apart.get(required) or []), term(other_jobs)]
    affinity.update(podAffinity=together, podAntiAffinity=apart)
    spec["affinity"] = affinity
    return {**template, "spec": spec}


def _sha1(text: str) -> str:
    """kubernetes-sigs/jobset ``jobHashKey`` and lws ``genGroupUniqueKey``: the SHA-1 of
    "namespace/name" (the Job's, the group leader pod's), in hex."""
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


def _leader_worker_set(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    replicas = ctx.integer(spec.get("replicas"), "spec.replicas", default=1, minimum=0)
    lwt = ctx.mapping(spec.get("leaderWorkerTemplate"), "spec.leaderWorkerTemplate")
    size = ctx.integer(lwt.get("size"), "spec.leaderWorkerTemplate.size", default=1, minimum=1)
    worker = ctx.mapping(lwt.get("workerTemplate"), "spec.leaderWorkerTemplate.workerTemplate")
    leader = ctx.mapping(lwt.get("leaderTemplate"), "spec.leaderWorkerTemplate.leaderTemplate")
    mine = [
        p for p in _live(pods, controller.namespace) if p.labels.get(LWS_NAME) == controller.name
    ]
    queue = _kueue_queue(controller)
    enforced = queue is not None or gang_scheduled(leader, worker)
    exclusive, reasons = _lws_exclusive(controller)
    objects: list[dict[str, Any]] = []
    gangs: list[Gang] = []
    for group in range(replicas):
        have = {p.name for p in mine if p.labels.get(LWS_GROUP_INDEX) == str(group)}
        labels = {LWS_NAME: controller.name, LWS_GROUP_INDEX: str(group)}
        group_name = f"{controller.name}-{group}"
        group_key = _sha1(f"{controller.namespace}/{group_name}")
        if exclusive is not None:
            labels[LWS_GROUP_KEY] = group_key
        names = [group_name] + [f"{group_name}-{j}" for j in range(1, size)]
        for index, name in enumerate(names):
            if name in have:
                continue
            template = leader if index == 0 and leader else worker
            if exclusive is not None:
                template = _exclusive_template(
                    template, exclusive, group_key, LWS_GROUP_KEY, every_namespace=False
                )
            pod = pod_object(controller, template, name, labels)
            if enforced:
                pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group_name
            objects.append(pod)
        if enforced:
            gangs.append(Gang(controller.namespace, group_name, size))
    return Wanted(controller.ctx.object, tuple(objects), tuple(gangs), queue, reasons)


def _lws_exclusive(controller: Controller) -> tuple[str | None, tuple[str, ...]]:
    """The topology key of a LeaderWorkerSet's exclusive placement (one group per
    domain), and what is not modelled: exclusive placement per subgroup."""
    annotations = _annotations(controller)
    level = annotations.get(LWS_EXCLUSIVE)
    if LWS_SUBGROUP_EXCLUSIVE in annotations:
        per = annotations[LWS_SUBGROUP_EXCLUSIVE]
        said = f"LeaderWorkerSet exclusive placement per subgroup per {per}"
        return level, (f"{said} ({LWS_SUBGROUP_EXCLUSIVE}) not supported",)
    return level, ()


def _kueue_workload(controller: Controller, pods: list[Pod]) -> Wanted | str:
    """A Workload with no owner in the input: its pod sets, unless it is deactivated
    (``spec.active: false``) or already admitted (its pods exist, just not exported)."""
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    if spec.get("active") is False:
        return "deactivated (spec.active: false), creates no pods"
    admission = ctx.mapping(
        ctx.mapping(obj.get("status"), "status").get("admission"), "status.admission"
    )
    if admission:
        cluster_queue = ctx.text(admission.get("clusterQueue"), "status.admission.clusterQueue")
        return (
            f"admitted to ClusterQueue {cluster_queue}; its pods are not in the input (not counted)"
        )
    objects = []
    for path, pod_set in ctx.items(spec.get("podSets"), "spec.podSets"):
        set_name = ctx.text(pod_set.get("name"), f"{path}.name", required=True)
        count = ctx.integer(pod_set.get("count"), f"{path}.count", default=1, minimum=0)
        template = ctx.mapping(pod_set.get("template"), f"{path}.template")
        objects += [
            pod_object(controller, template, f"{controller.name}-{set_name}-{n}", {})
            for n in range(count)
        ]
    queue_name = ctx.text(spec.get("queueName"), "spec.queueName")
    queue = f"LocalQueue/{controller.namespace}/{queue_name}" if queue_name else None
    return _wanted(controller, tuple(objects), queue, gang_always=True)


def _volcano_job(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    mine = {
        p.name
        for p in _live(pods, controller.namespace)
        if p.labels.get(VOLCANO_JOB_NAME) == controller.name
    }
    objects, total, unsupported = [], 0, []
    if spec.get("networkTopology"):
        unsupported.append("Volcano networkTopology (HyperNode tiers) not supported")
    for path, task in ctx.items(spec.get("tasks"), "spec.tasks"):
        task_name = ctx.text(task.get("name"), f"{path}.name", required=True)
        replicas = ctx.integer(task.get("replicas"), f"{path}.replicas", default=1, minimum=0)
        total += replicas
        if task.get("partitionPolicy"):
            unsupported.append("Volcano task partitionPolicy not supported")
        template = ctx.mapping(task.get("template"), f"{path}.template")
        labels = {VOLCANO_JOB_NAME: controller.name}
        names = [f"{controller.name}-{task_name}-{i}" for i in range(replicas)]
        objects += [pod_object(controller, template, n, labels) for n in names if n not in mine]
    min_available = ctx.integer(spec.get("minAvailable"), "spec.minAvailable", default=total)
    queue = f"VolcanoQueue/{ctx.text(spec.get('queue'), 'spec.queue') or 'default'}"
    # no pod yet: the PodGroup is still Pending (the job controller creates pods once
    # it is Inqueue); its minResources are then the first pods' requests (add_wanted_pods)
    gang = Gang(
        controller.namespace, controller.name, min_available, queue=queue, pods_on_enqueue=not mine
    )
    reasons = tuple(dict.fromkeys(unsupported))
    return Wanted(controller.ctx.object, tuple(objects), (gang,), queue, reasons)


def _replicated(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    replicas = ctx.integer(spec.get("replicas"), "spec.replicas", default=1, minimum=0)
    selector = ctx.labels(
        ctx.mapping(spec.get("selector"), "spec.selector").get("matchLabels"),
        "spec.selector.matchLabels",
    )
    template = ctx.mapping(spec.get("template"), "spec.template")
    if not selector:
        selector = ctx.labels(
            ctx.mapping(template.get("metadata"), "spec.template.metadata").get("labels"),
            "spec.template.metadata.labels",
        )
    mine = [
        p
        for p in _live(pods, controller.namespace)
        if selector and all(p.labels.get(k) == v for k, v in selector.items())
    ]
    have = max(len(mine), ctx.integer(status.get("replicas"), "status.replicas", default=0))
    missing = max(0, replicas - have)
    if controller.kind == "StatefulSet":
        names = _free_names(controller.name, {p.name.rpartition("-")[2] for p in mine}, missing)
    else:
        names = [f"{controller.name}-pending-{n}" for n in range(missing)]
    objects = tuple(pod_object(controller, template, n, {}) for n in names)
    return _wanted(controller, objects, _kueue_queue(controller))


def declared_gang(controller: Controller) -> tuple[Gang, str]:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    min_member = ctx.integer(spec.get("minMember"), "spec.minMember", default=1, minimum=0)
    queue_name = ctx.text(spec.get("queue"), "spec.queue")
    if controller.group == "scheduling.volcano.sh":
        volcano_queue = f"VolcanoQueue/{queue_name or 'default'}"
        gang = Gang(
            controller.namespace,
            controller.name,
            min_member,
            queue=volcano_queue,
            min_resources=_pending_min_resources(controller, spec),
        )
        note = f"{ctx.object}: Volcano gang of minMember {min_member} in queue {volcano_queue}"
        return gang, note
    topology = ctx.mapping(spec.get("topologyConstraint"), "spec.topologyConstraint")
    queue = f"KaiQueue/{queue_name}" if queue_name else None
    gang = Gang(
        controller.namespace,
        controller.name,
        min_member,
        required_topology=ctx.text(
            topology.get("requiredTopologyLevel"), "spec.topologyConstraint.requiredTopologyLevel"
        )
        or None,
        preferred_topology=ctx.text(
            topology.get("preferredTopologyLevel"),
            "spec.topologyConstraint.preferredTopologyLevel",
        )
        or None,
        queue=queue,
    )
    subgroups = ctx.items(spec.get("subGroups"), "spec.subGroups")
    note = f"{ctx.object}: KAI gang of minMember {min_member} in queue {queue}"
    if subgroups:
        names = ", ".join(str(s.get("name")) for _, s in subgroups)
        note += f"; subGroups ({names}) unsupported: the gang is enforced on the whole PodGroup"
    return gang, note


def _pending_min_resources(controller: Controller, spec: dict[str, Any]) -> dict[str, int] | None:
    """A Volcano PodGroup's ``spec.minResources`` while its ``status.phase`` is Pending
    (or not yet set): what the enqueue action checks before it lets the group go
    Inqueue. None once it is Inqueue or further, or when it has none (upstream: a
    PodGroup without minResources is always enqueued). ``pods`` and ``count/*`` entries
    are object counts, not requests: left out."""
    ctx = controller.ctx
    status = ctx.mapping(controller.obj.get("status"), "status")
    phase = ctx.text(status.get("phase"), "status.phase") or "Pending"
    raw = ctx.mapping(spec.get("minResources"), "spec.minResources")
    if phase != "Pending" or not raw:
        return None
    return {
        str(name): resource_amount(ctx, str(name), value, f"spec.minResources.{name}")
        for name, value in raw.items()
        if name != "pods" and not str(name).startswith("count/")
    }


BUILDERS: dict[tuple[str, str], Callable[[Controller, list[Pod]], Wanted | str]] = {
    ("Job", "batch"): _job,
    ("JobSet", "jobset.x-k8s.io"): _jobset,
    ("LeaderWorkerSet", "leaderworkerset.x-k8s.io"): _leader_worker_set,
    ("Workload", "kueue.x-k8s.io"): _kueue_workload,
    ("Job", "batch.volcano.sh"): _volcano_job,
    ("Deployment", "apps"): _replicated,
    ("ReplicaSet", "apps"): _replicated,
    ("StatefulSet", "apps"): _replicated,
}


# --- shared helpers ---------------------------------------------------------------------


def _live(pods: list[Pod], namespace: str) -> Iterator[Pod]:
    return (p for p in pods if p.namespace == namespace and p.synthesized_by is None)


def _exclusive(controller: Controller, annotation: str, kind: str) -> tuple[str, ...]:
    """Exclusive placement the model does not follow (a JobSet's node-selector strategy): said."""
    annotations = _annotations(controller)
    if annotation in annotations:
        level = annotations[annotation]
        return (f"{kind} exclusive placement per {level} ({annotation}) not supported",)
    return ()


def gang_scheduled(*templates: dict[str, Any]) -> bool:
    """A pod template names a gang scheduler (``podowner.GANG_SCHEDULERS``)."""
    return any(
        isinstance(t.get("spec"), dict) and t["spec"].get("schedulerName") in GANG_SCHEDULERS
        for t in templates
    )


def _kueue_queue(controller: Controller) -> str | None:
    meta = controller.ctx.mapping(controller.obj.get("metadata"), "metadata")
    labels = controller.ctx.labels(meta.get("labels"), "metadata.labels")
    name = labels.get(KUEUE_QUEUE_LABEL)
    return f"LocalQueue/{controller.namespace}/{name}" if name else None


def _wanted(
    controller: Controller,
    objects: tuple[dict[str, Any], ...],
    queue: str | None,
    *,
    gang_always: bool = False,
) -> Wanted:
    """Kueue admits a queued controller's pods as one Workload: one gang for all of them."""
    gangs: tuple[Gang, ...] = ()
    if objects and (queue is not None or gang_always):
        gangs = (Gang(controller.namespace, controller.name, len(objects), queue=queue),)
    return Wanted(controller.ctx.object, objects, gangs, queue)


def pod_object(
    controller: Controller, template: dict[str, Any], name: str, labels: dict[str, str]
) -> dict[str, Any]:
    """The pod a controller creates from ``template`` (metadata merged, phase Pending)."""
    raw_meta = template.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    owner_meta = controller.obj.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": controller.namespace,
            "labels": {**(meta.get("labels") or {}), **labels},
            "annotations": dict(meta.get("annotations") or {}),
            "creationTimestamp": owner_meta.get("creationTimestamp"),
        },
        "spec": template.get("spec") or {},
        "status": {"phase": "Pending"},
    }
