"""Pending work from the controllers people run: the pods they have not created yet.

Pure: no Django, no I/O. A cluster export holds Jobs, JobSets, Deployments...
long before (or instead of) their pods. A pod the controller will create is
pending demand all the same, so it is synthesized from the controller's pod
template, named deterministically and marked ``synthesized_by``::

    controller ──► how many pods it wants now ──► minus the live pods it already has
                                                   (matched by the labels the
                                                    controller puts on them)
               ──► that many pod objects ──► topology.kube.parse's own Pod parser

How many pods each controller wants, as its controller computes it, and the gangs
declared without pods of their own (Volcano and KAI PodGroups): ``topology.kube.core.controllers``.

Kueue-managed controllers (queue label) are one gang: Kueue admits the
Workload as a whole, and Topology-Aware Scheduling places each pod set in one
domain of its required level.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from topology.kube import training as trainingjobs
from topology.kube.core.controllers import (
    BUILDERS,
    Controller,
    Wanted,
    declared_gang,
)
from topology.kube.fields import ObjectContext
from topology.kube.kueue.quotas import requests_of
from topology.model.hardware import Gang, ModelError, Pod, UnsupportedField

__all__ = ["Controller", "Wanted"]

# Kubeflow training jobs (topology.kube.training) are built like the other controllers
TRAINING_BUILDERS = {
    ("PyTorchJob", "kubeflow.org"): trainingjobs.pytorch_job,
    ("TrainJob", "trainer.kubeflow.org"): trainingjobs.train_job,
    ("MPIJob", "kubeflow.org"): trainingjobs.mpi_job,
}
CONTROLLER_KINDS = (
    *TRAINING_BUILDERS,
    ("Job", "batch"),
    ("JobSet", "jobset.x-k8s.io"),
    ("LeaderWorkerSet", "leaderworkerset.x-k8s.io"),
    ("Workload", "kueue.x-k8s.io"),
    ("Job", "batch.volcano.sh"),
    ("Deployment", "apps"),
    ("ReplicaSet", "apps"),
    ("StatefulSet", "apps"),
    ("PodGroup", "scheduling.volcano.sh"),
    ("PodGroup", "scheduling.run.ai"),
)
NAMESPACED_KINDS = (
    "Job",
    "JobSet",
    "LeaderWorkerSet",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "PyTorchJob",
    "TrainJob",
    "MPIJob",
)


def collect(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """topology.kube.parse handler: controllers are expanded once every pod has been read."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    owners = tuple(
        (ctx.text(ref.get("kind"), f"{path}.kind"), ctx.text(ref.get("name"), f"{path}.name"))
        for path, ref in ctx.items(meta.get("ownerReferences"), "metadata.ownerReferences")
    )
    collected.controllers.append(Controller(ctx, str(obj["kind"]), group, obj, owners))


@dataclass(slots=True)
class Expansion:
    wanted: list[Wanted] = field(default_factory=list)
    gangs: list[Gang] = field(default_factory=list)  # declared without pods of their own
    notes: list[str] = field(default_factory=list)
    errors: list[ModelError] = field(default_factory=list)


_MALFORMED = (TypeError, ValueError, KeyError, AttributeError, IndexError, ArithmeticError)


def expand(controllers: list[Controller], pods: list[Pod]) -> Expansion:
    """Every controller → the pods it will still create; declared gangs; notes; a
    controller that cannot be read becomes an error, the others are kept."""
    present = {(c.kind, c.namespace, c.name) for c in controllers}
    present |= {("Pod", p.namespace, p.name) for p in pods}
    expansion = Expansion()
    for controller in controllers:
        try:
            _expand_one(expansion, controller, controllers, present, pods)
        except ModelError as error:
            expansion.errors.append(error)
        except _MALFORMED as error:
            ctx = controller.ctx
            expansion.errors.append(ModelError(ctx.source, ctx.object, "", f"malformed: {error!r}"))
    return expansion


def _expand_one(
    expansion: Expansion,
    controller: Controller,
    controllers: list[Controller],
    present: set[tuple[str, str, str]],
    pods: list[Pod],
) -> None:
    label = controller.ctx.object
    owner = _present_owner(controller, present)
    if owner and controller.kind != "ReplicaSet":  # a Deployment counts through its RS
        expansion.notes.append(f"{label}: counted through its owner {owner}")
        return
    if controller.kind == "PodGroup":
        gang, note = declared_gang(controller)
        expansion.gangs.append(gang)
        expansion.notes.append(note)
        return
    if controller.kind == "Deployment" and _has_replica_set(controller, controllers):
        expansion.notes.append(f"{label}: counted through its ReplicaSet")
        return
    key = (controller.kind, controller.group)
    result = (BUILDERS.get(key) or TRAINING_BUILDERS[key])(controller, pods)
    if isinstance(result, str):
        expansion.notes.append(f"{label}: {result}")
        return
    expansion.wanted.append(result)
    if not result.pods:
        expansion.notes.append(f"{label}: every pod it wants already exists")


def _present_owner(controller: Controller, present: set[tuple[str, str, str]]) -> str | None:
    for kind, name in controller.owners:
        if (kind, controller.namespace, name) in present:
            return f"{kind}/{controller.namespace}/{name}"
    return None


def _has_replica_set(deployment: Controller, controllers: list[Controller]) -> bool:
    return any(
        c.kind == "ReplicaSet"
        and c.namespace == deployment.namespace
        and ("Deployment", deployment.name) in c.owners
        for c in controllers
    )


def synthesized(pod: Pod, wanted: Wanted) -> Pod:
    """A parsed synthesized pod with its controller, queue and (controller) gang."""
    gang = pod.gang
    if gang is None and len(wanted.gangs) == 1:
        gang = wanted.gangs[0].key
    return replace(
        pod,
        gang=gang,
        app_group=None if gang else pod.app_group or wanted.app_group,
        queue=wanted.queue,
        synthesized_by=wanted.controller,
        unsupported=tuple(dict.fromkeys((*pod.unsupported, *wanted.unsupported))),
    )


def add_wanted_pods(collected: Any, parse_pod: Callable[[Any, ObjectContext, Any], None]) -> None:
    """topology.kube.parse assembly hook: synthesized pods parsed by kube's own Pod parser."""
    pods = [record.pod for record in collected.pods]
    expansion = expand(collected.controllers, pods)
    collected.errors.extend(expansion.errors)
    declared = list(expansion.gangs)
    for item in expansion.wanted:
        source = next(
            c.ctx.source for c in collected.controllers if c.ctx.object == item.controller
        )
        start = len(collected.pods)
        for obj in item.pods:
            meta = obj["metadata"]
            ctx = ObjectContext(source, f"Pod/{meta['namespace']}/{meta['name']}")
            before = len(collected.pods)
            try:
                parse_pod(collected, ctx, obj)
            except ModelError as error:
                collected.errors.append(
                    ModelError(
                        source, item.controller, f"pod template ({error.field})", error.reason
                    )
                )
                break
            for record in collected.pods[before:]:
                record.pod = synthesized(record.pod, item)
                record.unmodelled += [
                    UnsupportedField(ctx.object, "metadata.ownerReferences", reason, blocking=False)
                    for reason in item.said
                ]
        made = [record.pod for record in collected.pods[start:]]
        declared += [_with_min_resources(gang, made) for gang in item.gangs]
    for gang in declared:
        collected.pod_groups.setdefault((gang.namespace, gang.name), gang)
    collected.notes.extend(expansion.notes)


def _with_min_resources(gang: Gang, pods: list[Pod]) -> Gang:
    """A Volcano Job's PodGroup, not yet Inqueue, with the minResources its job controller
    gives it (volcano ``pkg/controllers/job/job_controller_actions.go``
    ``calcPGMinResources``): the requests of its first ``minAvailable`` pods, tasks by
    priority (highest first)."""
    if not gang.pods_on_enqueue or gang.min_resources is not None:
        return gang
    first = sorted(pods, key=lambda p: -p.priority)[: gang.min_member]
    return replace(gang, min_resources=dict(requests_of(first)))


def with_template_owners(collected: Any) -> None:
    """topology.kube.parse assembly hook: each ReplicaSet pod's ``template_owner``.

    The Deployment controller makes a ReplicaSet per pod template and names itself its
    controller owner (``pkg/controller/deployment/sync.go`` ``getNewReplicaSet``): a
    change to the pods' template is made on the Deployment, which rolls a new
    ReplicaSet out. A ReplicaSet read without a Deployment owner is its own template's
    owner; one not read leaves the field None (its owner is not known).

    And each Job pod's ``cron_job``: the CronJob controller makes each run's Job from
    its ``spec.jobTemplate`` and names itself the Job's controller owner
    (``pkg/controller/cronjob/utils.go`` ``getJobFromTemplate2``): the next runs'
    template. A Job not read leaves it None."""
    owners: dict[str, str] = {}
    cron_jobs: dict[str, str] = {}
    for controller in collected.controllers:
        ns = controller.namespace
        if controller.kind == "Job" and controller.group == "batch":
            crons = [name for kind, name in controller.owners if kind == "CronJob"]
            if crons:
                cron_jobs[f"Job/{ns}/{controller.name}"] = f"CronJob/{ns}/{crons[0]}"
        if controller.kind != "ReplicaSet" or controller.group != "apps":
            continue
        key = f"ReplicaSet/{ns}/{controller.name}"
        deployments = [name for kind, name in controller.owners if kind == "Deployment"]
        owners[key] = f"Deployment/{ns}/{deployments[0]}" if deployments else key
    for record in collected.pods:
        owner = owners.get(record.pod.controller or "")
        if owner is not None:
            record.pod = replace(record.pod, template_owner=owner)
        cron_job = cron_jobs.get(record.pod.controller or "")
        if cron_job is not None:
            record.pod = replace(record.pod, cron_job=cron_job)
