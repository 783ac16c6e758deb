"""Pod objects → ``Pod``: effective requests, node selection, gang, topology
annotations, and the claims (DRA and PersistentVolumeClaim) assembly resolves later.

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches Pods here (and the pods that
``topology.kube.workloads`` expands from controllers); ``topology.kube.discovery`` reads
DaemonSet pod templates with ``pod_spec_requests``. Succeeded/Failed (and Unknown)
pods are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from topology.kube import kai as kaishares
from topology.kube.core import (
    admission,
    disruption,
    drainfields,
    podaffinity,
    podowner,
    podrequests,
    podspec,
    podstatus,
    preferred,
    volumes,
)
from topology.kube.core.controllers import annotated_gang
from topology.kube.core.nodes import REQUIRED_AFFINITY, pod_tolerations, required_node_affinity
from topology.kube.dra import extended as dra_extended
from topology.kube.fields import ObjectContext, namespace_name, object_label
from topology.model.hardware import (
    GPU_RESOURCE,
    SHARED_GPU_RESOURCE,
    GpuRequest,
    Pod,
    Resources,
    UnsupportedField,
)

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
KUEUE_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
# cluster-autoscaler core/static_autoscaler.go filterOutYoungPods: the pod's own delay
SCALE_UP_DELAY_ANNOTATION = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"
# cluster-autoscaler provisioningrequest/pods/pods.go (and apis v1beta1): current and
# deprecated keys of the annotations a pod consuming a ProvisioningRequest carries
CONSUME_PROVISIONING_REQUEST = (
    "autoscaling.x-k8s.io/consume-provisioning-request",
    "cluster-autoscaler.kubernetes.io/consume-provisioning-request",
)
PROVISIONING_CLASS = (
    "autoscaling.x-k8s.io/provisioning-class-name",
    "cluster-autoscaler.kubernetes.io/provisioning-class-name",
)
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
LWS_SIZE = "leaderworkerset.sigs.k8s.io/size"  # annotation: the group's pods
TRAINING_JOB_NAME = "training.kubeflow.org/job-name"
SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
LIVE_PHASES = ("", "Pending", "Running")
# cluster-autoscaler utils/pod/pod.go IsDaemonSetPod, IsMirrorPod (kubelet config.mirror key)
DAEMON_SET_POD_ANNOTATION = "cluster-autoscaler.kubernetes.io/daemonset-pod"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass(slots=True)
class PodRecord:
    """A parsed pod and what assembly still has to resolve for it."""

    pod: Pod
    claim_refs: list[tuple[str, str, str]]  # (entry name, "claim"|"template", object name)
    unmodelled: list[UnsupportedField] = field(default_factory=list)
    volume_claims: list[str] = field(default_factory=list)  # PersistentVolumeClaim names
    group_total: int | None = None  # kueue pod-group-total-count
    # status.resourceClaimStatuses: entry name → the ResourceClaim made from its template
    claim_statuses: dict[str, str] = field(default_factory=dict)
    admission: admission.PodAdmission = field(default_factory=admission.PodAdmission)
    extended_claim: str = ""  # status.extendedResourceClaimStatus.resourceClaimName

    def copy(self) -> PodRecord:
        """A record assembly may change (its pod replaced, its lists added to) without
        changing this one: what ``topology.kube.parsecache`` hands out of a cached parse."""
        return PodRecord(
            self.pod,
            list(self.claim_refs),
            list(self.unmodelled),
            list(self.volume_claims),
            self.group_total,
            dict(self.claim_statuses),
            self.admission,
            self.extended_claim,
        )


def parse_pod(ctx: ObjectContext, obj: dict[str, Any]) -> PodRecord | None:
    """A live pod's record; None for a finished one."""
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    if ctx.text(status.get("phase"), "status.phase") not in LIVE_PHASES:
        return None
    namespace, name = namespace_name(ctx)
    labels = ctx.labels(meta.get("labels"), "metadata.labels")
    annotations = ctx.labels(meta.get("annotations"), "metadata.annotations")
    requests, gpu = pod_spec_requests(ctx, spec)
    gpu = gpu or kaishares.fraction_request(ctx, annotations)
    affinity, affinity_unsupported = required_node_affinity(ctx, spec.get("affinity"))
    node_name = ctx.text(spec.get("nodeName"), "spec.nodeName") or None
    unmodelled = podspec.unmodelled_fields(ctx, spec, bound=node_name is not None)
    unmodelled += [
        UnsupportedField(ctx.object, f"spec.affinity.nodeAffinity.{REQUIRED_AFFINITY}", reason)
        for reason in affinity_unsupported
    ]
    unmodelled += _annotation_unsupported(ctx, annotations)
    unmodelled += podowner.approximated(ctx, spec)
    unmodelled += kaishares.unmodelled(ctx, annotations)
    pod = Pod(
        namespace=namespace,
        name=name,
        requests=requests,
        gpu=gpu,
        node_selector=ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector"),
        affinity=affinity,
        tolerations=pod_tolerations(ctx, spec.get("tolerations")),
        labels=labels,
        priority=ctx.integer(spec.get("priority"), "spec.priority"),
        arrival=_arrival(ctx, meta.get("creationTimestamp")),
        node_name=node_name,
        gang=_gang_name(ctx, namespace, labels, spec)
        or annotated_gang(namespace, annotations)
        or _controller_gang(ctx, namespace, labels, spec),
        app_group=_app_group(ctx, namespace, labels, spec, annotations),
        required_topology=annotations.get(REQUIRED_TOPOLOGY) or None,
        preferred_topology=annotations.get(PREFERRED_TOPOLOGY) or None,
        unsupported=tuple(dict.fromkeys(u.reason for u in unmodelled if u.blocking)),
        scheduling_gates=podspec.scheduling_gates(ctx, spec),
        provisioning_request=_provisioning_request(annotations),
        scale_up_delay=annotations.get(SCALE_UP_DELAY_ANNOTATION) or None,
        scheduled=podstatus.pod_scheduled(ctx, status),
        **_inter_pod(ctx, spec, namespace, labels),
        host_ports=podspec.host_ports(ctx, spec),
        **disruption.preemption_fields(ctx, spec, status),
        node_daemon=_node_daemon(ctx, meta, namespace, annotations),
        terminating=podowner.terminating(meta),
        not_ours=podowner.not_ours(ctx, meta, spec, bound=node_name is not None),
        **drainfields.drain_fields(ctx, meta, spec, annotations),
    )
    total = annotations.get(KUEUE_TOTAL_ANNOTATION) or annotations.get(LWS_SIZE)
    record = PodRecord(pod, _claim_refs(ctx, spec.get("resourceClaims")), unmodelled)
    record.volume_claims = podspec.claim_names(ctx, spec)
    record.claim_statuses = _claim_statuses(ctx, status)
    record.admission = admission.pod_admission(ctx, spec, served=bool(status))
    record.extended_claim = dra_extended.claim_status(ctx, status)
    if total is not None and pod.gang:
        key = KUEUE_TOTAL_ANNOTATION if KUEUE_TOTAL_ANNOTATION in annotations else LWS_SIZE
        record.group_total = ctx.integer(total, f"metadata.annotations.{key}", minimum=1)
    return record


def _node_daemon(
    ctx: ObjectContext, meta: dict[str, Any], namespace: str, annotations: dict[str, str]
) -> str | None:
    """Why every fresh node of the pod's group runs one too (``Pod.node_daemon``), as
    cluster-autoscaler's ``podsExpectedOnFreshNode`` tells (``simulator/node_info_utils.go``;
    ``utils/pod/pod.go`` ``IsDaemonSetPod``, ``IsMirrorPod``): not while being deleted;
    the controller owner reference (``controller: true``) of kind DaemonSet, else the
    daemonset-pod annotation set to "true", else a static pod's mirror annotation."""
    if meta.get("deletionTimestamp"):
        return None
    for path, ref in ctx.items(meta.get("ownerReferences"), "metadata.ownerReferences"):
        if ctx.boolean(ref.get("controller"), f"{path}.controller"):
            if ctx.text(ref.get("kind"), f"{path}.kind") == "DaemonSet":
                return object_label(
                    "DaemonSet", namespace, ctx.text(ref.get("name"), f"{path}.name", required=True)
                )
            break
    if annotations.get(DAEMON_SET_POD_ANNOTATION) == "true":
        return DAEMON_SET_POD_ANNOTATION
    return MIRROR_ANNOTATION if MIRROR_ANNOTATION in annotations else None


def _provisioning_request(annotations: dict[str, str]) -> tuple[str, str] | None:
    name = next((annotations[k] for k in CONSUME_PROVISIONING_REQUEST if annotations.get(k)), "")
    if not name:
        return None
    return (name, next((annotations[k] for k in PROVISIONING_CLASS if annotations.get(k)), ""))


def _inter_pod(
    ctx: ObjectContext, spec: dict[str, Any], namespace: str, labels: dict[str, str]
) -> dict[str, Any]:
    """podAffinity, podAntiAffinity and topologySpreadConstraints
    (``topology.kube.core.podaffinity``)."""
    return {
        "pod_terms": podaffinity.pod_terms(ctx, spec, namespace, labels),
        "preferred": preferred.preferred_terms(ctx, spec, namespace, labels),
    }


def _arrival(ctx: ObjectContext, raw: Any) -> float:
    moment = ctx.timestamp(raw, "metadata.creationTimestamp")
    return moment.timestamp() if moment else 0.0


def _annotation_unsupported(
    ctx: ObjectContext, annotations: dict[str, str]
) -> list[UnsupportedField]:
    if SLICE_TOPOLOGY in annotations:
        reason = f"Kueue slice topology ({SLICE_TOPOLOGY}) not supported"
        return [UnsupportedField(ctx.object, f"metadata.annotations.{SLICE_TOPOLOGY}", reason)]
    return []


def _gang_name(
    ctx: ObjectContext, namespace: str, labels: dict[str, str], spec: dict[str, Any]
) -> str | None:
    group = labels.get(POD_GROUP_LABEL) or labels.get(KUEUE_GROUP_LABEL)
    if not group:
        scheduling = ctx.mapping(spec.get("schedulingGroup"), "spec.schedulingGroup")
        group = ctx.text(scheduling.get("podGroupName"), "spec.schedulingGroup.podGroupName")
    return f"{namespace}/{group}" if group else None


def _controller_gang(
    ctx: ObjectContext, namespace: str, labels: dict[str, str], spec: dict[str, Any]
) -> str | None:
    """The controller's group as a gang, only where a gang scheduler makes it one: a pod
    of Volcano or KAI (``podowner.GANG_SCHEDULERS``). kube-scheduler itself places each
    pod alone (``pkg/scheduler/schedule_one.go`` ``ScheduleOne``: one pod per cycle)."""
    group = controller_group(labels)
    if group and podowner.scheduler_name(ctx, spec) in podowner.GANG_SCHEDULERS:
        return f"{namespace}/{group}"
    return None


def _app_group(
    ctx: ObjectContext,
    namespace: str,
    labels: dict[str, str],
    spec: dict[str, Any],
    annotations: dict[str, str],
) -> str | None:
    """The controller's group when nothing makes it a gang (no gang label, annotation
    or gang scheduler): kube-scheduler binds its pods one by one."""
    group = controller_group(labels)
    if not group or _gang_name(ctx, namespace, labels, spec):
        return None
    if annotated_gang(namespace, annotations) or _controller_gang(ctx, namespace, labels, spec):
        return None
    return f"{namespace}/{group}"


def controller_group(labels: dict[str, str]) -> str | None:
    """The gang a controller's own pod labels place it in, the one its pods built from
    the controller's template join (``topology.kube.core.controllers``, ``topology.kube.training``),
    so a workload reads the same with or without its pods exported: a LeaderWorkerSet
    group ``<lws>-<group-index>``, a Kubeflow training job ``<job>``."""
    if labels.get(LWS_NAME) and labels.get(LWS_GROUP_INDEX) is not None:
        return f"{labels[LWS_NAME]}-{labels[LWS_GROUP_INDEX]}"
    return labels.get(TRAINING_JOB_NAME) or None


def pod_spec_requests(
    ctx: ObjectContext, spec: dict[str, Any]
) -> tuple[Resources, GpuRequest | None]:
    """Effective requests like the scheduler (``topology.kube.core.podrequests``: containers and
    sidecars summed, init containers in KEP-753 order, pod-level resources, overhead),
    quantities validated as the API server does."""
    merged = podrequests.pod_requests(ctx, spec)
    # renamed replicas stay an extended resource (only such nodes advertise it) and
    # also take GPU units there, like nvidia.com/gpu
    gpu_count = merged.pop(GPU_RESOURCE, 0) + merged.get(SHARED_GPU_RESOURCE, 0)
    resources = Resources(
        cpu_milli=merged.pop("cpu", 0),
        memory_bytes=merged.pop("memory", 0),
        pods=1,
        extended={k: v for k, v in sorted(merged.items()) if v},
    )
    return resources, (GpuRequest(count=gpu_count) if gpu_count else None)


def _claim_statuses(ctx: ObjectContext, status: dict[str, Any]) -> dict[str, str]:
    """``status.resourceClaimStatuses[]``: which ResourceClaim the resourceclaim
    controller made for each template entry (absent: none made yet)."""
    found = {}
    for path, item in ctx.items(
        status.get("resourceClaimStatuses"), "status.resourceClaimStatuses"
    ):
        claim = ctx.text(item.get("resourceClaimName"), f"{path}.resourceClaimName")
        if claim:
            found[ctx.text(item.get("name"), f"{path}.name", required=True)] = claim
    return found


def _claim_refs(ctx: ObjectContext, raw: Any) -> list[tuple[str, str, str]]:
    refs = []
    for path, entry in ctx.items(raw, "spec.resourceClaims"):
        name = ctx.text(entry.get("name"), f"{path}.name", required=True)
        source = ctx.mapping(entry.get("source"), f"{path}.source") or entry  # pre-1.31 shape
        if source.get("resourceClaimName"):
            refs.append(
                (name, "claim", ctx.text(source["resourceClaimName"], f"{path}.resourceClaimName"))
            )
        elif source.get("resourceClaimTemplateName"):
            template = ctx.text(
                source["resourceClaimTemplateName"], f"{path}.resourceClaimTemplateName"
            )
            refs.append((name, "template", template))
        else:
            ctx.fail(path, "needs resourceClaimName or resourceClaimTemplateName")
    return refs


def pod_with_volumes(catalog: volumes.VolumeCatalog, record: PodRecord, pod: Pod) -> Pod:
    """The pod's claims as kube-scheduler's VolumeBinding and VolumeZone see them: node
    constraints ANDed into its affinity, PreFilter rejections, what is not modelled."""
    if not record.volume_claims or pod.node_name is not None:
        return pod
    found = volumes.pod_volumes(catalog, pod.namespace, record.volume_claims)
    label = object_label("Pod", pod.namespace, pod.name)
    record.unmodelled += [UnsupportedField(label, "spec.volumes", r) for r in found.unsupported]
    return replace(
        pod,
        affinity=volumes.with_volume_affinity(pod.affinity, found.groups),
        rejected=(*pod.rejected, *dict.fromkeys(found.rejected)),
        unsupported=tuple(dict.fromkeys((*pod.unsupported, *found.unsupported))),
    )
