"""Kubeflow training jobs as the pods (and gang) their operators create.

Pure: no Django, no I/O. ``topology.kube.core.controllers`` registers these builders;
``topology.kube.workloads`` expands them like every controller.

- PyTorchJob (``kubeflow.org/v1``; kubeflow/training-operator
  ``pkg/controller.v1/pytorch``, ``pkg/controller.v1/common/pod.go``): each
  ``pytorchReplicaSpecs.<Type>`` makes ``replicas`` (default 1) pods
  ``<job>-<type>-<index>`` (type lower-cased), labelled
  ``training.kubeflow.org/job-name``, ``.../replica-type``, ``.../replica-index``.
  Under a gang scheduler or Kueue the job runs all or nothing: one gang of
  ``runPolicy.schedulingPolicy.minAvailable`` (default: every replica). The
  operator makes the PodGroup only when started with ``--gang-scheduler-name``
  (``pkg/controller.v1/common/pod.go``: ``EnableGangScheduling``), which shows in
  a replica template's ``schedulerName`` (volcano, kai-scheduler) or a queue label;
  otherwise kube-scheduler binds the pods one by one (``Pod.app_group``).
  ``runPolicy.suspend`` without a Kueue queue: no pods.
- MPIJob (kubeflow/mpi-operator ``kubeflow.org/v2beta1``, ``pkg/controller/
  mpi_job_controller.go``; the training-operator's ``kubeflow.org/v1`` alike):
  ``mpiReplicaSpecs.Launcher`` one pod (a batch Job ``<job>-launcher``, ``newLauncherJob``;
  ``<job>-launcher`` here) and ``Worker`` ``replicas`` pods ``<job>-worker-<i>``
  (``newWorker``), labelled ``training.kubeflow.org/job-name``, ``.../job-role``
  (launcher, worker; v1: ``.../replica-type``) and, on workers, ``.../replica-index``.
  All or nothing only where something enforces it: the operator started with
  ``--gang-scheduling`` sets the pods' ``schedulerName`` to that scheduler and makes a
  PodGroup of ``runPolicy.schedulingPolicy.minAvailable`` (default: workers + launcher,
  ``newPodGroup``), which shows in a template's ``schedulerName`` (volcano,
  kai-scheduler), or Kueue (queue label: one Workload); otherwise kube-scheduler binds
  the launcher and each worker alone (``Pod.app_group``) and a partial placement is
  what happens. ``runPolicy.suspend`` without a Kueue queue: no pods.
- TrainJob (Kubeflow Trainer v2, ``trainer.kubeflow.org/v1alpha1``): the trainer
  runs ``spec.trainer.numNodes`` (default 1) nodes as the JobSet its runtime
  defines (``<trainjob>-node-0-<i>``, JobSet labels), each asking
  ``spec.trainer.resourcesPerNode``; one gang of them under Kueue or KAI (queue
  label), else separate pods (the runtime's ``podGroupPolicy`` is not read). The runtime
  (``runtimeRef``, a ClusterTrainingRuntime or TrainingRuntime) is not read: its
  pod template's other fields (nodeSelector, tolerations, init containers) are
  not known, which the evaluation notes.

Queue: Kueue's ``kueue.x-k8s.io/queue-name`` label, else KAI's
``kai.scheduler/queue``.
"""

from __future__ import annotations

from typing import Any

from topology.kube.core.controllers import Controller, Wanted, gang_scheduled, pod_object
from topology.model.hardware import Gang, Pod

JOB_NAME = "training.kubeflow.org/job-name"
JOB_ROLE = "training.kubeflow.org/job-role"  # mpi-operator v2beta1
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KAI_QUEUE_LABEL = "kai.scheduler/queue"


def pytorch_job(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx = controller.ctx
    read = _job_spec(controller)
    if isinstance(read, str):
        return read
    spec, run_policy, queue = read
    have = {
        (p.labels.get(REPLICA_TYPE), p.labels.get(REPLICA_INDEX))
        for p in pods
        if p.namespace == controller.namespace
        and p.synthesized_by is None
        and p.labels.get(JOB_NAME) == controller.name
    }
    replica_specs = ctx.mapping(spec.get("pytorchReplicaSpecs"), "spec.pytorchReplicaSpecs")
    objects, total, templates = [], 0, []
    for replica_type in sorted(replica_specs, key=lambda t: (t != "Master", t)):
        path = f"spec.pytorchReplicaSpecs.{replica_type}"
        replica = ctx.mapping(replica_specs[replica_type], path)
        count = ctx.integer(replica.get("replicas"), f"{path}.replicas", default=1, minimum=0)
        total += count
        template = ctx.mapping(replica.get("template"), f"{path}.template")
        templates.append(template)
        kind = str(replica_type).lower()
        for index in range(count):
            if (kind, str(index)) in have:
                continue
            labels = {JOB_NAME: controller.name, REPLICA_TYPE: kind, REPLICA_INDEX: str(index)}
            objects.append(
                pod_object(controller, template, f"{controller.name}-{kind}-{index}", labels)
            )
    return _wanted(controller, run_policy, total, templates, objects, queue)


def mpi_job(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    read = _job_spec(controller)
    if isinstance(read, str):
        return read
    spec, run_policy, queue = read
    have = set()
    for p in pods:
        if p.namespace != controller.namespace or p.synthesized_by is not None:
            continue
        if p.labels.get(JOB_NAME) != controller.name:
            continue
        role = p.labels.get(JOB_ROLE) or p.labels.get(REPLICA_TYPE)
        have.add(role if role == "launcher" else (role, p.labels.get(REPLICA_INDEX)))
    replica_specs = ctx.mapping(spec.get("mpiReplicaSpecs"), "spec.mpiReplicaSpecs")
    training_operator = str(obj.get("apiVersion", "")).endswith("/v1")
    role_label = REPLICA_TYPE if training_operator else JOB_ROLE
    objects, total, templates = [], 0, []
    for replica_type in ("Launcher", "Worker"):
        path = f"spec.mpiReplicaSpecs.{replica_type}"
        replica = ctx.mapping(replica_specs.get(replica_type), path)
        if not replica:
            continue
        default = 1 if replica_type == "Launcher" else 0  # workerReplicas: 0 when unset
        count = ctx.integer(replica.get("replicas"), f"{path}.replicas", default=default, minimum=0)
        total += count
        template = ctx.mapping(replica.get("template"), f"{path}.template")
        templates.append(template)
        role = replica_type.lower()
        for index in range(count):
            labels = {JOB_NAME: controller.name, role_label: role}
            if role == "launcher":
                if role in have:
                    continue
                name = f"{controller.name}-launcher"
            else:
                if (role, str(index)) in have:
                    continue
                labels[REPLICA_INDEX] = str(index)
                name = f"{controller.name}-worker-{index}"
            objects.append(pod_object(controller, template, name, labels))
    return _wanted(controller, run_policy, total, templates, objects, queue)


def train_job(controller: Controller, pods: list[Pod]) -> Wanted | str:
    ctx, obj = controller.ctx, controller.obj
    spec = ctx.mapping(obj.get("spec"), "spec")
    queue = _queue(controller)
    if ctx.boolean(spec.get("suspend"), "spec.suspend") and not _kueue(controller):
        return "suspended, creates no pods"
    trainer = ctx.mapping(spec.get("trainer"), "spec.trainer")
    nodes = ctx.integer(trainer.get("numNodes"), "spec.trainer.numNodes", default=1, minimum=0)
    resources = ctx.mapping(trainer.get("resourcesPerNode"), "spec.trainer.resourcesPerNode")
    have = sum(
        1
        for p in pods
        if p.namespace == controller.namespace
        and p.synthesized_by is None
        and p.labels.get(JOBSET_NAME) == controller.name
    )
    template = {"spec": {"containers": [{"name": "node", "resources": resources}]}}
    labels = {JOBSET_NAME: controller.name}
    objects = tuple(
        pod_object(controller, template, f"{controller.name}-node-0-{i}", labels)
        for i in range(have, nodes)
    )
    said = (runtime_note(controller),)
    if queue is None:
        group = f"{controller.namespace}/{controller.name}"
        return Wanted(controller.ctx.object, objects, (), queue, said=said, app_group=group)
    gang = Gang(controller.namespace, controller.name, nodes, queue=queue)
    return Wanted(controller.ctx.object, objects, (gang,), queue, said=said)


def runtime_note(controller: Controller) -> str:
    ref = controller.ctx.mapping(
        controller.ctx.mapping(controller.obj.get("spec"), "spec").get("runtimeRef"),
        "spec.runtimeRef",
    )
    runtime = f"{ref.get('kind') or 'ClusterTrainingRuntime'}/{ref.get('name') or '?'}"
    return (
        f"built by {controller.ctx.object}, whose runtime {runtime} is not read: "
        "only trainer.numNodes and resourcesPerNode are known of its pods"
    )


def _labels(controller: Controller) -> dict[str, str]:
    meta = controller.ctx.mapping(controller.obj.get("metadata"), "metadata")
    return dict(controller.ctx.labels(meta.get("labels"), "metadata.labels"))


def _kueue(controller: Controller) -> bool:
    return bool(_labels(controller).get(KUEUE_QUEUE_LABEL))


def _queue(controller: Controller) -> str | None:
    labels = _labels(controller)
    if labels.get(KUEUE_QUEUE_LABEL):
        return f"LocalQueue/{controller.namespace}/{labels[KUEUE_QUEUE_LABEL]}"
    if labels.get(KAI_QUEUE_LABEL):
        return f"KaiQueue/{labels[KAI_QUEUE_LABEL]}"
    return None


def _job_spec(controller: Controller) -> tuple[dict[str, Any], dict[str, Any], str | None] | str:
    """A Kubeflow job's spec, its runPolicy and its queue; or, suspended outside Kueue
    (whose admission unsuspends it), why it makes no pods."""
    ctx = controller.ctx
    spec = ctx.mapping(controller.obj.get("spec"), "spec")
    run_policy = ctx.mapping(spec.get("runPolicy"), "spec.runPolicy")
    if ctx.boolean(run_policy.get("suspend"), "spec.runPolicy.suspend") and not _kueue(controller):
        return "suspended, creates no pods"
    return spec, run_policy, _queue(controller)


def _wanted(
    controller: Controller,
    run_policy: dict[str, Any],
    total: int,
    templates: list[Any],
    objects: list[dict[str, Any]],
    queue: str | None,
) -> Wanted:
    """The job's pods, one gang only where something enforces all-or-nothing: a Kueue
    queue or a gang scheduler named in its templates (``runPolicy.schedulingPolicy``'s
    ``minAvailable``, every replica by default)."""
    ctx = controller.ctx
    scheduling = ctx.mapping(run_policy.get("schedulingPolicy"), "spec.runPolicy.schedulingPolicy")
    minimum = ctx.integer(
        scheduling.get("minAvailable"),
        "spec.runPolicy.schedulingPolicy.minAvailable",
        default=total,
    )
    if queue is None and not gang_scheduled(*templates):
        return Wanted(ctx.object, tuple(objects), (), queue)
    gang = Gang(controller.namespace, controller.name, minimum, queue=queue)
    return Wanted(ctx.object, tuple(objects), (gang,), queue)
