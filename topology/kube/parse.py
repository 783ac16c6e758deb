"""Kubernetes objects (dicts, as the API serves them) → the hardware model.

Pure: no Django, no I/O, no clock. ``parse_objects`` never raises: every
object it cannot model becomes a ModelError in ``Snapshot.errors`` naming
source, ``Kind/ns/name``, the dotted field and the reason; the rest of the
snapshot is kept. Kinds it does not model are counted in ``Snapshot.ignored``.

::

    (source, dict) ──► per kind ──► Node · ResourceSlice · Pod · ResourceClaim(Template)
                                    DeviceClass · PodGroup · Workload
                                    capacityweb.io Topology · NodeGroup · Reservation
                          │
                          └─► assemble: slices → node GPUs (DRA wins over device-plugin
                              labels), claims → pods, pods → gangs, node groups →
                              node.node_group, reservations checked against groups

This module is the dispatch and the assembly; each family of kinds is read in its
own module: ``kubenodes`` (Node, node selectors, GPUs), ``kubepods`` (Pod),
``kubedevices`` (DRA claims and classes), ``kubegangs`` (PodGroup, Workload),
``kubeproject`` (capacityweb.io kinds), and the discovered kinds in ``castatus``,
``daemons``, ``karpenter``, ``workloads_k8s``, ``queues``, ``topology_k8s``, ``volumes``,
``cloud_reservations`` (node groups are assembled by ``discovery``).

Pods: Succeeded/Failed (and Unknown) phases are dropped; a pod with only
``generateName`` (a manifest, not an API object) is named ``<generateName><n>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from topology.kube import (
    discovery,
    gangs as kubegangs,
    karpenter,
    project as kubeproject,
    workloads as workloads_k8s,
)
from topology.kube.autoscaler import events as autoscalerevents, provreq, status as castatus
from topology.kube.core import (
    admission,
    daemons,
    disruption,
    levels as topology_k8s,
    podaffinity,
    volumes,
)
from topology.kube.core.nodes import node_selector_terms, nodes_with_devices, parse_node
from topology.kube.core.pods import PodRecord, parse_pod, pod_with_volumes
from topology.kube.dra import claims as kubedevices, extended as dra_extended, slices as dra
from topology.kube.fields import ObjectContext, object_label, type_name
from topology.kube.kueue import flavors as kueueflavors, queues
from topology.kube.parsecache import ParseCache
from topology.kube.providers import cloud_reservations
from topology.kube.providers.prices import PriceTable, bundled_table
from topology.model.hardware import (
    AutoscalerEvent,
    Cluster,
    DaemonPod,
    DeviceClaim,
    DeviceClass,
    DisruptionBudget,
    Gang,
    ModelError,
    Node,
    NodeGroup,
    Pod,
    ProvisioningRequest,
    QuotaQueue,
    Reservation,
    Snapshot,
    Topology,
    UnsupportedField,
)
from topology.model.quantity import cpu_milli, memory_bytes, parse_quantity, whole_count

__all__ = [
    "ModelError",
    "assign_node_groups",
    "cpu_milli",
    "memory_bytes",
    "parse_objects",
    "parse_quantity",
    "whole_count",
]

# the autoscaler events a snapshot keeps: the newest, so a busy cluster's Events stay bounded
MAX_EVENTS = 200

# --- what the first pass collects ---------------------------------------------------


@dataclass(slots=True)
class _Collected:
    nodes: list[tuple[Node, int]] = field(default_factory=list)  # (node, nvidia.com/gpu)
    slices: list[tuple[ObjectContext, dra.ParsedSlice]] = field(default_factory=list)
    pods: list[PodRecord] = field(default_factory=list)
    claims: dict[tuple[str, str], tuple[DeviceClaim, tuple[str, ...]]] = field(default_factory=dict)
    templates: dict[tuple[str, str], tuple[DeviceClaim, tuple[str, ...]]] = field(
        default_factory=dict
    )
    device_classes: dict[str, tuple[DeviceClass, tuple[str, ...]]] = field(default_factory=dict)
    pod_groups: dict[tuple[str, str], Gang] = field(default_factory=dict)
    workload_min: dict[tuple[str, str, str], int] = field(default_factory=dict)
    group_templates: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    # (ctx, group, spec keys it sets): a discovered group of the same name keeps the rest
    node_groups: list[tuple[ObjectContext, NodeGroup, frozenset[str]]] = field(default_factory=list)
    reservations: list[tuple[ObjectContext, Reservation]] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    volumes: volumes.VolumeCatalog = field(default_factory=volumes.VolumeCatalog)
    topology: Topology | None = None
    topology_found: topology_k8s.Discovered = field(default_factory=topology_k8s.Discovered)
    volume_fields: list[UnsupportedField] = field(default_factory=list)
    errors: list[ModelError] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    read: Counter[str] = field(default_factory=Counter)
    controllers: list[workloads_k8s.Controller] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    queues: list[QuotaQueue] = field(default_factory=list)
    local_queues: dict[str, str] = field(default_factory=dict)  # "ns/name" → "ClusterQueue/cq"
    queue_checks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # Kueue admission
    discovered: discovery.Discovered = field(default_factory=discovery.Discovered)
    seen: set[str] = field(default_factory=set)
    generated: Counter[tuple[str, str]] = field(default_factory=Counter)
    budgets: list[DisruptionBudget] = field(default_factory=list)  # topology.kube.core.disruption
    priority_classes: dict[str, admission.PriorityClass] = field(default_factory=dict)
    flavors: dict[str, kueueflavors.Flavor] = field(default_factory=dict)
    provisioning_requests: list[ProvisioningRequest] = field(default_factory=list)
    pod_templates: dict[tuple[str, str], tuple[str, Any]] = field(default_factory=dict)
    autoscaler_events: list[AutoscalerEvent] = field(default_factory=list)
    queue_flavors: dict[str, tuple[kueueflavors.FlavorGroup, ...]] = field(default_factory=dict)
    cache: ParseCache | None = None  # Nodes and Pods read by an earlier parse (parsecache)
    given_nodes: tuple[Node, ...] = ()  # model nodes another reader built (parse_objects)


def parse_objects(
    objects: Iterable[tuple[str, dict[str, Any]]],
    *,
    cluster_name: str,
    prices: PriceTable | None = None,
    discovered_groups: Iterable[NodeGroup] = (),
    daemon_pods: Iterable[DaemonPod] = (),
    extended_resource_toleration: bool | None = None,
    cache: ParseCache | None = None,
    nodes: Iterable[Node] = (),
) -> Snapshot:
    """Every object → the model; bad objects become errors, unknown kinds are counted.

    ``prices``: prices discovered node groups (default: the bundled table).
    ``discovered_groups``: groups another parse discovered (a source's model), which
    NodeGroup objects here override field by field like the ones found here;
    ``daemon_pods``: that model's DaemonSets, which NodeGroup templates here carry too;
    ``extended_resource_toleration``: whether the API server runs the
    ExtendedResourceToleration admission (None: where the nodes are GKE's,
    ``topology.kube.core.admission``); ``cache``: the Nodes and Pods an earlier parse of the same
    cluster read, by uid and resourceVersion (``topology.kube.parsecache``): the same model,
    with only the changed objects read again; ``nodes``: nodes another reader built (a
    replayed trace's), put before the Node objects read here and grouped with them (node
    pools from their labels, cluster-autoscaler's status joined to them)."""
    collected = _Collected(cache=cache, given_nodes=tuple(nodes))
    collected.discovered.daemon_pods.extend(daemon_pods)
    if cache is not None:
        cache.begin()
    for source, obj in objects:
        _parse_one(collected, str(source), obj)
    if cache is not None:
        cache.end()
    workloads_k8s.add_wanted_pods(collected, _pod)
    workloads_k8s.with_template_owners(collected)
    _admit(collected, extended_resource_toleration)
    return _assemble(collected, cluster_name, prices or bundled_table(), tuple(discovered_groups))


def _admit(collected: _Collected, extended_toleration: bool | None) -> None:
    """Every pod (exported, hand-written or built from a template) as admission leaves it."""
    if extended_toleration is None:
        extended_toleration = admission.is_gke([node for node, _ in collected.nodes])
    for record in collected.pods:
        record.pod, said = admission.admitted(
            record.pod,
            record.admission,
            collected.priority_classes,
            extended_toleration=extended_toleration,
        )
        record.unmodelled += said
    _assign_flavors(collected)


def _assign_flavors(collected: _Collected) -> None:
    """Pending pods of a Kueue ClusterQueue with their ResourceFlavor's labels and
    tolerations (``topology.kube.kueue.flavors``)."""
    if not collected.queue_flavors:
        return
    gangs = {g.key: g for g in collected.pod_groups.values()}
    node_labels = {node.name: dict(node.labels) for node, _ in collected.nodes}
    for record in collected.pods:
        queue = queues.pod_queue(record.pod, gangs, collected.local_queues)
        groups = collected.queue_flavors.get(queue or "")
        if not groups:
            continue
        if record.pod.node_name is None:
            record.pod, said = kueueflavors.assign(record.pod, groups, collected.flavors)
            record.unmodelled += said
        else:
            labels = node_labels.get(record.pod.node_name, {})
            flavor = kueueflavors.bound_flavor(groups, collected.flavors, labels)
            record.pod = replace(record.pod, quota_flavor=flavor)


def _priority_class(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    found = admission.parse_priority_class(ctx, obj)
    collected.priority_classes[found.name] = found


_MALFORMED = (TypeError, ValueError, KeyError, AttributeError, IndexError, ArithmeticError)


def _parse_one(collected: _Collected, source: str, obj: Any) -> None:
    try:
        if not isinstance(obj, dict):
            raise ModelError(source, "", "", f"object must be a mapping, got {type_name(obj)}")
        ctx, kind, group = _identify(collected, source, obj)
        handler = _handler(kind, group)
        if handler is None:
            collected.ignored[f"{kind} ({obj.get('apiVersion', '')})"] += 1
            return
        _claim_identity(collected, ctx, group)
        handler(collected, ctx, obj)
        collected.read[f"{kind} ({obj.get('apiVersion', '')})"] += 1
    except ModelError as error:
        collected.errors.append(error)
    except RecursionError:
        collected.errors.append(ModelError(source, "", "", "object nested too deeply"))
    except _MALFORMED as error:  # a shape no check above foresaw: still an error, not a crash
        collected.errors.append(ModelError(source, "", "", f"malformed object: {error!r}"))


def _identify(collected: _Collected, source: str, obj: dict[str, Any]):  # type: ignore[no-untyped-def]
    bare = ObjectContext(source, "")
    kind = bare.text(obj.get("kind"), "kind", required=True)
    api_version = bare.text(obj.get("apiVersion"), "apiVersion")
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    meta = bare.mapping(obj.get("metadata"), "metadata")
    name = bare.text(meta.get("name"), "metadata.name")
    namespace = bare.text(meta.get("namespace"), "metadata.namespace")
    if kind in _NAMESPACED and not namespace:
        namespace = "default"
    if not name and kind in ("Pod", *workloads_k8s.NAMESPACED_KINDS) and meta.get("generateName"):
        prefix = bare.text(meta.get("generateName"), "metadata.generateName")
        name = f"{prefix}{collected.generated[(namespace, prefix)]}"
        collected.generated[(namespace, prefix)] += 1
    if kind not in _NAMESPACED:
        namespace = ""
    ctx = ObjectContext(source, object_label(kind, namespace, name or "?"))
    if not name and _handler(kind, group) is not None:
        ctx.fail("metadata.name", "required")
    return ctx, kind, group


def _claim_identity(collected: _Collected, ctx: ObjectContext, group: str) -> None:
    """Kind, namespace and name are unique per API group (a batch and a Volcano Job may
    share a name)."""
    identity = f"{group} {ctx.object}"
    if identity in collected.seen:
        ctx.fail("metadata.name", "duplicate: an earlier object has the same kind, namespace, name")
    collected.seen.add(identity)


def _handler(kind: str, group: str):  # type: ignore[no-untyped-def]
    return _HANDLERS.get((kind, group)) or _HANDLERS.get((kind, "*"))


_NAMESPACED = (
    "Pod",
    "PodDisruptionBudget",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "PodGroup",
    "Workload",
    "LocalQueue",
    *workloads_k8s.NAMESPACED_KINDS,
    "ConfigMap",
    "DaemonSet",
    "ProvisioningRequest",
    "PodTemplate",
    "Event",
    "PersistentVolumeClaim",
)


# --- the kinds read here; the other families' handlers live in their modules ----------


def _node(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    if collected.cache is None:
        collected.nodes.append(parse_node(ctx, obj))
    else:
        collected.nodes.append(collected.cache.remember(ctx, obj, parse_node))


def _resource_slice(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    collected.slices.append((ctx, dra.parse_slice(ctx, spec)))


def _pod(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    record = parse_pod(ctx, obj)
    if record is not None:
        collected.pods.append(record)


def _listed_pod(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A Pod object of the input (``_pod`` reads the ones built from templates too)."""
    if collected.cache is None:
        _pod(collected, ctx, obj)
        return
    record = collected.cache.remember(ctx, obj, parse_pod, _copied)
    if record is not None:
        collected.pods.append(record)


def _copied(record: PodRecord | None) -> PodRecord | None:
    return None if record is None else record.copy()


def _namespace(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A Namespace's labels: what inter-pod terms' namespaceSelector matches."""
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    name = ctx.text(meta.get("name"), "metadata.name", required=True)
    labels = ctx.labels(meta.get("labels"), "metadata.labels")
    collected.namespaces[name] = podaffinity.namespace_labels(name, labels)


def _persistent_volume_claim(
    collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]
) -> None:
    claim = volumes.parse_claim(ctx, obj)
    collected.volumes.claims[(claim.namespace, claim.name)] = claim


def _persistent_volume(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    volume = volumes.parse_volume(ctx, obj, node_selector_terms)
    collected.volumes.volumes[volume.name] = volume
    if volume.unsupported:
        field_name = "spec.nodeAffinity.required.nodeSelectorTerms"
        collected.volume_fields += [
            UnsupportedField(ctx.object, field_name, reason) for reason in volume.unsupported
        ]


def _storage_class(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    storage_class = volumes.parse_class(ctx, obj)
    collected.volumes.classes[storage_class.name] = storage_class


_HANDLERS = {
    ("Node", "*"): _node,
    ("Pod", "*"): _listed_pod,
    ("Namespace", "*"): _namespace,
    ("PriorityClass", "scheduling.k8s.io"): _priority_class,
    ("ResourceFlavor", "kueue.x-k8s.io"): kueueflavors.parse_flavor,
    ("ResourceSlice", "*"): _resource_slice,
    ("ResourceClaim", "*"): kubedevices.resource_claim,
    ("ResourceClaimTemplate", "*"): kubedevices.resource_claim_template,
    ("DeviceClass", "*"): kubedevices.device_class,
    ("PersistentVolumeClaim", "*"): _persistent_volume_claim,
    ("PersistentVolume", "*"): _persistent_volume,
    ("StorageClass", "*"): _storage_class,
    ("PodDisruptionBudget", "policy"): disruption.collect,
    ("PodGroup", kubegangs.COSCHEDULING_GROUP): kubegangs.coscheduling_pod_group,
    ("PodGroup", kubegangs.GANG_GROUP): kubegangs.kep_pod_group,
    ("Workload", kubegangs.GANG_GROUP): kubegangs.kep_workload,
    ("Topology", kubeproject.PROJECT_GROUP): kubeproject.topology,
    ("Topology", topology_k8s.KUEUE): topology_k8s.collect_levels,
    ("Topology", topology_k8s.KAI): topology_k8s.collect_levels,
    ("HyperNode", topology_k8s.VOLCANO_TOPOLOGY): topology_k8s.collect_hypernode,
    ("NodeGroup", kubeproject.PROJECT_GROUP): kubeproject.node_group,
    ("Reservation", kubeproject.PROJECT_GROUP): kubeproject.reservation,
    **{kind: workloads_k8s.collect for kind in workloads_k8s.CONTROLLER_KINDS},
    **{kind: queues.parse_queue for kind in queues.QUEUE_KINDS},
    ("ConfigMap", "*"): castatus.config_map,
    ("NodePool", "karpenter.sh"): karpenter.karpenter_node_pool,
    ("NodeClaim", "karpenter.sh"): karpenter.karpenter_node_claim,
    ("ProvisioningRequest", provreq.GROUP): provreq.provisioning_request,
    ("PodTemplate", "*"): provreq.pod_template,
    ("Event", "*"): autoscalerevents.kube_event,
    ("AdmissionCheck", queues.KUEUE): queues.parse_admission_check,
    (queues.PROVISIONING_CONFIG, queues.KUEUE): queues.parse_provisioning_config,
    ("DaemonSet", "apps"): daemons.daemon_set,
    (castatus.KWOK_KIND, "kwok.cluster-autoscaler.x-k8s.io"): castatus.kwok_provider_config,
    ("EC2NodeClass", "karpenter.k8s.aws"): cloud_reservations.karpenter_node_class,
    (cloud_reservations.AWS_KIND, "ec2.amazonaws.com"): cloud_reservations.aws_capacity_reservation,
    (cloud_reservations.GCP_KIND, "compute.googleapis.com"): cloud_reservations.gcp_reservation,
}


is_autoscaler_status = castatus.is_status_object


def dispatched_kinds() -> tuple[tuple[str, str], ...]:
    """(kind, API group, or "*" for any) of every kind ``parse_objects`` reads: what the
    live source lists (``topology.ingest.kubekinds``) besides the file-only exports."""
    return tuple(_HANDLERS)


# --- assembly ---------------------------------------------------------------------------------


def _assemble(
    collected: _Collected,
    cluster_name: str,
    prices: PriceTable,
    discovered_groups: tuple[NodeGroup, ...] = (),
) -> Snapshot:
    devices = (*collected.given_nodes, *nodes_with_devices(collected.nodes, collected.slices))
    discovered_names = {g.name for g in discovered_groups}
    found, notices = discovery.discover_node_groups(
        collected.discovered,
        devices,
        prices,
        pods=(r.pod for r in collected.pods),
        declared=(
            group
            for _ctx, group, given in collected.node_groups
            if "template" in given and group.name not in discovered_names
        ),
    )
    here = {g.name for g in found}
    found += tuple(g for g in discovered_groups if g.name not in here)
    checked = kubeproject.checked_node_groups(collected, found)
    nodes, node_groups = assign_node_groups(devices, checked)
    imported, reservation_notices = cloud_reservations.resolve(
        collected.discovered.cloud_reservations,
        node_groups,
        prices,
        discovery.gpus_by_instance_type(node_groups),
    )
    pods = tuple(
        pod_with_volumes(collected.volumes, record, _with_claims(collected, record, nodes))
        for record in collected.pods
    )
    topology, topology_source, topology_notes = topology_k8s.choose(
        collected.topology, collected.topology_found
    )
    collected.notes.extend(topology_notes)
    pods = podaffinity.needing_namespaces(pods, bool(collected.namespaces))
    collected.notes.extend(kubedevices.unknown_allocated_devices(collected, nodes))
    cluster = Cluster(
        name=cluster_name,
        topology=topology,
        topology_source=topology_source,
        nodes=nodes,
        pods=pods,
        gangs=kubegangs.gangs(collected, pods),
        device_classes=tuple(dc for dc, _ in collected.device_classes.values()),
        node_groups=node_groups,
        reservations=kubeproject.checked_reservations(collected, node_groups) + imported,
        queues=queues.assembled_queues(collected),
        cohorts=queues.assembled_cohorts(collected),
        namespace_labels=collected.namespaces,
        ignored=dict(sorted(collected.ignored.items())),
        unsupported=_unsupported_fields(collected),
        disruption_budgets=tuple(collected.budgets),
        daemon_pods=tuple(collected.discovered.daemon_pods),
        allocated_claims=kubedevices.allocated_claims(collected),
        provisioning_requests=tuple(
            sorted(collected.provisioning_requests, key=lambda r: (r.namespace, r.name))
        ),
        pod_templates=provreq.template_pods(collected, parse_pod),
        autoscaler_events=provreq.newest_first(collected.autoscaler_events, MAX_EVENTS),
    )
    return Snapshot(
        cluster=cluster,
        errors=tuple(collected.errors),
        ignored=dict(collected.ignored),
        read=dict(collected.read),
        notes=tuple(collected.notes),
        notices=notices + reservation_notices,
    )


def _with_claims(collected: _Collected, record: PodRecord, nodes: tuple[Node, ...]) -> Pod:
    """The pod's DRA claims: its own (``kubedevices``) and the one made for the extended
    resources a DeviceClass serves (``dra_extended``, KEP-5004)."""
    pod = pod_with_claims(collected, record)
    mapping = dra_extended.mapped_names(dc for dc, _ in collected.device_classes.values())
    if not mapping:
        return pod
    made = collected.claims.get((pod.namespace, record.extended_claim))
    pod, said = dra_extended.with_extended_claim(
        pod, mapping, dra_extended.advertised(nodes), made[0] if made else None
    )
    record.unmodelled += said
    return pod


def _unsupported_fields(collected: _Collected) -> tuple[UnsupportedField, ...]:
    """Every field read but not modelled, by object then field (claims' reasons included)."""
    found = [u for record in collected.pods for u in record.unmodelled]
    found += collected.volume_fields
    return tuple(sorted(dict.fromkeys(found), key=lambda u: (u.object, u.field, u.reason)))


def assign_node_groups(
    nodes: Iterable[Node], node_groups: Iterable[NodeGroup]
) -> tuple[tuple[Node, ...], tuple[NodeGroup, ...]]:
    """Nodes and groups made consistent: each node belongs to the first group (by
    name) whose nodeSelector matches its labels and carries that group's price (no
    group: none); each group's current size is its number of members.

    Called whenever the groups change (parse, stored configuration merged into a
    source's model), so a group's size never lags behind its nodes.
    """
    groups = tuple(sorted(node_groups, key=lambda g: g.name))
    members: list[Node] = []
    for node in nodes:
        group = next(
            (g for g in groups if g.node_selector and _selects(g.node_selector, node)), None
        )
        members.append(
            replace(
                node,
                node_group=group.name if group else None,
                price_per_node_hour=group.price_per_node_hour if group else None,
            )
        )
    sizes = Counter(n.node_group for n in members if n.node_group)
    return tuple(members), tuple(replace(g, current_size=sizes[g.name]) for g in groups)


def _selects(selector: dict[str, str] | Any, node: Node) -> bool:
    return all(node.labels.get(k) == v for k, v in selector.items())


def pod_with_claims(collected: Any, record: PodRecord) -> Pod:
    """The pod's DRA claims (a template's copy named ``<pod>-<entry>``, or the claim
    made from it when ``status.resourceClaimStatuses`` names one the snapshot has); a
    missing claim, template or class, or a request beyond the model, is an unsupported
    reason."""
    pod = record.pod
    claims, reasons = [], list(pod.unsupported)
    for entry, kind, name in record.claim_refs:
        generated = record.claim_statuses.get(entry, "")
        if kind == "template" and (pod.namespace, generated) in collected.claims:
            kind, name = "claim", generated  # the claim made from the template, as it is
        table = collected.claims if kind == "claim" else collected.templates
        found = table.get((pod.namespace, name))
        if found is None:
            label = "ResourceClaim" if kind == "claim" else "ResourceClaimTemplate"
            reasons.append(f"{label} {pod.namespace}/{name} not found")
            continue
        claim, claim_reasons = found
        claims.append(claim if kind == "claim" else replace(claim, name=f"{pod.name}-{entry}"))
        reasons += claim_reasons
        reasons += _class_reasons(collected, claim)
    label = object_label("Pod", pod.namespace, pod.name)
    record.unmodelled += [
        UnsupportedField(label, "spec.resourceClaims", reason)
        for reason in reasons[len(pod.unsupported) :]
    ]
    if not claims and not reasons[len(pod.unsupported) :]:
        return pod
    return replace(pod, claims=tuple(claims), unsupported=tuple(dict.fromkeys(reasons)))


def _class_reasons(collected: Any, claim: DeviceClaim) -> list[str]:
    """Each class a request or subrequest names and the snapshot lacks (the allocator
    checks every subrequest's class before it tries any: ``validateDeviceRequest``)."""
    reasons = []
    for request in (r for each in claim.requests for r in each.alternatives()):
        if not request.device_class:
            continue
        found = collected.device_classes.get(request.device_class)
        if found is None:
            reasons.append(f"DeviceClass {request.device_class} not found")
        else:
            reasons += found[1]
    return reasons
