"""Pod fields that change where kube-scheduler puts a pod but that the model does
not place by: each becomes an ``UnsupportedField``, never a silent match.

Pure: no Django, no I/O. Read by ``topology.kube.parse`` for every Pod.

What kube-scheduler does with each field, and what we do instead:

=============================================  =====================  ===========
field                                          plugin (Filter/Score)  here
=============================================  =====================  ===========
affinity.podAffinity required terms            InterPodAffinity (F)   modelled
affinity.podAntiAffinity required terms        InterPodAffinity (F)   modelled
affinity.pod(Anti)Affinity preferred terms     InterPodAffinity (S)   score only
affinity.nodeAffinity preferred terms          NodeAffinity (S)       score only
topologySpreadConstraints DoNotSchedule        PodTopologySpread (F)  modelled
topologySpreadConstraints ScheduleAnyway       PodTopologySpread (S)  score only
containers[].ports[].hostPort                  NodePorts (F)          modelled
volumes[].ephemeral                            VolumeBinding (F)      blocking
volumes[].persistentVolumeClaim                VolumeBinding/Zone     modelled
volumes[].gcePersistentDisk, awsElasticBlock…  VolumeRestrictions (F) blocking
schedulingGates                                SchedulingGates        modelled
=============================================  =====================  ===========

"modelled" ones are read by topology.kube.core.podaffinity / topology.kube.core.volumes, and host
ports by ``host_ports`` here, instead.
"blocking": the pod's workload is reported blocked "unsupported: <reason>"
rather than guessed at. "score only": kube-scheduler may prefer other nodes
than we do but would not refuse ours, so the pod is still placed; the field
is listed with reason "not modelled (score only)", which the evaluation makes
true for its profile (``recommender.engine.evaluate.score_notes``: dropped where
the profile scores it, naming the profile and plugin where not); a preferred node
term's ``matchFields`` is scored by no profile and keeps its own reason.
"""

from __future__ import annotations

from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.hardware import BIND_ALL_HOST_IP, SCORE_ONLY, HostPort, UnsupportedField

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
MATCH_FIELDS_REASON = f"{SCORE_ONLY}: no profile scores a preferred term's matchFields"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

INLINE_DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
INLINE_DISK_REASON = "inline {} volume (VolumeRestrictions disk conflict) is not modelled"
EPHEMERAL_REASON = "generic ephemeral volume (VolumeBinding) is not modelled"


def unmodelled_fields(
    ctx: ObjectContext, spec: dict[str, Any], *, bound: bool
) -> list[UnsupportedField]:
    """Every scheduling-relevant field of the pod spec that the model does not place by.

    A ``bound`` pod is already placed: only what it imposes on others matters
    (its required anti-affinity); its own constraints were kube-scheduler's
    business when it was scheduled.
    """
    found = _pod_affinity(ctx, spec, bound)
    if bound:
        return found
    found += _node_affinity_preferences(ctx, spec)
    found += _spread_constraints(ctx, spec)
    found += _ephemeral_volumes(ctx, spec)
    return found


def claim_names(ctx: ObjectContext, spec: dict[str, Any]) -> list[str]:
    """``spec.volumes[].persistentVolumeClaim.claimName``, in order
    (see topology.kube.core.volumes)."""
    names = []
    for path, volume in ctx.items(spec.get("volumes"), "spec.volumes"):
        claim = ctx.mapping(volume.get("persistentVolumeClaim"), f"{path}.persistentVolumeClaim")
        if claim:
            field = f"{path}.persistentVolumeClaim.claimName"
            names.append(ctx.text(claim.get("claimName"), field, required=True))
    return names


def scheduling_gates(ctx: ObjectContext, spec: dict[str, Any]) -> tuple[str, ...]:
    """``spec.schedulingGates[].name`` in order (upstream: schedulinggates/scheduling_gates.go)."""
    return tuple(
        ctx.text(gate.get("name"), f"{path}.name", required=True)
        for path, gate in ctx.items(spec.get("schedulingGates"), "spec.schedulingGates")
    )


def host_ports(ctx: ObjectContext, spec: dict[str, Any]) -> tuple[HostPort, ...]:
    """The host ports the pod binds on its node, as NodePorts reads them (upstream
    ``pkg/scheduler/util/utils.go`` GetHostPorts): those of init containers with
    ``restartPolicy: Always`` (sidecars, running as long as the pod), then of
    ``containers``; a port without ``hostPort`` (or 0) binds nothing. An empty
    ``hostIP`` is 0.0.0.0 and an empty protocol TCP (``HostPortInfo.sanitize``).
    Read for bound pods too: their ports are taken on their node."""
    found = []
    sidecars = [
        (path, c)
        for path, c in ctx.items(spec.get("initContainers"), "spec.initContainers")
        if c.get("restartPolicy") == "Always"
    ]
    for path, container in [*sidecars, *ctx.items(spec.get("containers"), "spec.containers")]:
        for port_path, port in ctx.items(container.get("ports"), f"{path}.ports"):
            number = ctx.integer(port.get("hostPort"), f"{port_path}.hostPort")
            if number > 0:
                ip = ctx.text(port.get("hostIP"), f"{port_path}.hostIP") or BIND_ALL_HOST_IP
                protocol = ctx.text(port.get("protocol"), f"{port_path}.protocol") or "TCP"
                found.append(HostPort(ip, protocol, number))
    return tuple(found)


def _pod_affinity(ctx: ObjectContext, spec: dict[str, Any], bound: bool) -> list[UnsupportedField]:
    """Required terms are modelled (topology.kube.core.podaffinity, scheduler.interpod); the
    preferred ones only score: listed, never blocking."""
    if bound:
        return []
    affinity = ctx.mapping(spec.get("affinity"), "spec.affinity")
    found = []
    for kind in ("podAffinity", "podAntiAffinity"):
        base = f"spec.affinity.{kind}"
        terms = ctx.mapping(affinity.get(kind), base)
        if ctx.sequence(terms.get(PREFERRED), f"{base}.{PREFERRED}"):
            found.append(_score_only(ctx, f"{base}.{PREFERRED}"))
    return found


def _node_affinity_preferences(ctx: ObjectContext, spec: dict[str, Any]) -> list[UnsupportedField]:
    """Preferred node terms score only; a term with ``matchFields`` is scored by no
    profile (``topology.kube.core.preferred`` leaves it out), which its own note says."""
    affinity = ctx.mapping(spec.get("affinity"), "spec.affinity")
    base = "spec.affinity.nodeAffinity"
    node_affinity = ctx.mapping(affinity.get("nodeAffinity"), base)
    found, scored = [], False
    for path, raw in ctx.items(node_affinity.get(PREFERRED), f"{base}.{PREFERRED}"):
        preference = ctx.mapping(raw.get("preference"), f"{path}.preference")
        if preference.get("matchFields"):
            field = f"{path}.preference.matchFields"
            found.append(UnsupportedField(ctx.object, field, MATCH_FIELDS_REASON, blocking=False))
        else:
            scored = True
    if scored:
        found.insert(0, _score_only(ctx, f"{base}.{PREFERRED}"))
    return found


def _spread_constraints(ctx: ObjectContext, spec: dict[str, Any]) -> list[UnsupportedField]:
    found = []
    for path, item in ctx.items(
        spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"
    ):
        when = ctx.text(item.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable")
        if when == SCHEDULE_ANYWAY:  # DoNotSchedule is modelled (scheduler.interpod)
            found.append(_score_only(ctx, path))
    return found


def _ephemeral_volumes(ctx: ObjectContext, spec: dict[str, Any]) -> list[UnsupportedField]:
    found = []
    for path, volume in ctx.items(spec.get("volumes"), "spec.volumes"):
        if volume.get("ephemeral"):
            found.append(UnsupportedField(ctx.object, f"{path}.ephemeral", EPHEMERAL_REASON))
        for kind in INLINE_DISKS:
            if volume.get(kind):
                reason = INLINE_DISK_REASON.format(kind)
                found.append(UnsupportedField(ctx.object, f"{path}.{kind}", reason))
    return found


def _score_only(ctx: ObjectContext, field: str) -> UnsupportedField:
    return UnsupportedField(ctx.object, field, SCORE_ONLY, blocking=False)
