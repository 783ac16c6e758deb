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

Pods: Succeeded/Failed (and Unknown) phases are dropped; a pod with only
``generateName`` (a manifest, not an API object) is named ``<generateName><n>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from topology import (
    cloud_reservations,
    discovery,
    dra,
    podaffinity,
    podspec,
    podstatus,
    quotas,
    topology_k8s,
    volumes,
    workloads_k8s,
)
from topology.cel import CelUnsupported, compile_selector
from topology.hardware import (
    GPU_RESOURCE,
    SHARED_GPU_RESOURCE,
    AttributeSelector,
    Cluster,
    CounterSet,
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    Gang,
    GpuRequest,
    LabelRequirement,
    MatchAttribute,
    ModelError,
    Node,
    NodeGroup,
    NodePlacement,
    NodeSelectorTerm,
    Pod,
    QuotaQueue,
    Reservation,
    ReservedNodeGroupCapacity,
    Resources,
    Snapshot,
    Taint,
    Toleration,
    Topology,
    UnsupportedField,
)
from topology.kubefields import ObjectContext, object_label, type_name
from topology.prices import PriceTable, bundled_table
from topology.quantity import cpu_milli, memory_bytes, parse_quantity, whole_count

__all__ = [
    "ModelError",
    "cpu_milli",
    "memory_bytes",
    "parse_objects",
    "parse_quantity",
    "whole_count",
]

PROJECT_GROUP = "capacityweb.io"
COSCHEDULING_GROUP = "scheduling.x-k8s.io"
GANG_GROUP = "scheduling.k8s.io"  # KEP-4671 Workload / PodGroup
KUEUE_GROUP = "kueue.x-k8s.io"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
KUEUE_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
REQUIRED_AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"
LIVE_PHASES = ("", "Pending", "Running")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
CORE_RESOURCES = ("cpu", "memory", "pods", GPU_RESOURCE)


# --- what the first pass collects ---------------------------------------------------


@dataclass(slots=True)
class _PodRecord:
    pod: Pod
    claim_refs: list[tuple[str, str, str]]  # (entry name, "claim"|"template", object name)
    unmodelled: list[UnsupportedField] = field(default_factory=list)
    volume_claims: list[str] = field(default_factory=list)  # PersistentVolumeClaim names
    group_total: int | None = None  # kueue pod-group-total-count


@dataclass(slots=True)
class _Collected:
    nodes: list[tuple[Node, int]] = field(default_factory=list)  # (node, nvidia.com/gpu)
    slices: list[tuple[ObjectContext, dra.ParsedSlice]] = field(default_factory=list)
    pods: list[_PodRecord] = field(default_factory=list)
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
    discovered: discovery.Discovered = field(default_factory=discovery.Discovered)
    seen: set[str] = field(default_factory=set)
    generated: Counter[tuple[str, str]] = field(default_factory=Counter)


def parse_objects(
    objects: Iterable[tuple[str, dict[str, Any]]],
    *,
    cluster_name: str,
    prices: PriceTable | None = None,
    discovered_groups: Iterable[NodeGroup] = (),
) -> Snapshot:
    """Every object → the model; bad objects become errors, unknown kinds are counted.

    ``prices``: prices discovered node groups (default: the bundled table).
    ``discovered_groups``: groups another parse discovered (a source's model), which
    NodeGroup objects here override field by field like the ones found here."""
    collected = _Collected()
    for source, obj in objects:
        _parse_one(collected, str(source), obj)
    return _assemble(collected, cluster_name, prices or bundled_table(), tuple(discovered_groups))


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
    "ResourceClaim",
    "ResourceClaimTemplate",
    "PodGroup",
    "Workload",
    "LocalQueue",
    *workloads_k8s.NAMESPACED_KINDS,
    "ConfigMap",
    "DaemonSet",
    "PersistentVolumeClaim",
)


# --- nodes ----------------------------------------------------------------------------


def _node(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    meta, spec = obj.get("metadata") or {}, ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    allocatable = status.get("allocatable", status.get("capacity"))
    field_name = "status.allocatable" if "allocatable" in status else "status.capacity"
    resources, gpus = _allocatable(ctx, allocatable, field_name)
    node = Node(
        name=ctx.text(meta.get("name"), "metadata.name", required=True),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        taints=_taints(ctx, spec.get("taints"), "spec.taints"),
        unschedulable=ctx.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        ready=_ready(ctx, status.get("conditions")),
        allocatable=resources,
        created=podstatus.creation_time(ctx, meta),
    )
    collected.nodes.append((node, gpus))


def _allocatable(ctx: ObjectContext, raw: Any, field_name: str) -> tuple[Resources, int]:
    values = {}
    for key, value in ctx.mapping(raw, field_name).items():
        values[str(key)] = ctx.quantity(value, f"{field_name}.{key}")
    extended = {k: whole_count(v) for k, v in values.items() if k not in CORE_RESOURCES}
    resources = Resources(
        cpu_milli=cpu_milli(values.get("cpu", 0)),
        memory_bytes=memory_bytes(values.get("memory", 0)),
        pods=whole_count(values.get("pods", 0)),
        extended=extended,
    )
    gpus = whole_count(values.get(GPU_RESOURCE, 0))
    return resources, gpus or whole_count(values.get(SHARED_GPU_RESOURCE, 0))  # renamed replicas


def _taints(ctx: ObjectContext, raw: Any, field_name: str) -> tuple[Taint, ...]:
    taints = []
    for path, item in ctx.items(raw, field_name):
        effect = ctx.text(item.get("effect"), f"{path}.effect", required=True)
        if effect not in TAINT_EFFECTS:
            ctx.fail(f"{path}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        key = ctx.text(item.get("key"), f"{path}.key", required=True)
        taints.append(Taint(key, ctx.text(item.get("value"), f"{path}.value"), effect))
    return tuple(taints)


def _ready(ctx: ObjectContext, raw: Any) -> bool:
    """Ready unless a Ready condition says otherwise (exports without status count as ready)."""
    for path, condition in ctx.items(raw, "status.conditions"):
        if condition.get("type") == "Ready":
            return ctx.text(condition.get("status"), f"{path}.status") == "True"
    return True


def _resource_slice(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    collected.slices.append((ctx, dra.parse_slice(ctx, spec)))


# --- pods -------------------------------------------------------------------------------


def _pod(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    if ctx.text(status.get("phase"), "status.phase") not in LIVE_PHASES:
        return
    namespace, name = _namespace_name(ctx)
    labels = ctx.labels(meta.get("labels"), "metadata.labels")
    annotations = ctx.labels(meta.get("annotations"), "metadata.annotations")
    requests, gpu = _pod_requests(ctx, spec)
    affinity, affinity_unsupported = _required_affinity(ctx, spec.get("affinity"))
    node_name = ctx.text(spec.get("nodeName"), "spec.nodeName") or None
    unmodelled = podspec.unmodelled_fields(ctx, spec, bound=node_name is not None)
    unmodelled += [
        UnsupportedField(ctx.object, f"spec.affinity.nodeAffinity.{REQUIRED_AFFINITY}", reason)
        for reason in affinity_unsupported
    ]
    unmodelled += _annotation_unsupported(ctx, annotations)
    pod = Pod(
        namespace=namespace,
        name=name,
        requests=requests,
        gpu=gpu,
        node_selector=ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector"),
        affinity=affinity,
        tolerations=_tolerations(ctx, spec.get("tolerations")),
        labels=labels,
        priority=ctx.integer(spec.get("priority"), "spec.priority"),
        arrival=_arrival(ctx, meta.get("creationTimestamp")),
        node_name=node_name,
        gang=_gang_name(ctx, namespace, labels, spec)
        or workloads_k8s.annotated_gang(namespace, annotations),
        required_topology=annotations.get(REQUIRED_TOPOLOGY) or None,
        preferred_topology=annotations.get(PREFERRED_TOPOLOGY) or None,
        unsupported=tuple(dict.fromkeys(u.reason for u in unmodelled if u.blocking)),
        scheduling_gates=podspec.scheduling_gates(ctx, spec),
        scheduled=podstatus.pod_scheduled(ctx, status),
        **_inter_pod(ctx, spec, namespace, labels),
    )
    total = annotations.get(KUEUE_TOTAL_ANNOTATION)
    record = _PodRecord(pod, _claim_refs(ctx, spec.get("resourceClaims")), unmodelled)
    record.volume_claims = podspec.claim_names(ctx, spec)
    if total is not None and pod.gang:
        record.group_total = ctx.integer(
            total, f"metadata.annotations.{KUEUE_TOTAL_ANNOTATION}", minimum=1
        )
    collected.pods.append(record)


def _inter_pod(
    ctx: ObjectContext, spec: dict[str, Any], namespace: str, labels: dict[str, str]
) -> dict[str, Any]:
    """podAffinity, podAntiAffinity and topologySpreadConstraints (``topology.podaffinity``)."""
    terms, score_only = podaffinity.pod_terms(ctx, spec, namespace, labels)
    return {"pod_terms": terms, "score_only": score_only}


def _namespace(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """A Namespace's labels: what inter-pod terms' namespaceSelector matches."""
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    name = ctx.text(meta.get("name"), "metadata.name", required=True)
    labels = ctx.labels(meta.get("labels"), "metadata.labels")
    collected.namespaces[name] = podaffinity.namespace_labels(name, labels)


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


def _pod_requests(ctx: ObjectContext, spec: dict[str, Any]) -> tuple[Resources, GpuRequest | None]:
    """Effective requests like the scheduler: containers (+ sidecars) summed, max with init
    containers, plus overhead; requests default to limits."""
    total: Counter[str] = Counter()
    for path, container in ctx.items(spec.get("containers"), "spec.containers"):
        total.update(_container_requests(ctx, container, path))
    init_peak: Counter[str] = Counter()
    for path, container in ctx.items(spec.get("initContainers"), "spec.initContainers"):
        values = _container_requests(ctx, container, path)
        if container.get("restartPolicy") == "Always":  # sidecar: runs alongside
            total.update(values)
        else:
            init_peak = Counter({k: max(init_peak[k], values[k]) for k in {*init_peak, *values}})
    merged = Counter({k: max(total[k], init_peak[k]) for k in {*total, *init_peak}})
    for key, value in ctx.mapping(spec.get("overhead"), "spec.overhead").items():
        merged[key] += _base_units(key, ctx.quantity(value, f"spec.overhead.{key}"))
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


def _container_requests(ctx: ObjectContext, container: dict[str, Any], path: str) -> Counter[str]:
    resources = ctx.mapping(container.get("resources"), f"{path}.resources")
    limits = ctx.mapping(resources.get("limits"), f"{path}.resources.limits")
    requests = ctx.mapping(resources.get("requests"), f"{path}.resources.requests")
    values: Counter[str] = Counter()
    for key in {*limits, *requests}:
        where = "requests" if key in requests else "limits"
        raw = requests[key] if key in requests else limits[key]
        quantity = ctx.quantity(raw, f"{path}.resources.{where}.{key}")
        values[str(key)] = _base_units(str(key), quantity)
    return values


def _base_units(key: str, quantity: Any) -> int:
    return cpu_milli(quantity) if key == "cpu" else whole_count(quantity)


def _tolerations(ctx: ObjectContext, raw: Any) -> tuple[Toleration, ...]:
    out = []
    for path, item in ctx.items(raw, "spec.tolerations"):
        operator = ctx.text(item.get("operator"), f"{path}.operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            ctx.fail(f"{path}.operator", f"must be Equal or Exists, got {operator!r}")
        effect = ctx.text(item.get("effect"), f"{path}.effect")
        if effect and effect not in TAINT_EFFECTS:
            ctx.fail(f"{path}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        out.append(
            Toleration(
                key=ctx.text(item.get("key"), f"{path}.key"),
                operator=operator,
                value=ctx.text(item.get("value"), f"{path}.value"),
                effect=effect,
            )
        )
    return tuple(out)


def _required_affinity(
    ctx: ObjectContext, raw: Any
) -> tuple[tuple[NodeSelectorTerm, ...], list[str]]:
    """Required node affinity terms (ORed). Preferred affinity does not filter: ignored."""
    affinity = ctx.mapping(raw, "spec.affinity")
    node_affinity = ctx.mapping(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
    base = f"spec.affinity.nodeAffinity.{REQUIRED_AFFINITY}"
    required = ctx.mapping(node_affinity.get(REQUIRED_AFFINITY), base)
    return node_selector_terms(ctx, required.get("nodeSelectorTerms"), f"{base}.nodeSelectorTerms")


def node_selector_terms(
    ctx: ObjectContext, raw: Any, field_name: str
) -> tuple[tuple[NodeSelectorTerm, ...], list[str]]:
    terms, unsupported = [], []
    for path, term in ctx.items(raw, field_name):
        if term.get("matchFields"):
            unsupported.append("node affinity matchFields not supported")
        requirements = tuple(
            _requirement(ctx, req_path, req)
            for req_path, req in ctx.items(term.get("matchExpressions"), f"{path}.matchExpressions")
        )
        terms.append(NodeSelectorTerm(requirements))
    return tuple(terms), unsupported


def _requirement(ctx: ObjectContext, path: str, raw: dict[str, Any]) -> LabelRequirement:
    key = ctx.text(raw.get("key"), f"{path}.key", required=True)
    operator = ctx.text(raw.get("operator"), f"{path}.operator", required=True)
    if operator not in OPERATORS:
        ctx.fail(f"{path}.operator", f"must be one of {', '.join(OPERATORS)}, got {operator!r}")
    values = tuple(
        ctx.text(v, f"{path}.values[{i}]")
        for i, v in enumerate(ctx.sequence(raw.get("values"), f"{path}.values"))
    )
    if operator in ("In", "NotIn") and not values:
        ctx.fail(f"{path}.values", f"{operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values:
        ctx.fail(f"{path}.values", f"{operator} takes no values")
    if operator in ("Gt", "Lt") and (len(values) != 1 or not values[0].lstrip("-").isdigit()):
        ctx.fail(f"{path}.values", f"{operator} needs exactly one integer value")
    return LabelRequirement(key, operator, values)


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


# --- DRA claims and classes ---------------------------------------------------------------


def _resource_claim(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    if "spec" in spec and "devices" not in spec:
        ctx.fail("spec.spec", "a ResourceClaim has spec.devices; spec.spec belongs to a template")
    namespace, name = _namespace_name(ctx)
    collected.claims[(namespace, name)] = _device_claim(ctx, name, spec, "spec")


def _resource_claim_template(
    collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]
) -> None:
    outer = ctx.mapping(obj.get("spec"), "spec")
    spec = ctx.mapping(outer.get("spec"), "spec.spec")
    namespace, name = _namespace_name(ctx)
    collected.templates[(namespace, name)] = _device_claim(ctx, name, spec, "spec.spec")


def _namespace_name(ctx: ObjectContext) -> tuple[str, str]:
    _, namespace, name = ctx.object.split("/", 2)
    return namespace, name


def _device_claim(
    ctx: ObjectContext, name: str, spec: dict[str, Any], base: str
) -> tuple[DeviceClaim, tuple[str, ...]]:
    devices = ctx.mapping(spec.get("devices"), f"{base}.devices")
    requests, unsupported = [], []
    for path, raw in ctx.items(devices.get("requests"), f"{base}.devices.requests"):
        request, reasons = _device_request(ctx, path, raw)
        requests.append(request)
        unsupported += reasons
    constraints = []
    for path, raw in ctx.items(devices.get("constraints"), f"{base}.devices.constraints"):
        if raw.get("distinctAttribute"):
            unsupported.append("DRA constraint distinctAttribute not supported")
            continue
        attribute = ctx.text(raw.get("matchAttribute"), f"{path}.matchAttribute", required=True)
        names = ctx.sequence(raw.get("requests"), f"{path}.requests")
        constraints.append(
            MatchAttribute(attribute, tuple(ctx.text(n, f"{path}.requests") for n in names))
        )
    return DeviceClaim(name, tuple(requests), tuple(constraints)), tuple(unsupported)


def _device_request(
    ctx: ObjectContext, path: str, raw: dict[str, Any]
) -> tuple[DeviceRequest, list[str]]:
    name = ctx.text(raw.get("name"), f"{path}.name", required=True)
    if raw.get("firstAvailable"):
        return DeviceRequest(name, ""), ["DRA firstAvailable (prioritized list) not supported"]
    body = ctx.mapping(raw.get("exactly"), f"{path}.exactly") if "exactly" in raw else raw
    base = f"{path}.exactly" if "exactly" in raw else path
    mode = ctx.text(body.get("allocationMode"), f"{base}.allocationMode") or "ExactCount"
    if mode not in ("ExactCount", "All"):
        ctx.fail(f"{base}.allocationMode", f"must be ExactCount or All, got {mode!r}")
    selectors, reasons = selector_list(ctx, body.get("selectors"), f"{base}.selectors")
    capacity = ctx.mapping(
        ctx.mapping(body.get("capacity"), f"{base}.capacity").get("requests"),
        f"{base}.capacity.requests",
    )
    request = DeviceRequest(
        name=name,
        device_class=ctx.text(
            body.get("deviceClassName"), f"{base}.deviceClassName", required=True
        ),
        count=ctx.integer(body.get("count"), f"{base}.count", default=1, minimum=1),
        allocation_mode=mode,
        selectors=selectors,
        capacity_requests={
            str(k): memory_bytes(ctx.quantity(v, f"{base}.capacity.requests.{k}"))
            for k, v in capacity.items()
        },
    )
    return request, reasons


def selector_list(ctx: ObjectContext, raw: Any, field_name: str):  # type: ignore[no-untyped-def]
    """CEL selectors compiled to AttributeSelectors, plus reasons for those beyond the subset."""
    selectors: list[AttributeSelector] = []
    reasons: list[str] = []
    for path, item in ctx.items(raw, field_name):
        cel = ctx.mapping(item.get("cel"), f"{path}.cel")
        expression = ctx.text(cel.get("expression"), f"{path}.cel.expression", required=True)
        try:
            selectors += compile_selector(expression)
        except CelUnsupported as error:
            reasons.append(str(error))
    return tuple(selectors), reasons


def _device_class(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    name = ctx.object.partition("/")[2]
    selectors, reasons = selector_list(ctx, spec.get("selectors"), "spec.selectors")
    collected.device_classes[name] = (DeviceClass(name, selectors), tuple(reasons))


# --- volumes --------------------------------------------------------------------------------


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


# --- gangs ----------------------------------------------------------------------------------


def _coscheduling_pod_group(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    namespace, name = _namespace_name(ctx)
    min_member = ctx.integer(spec.get("minMember"), "spec.minMember", default=1, minimum=1)
    collected.pod_groups[(namespace, name)] = Gang(namespace, name, min_member)


def _kep_pod_group(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """scheduling.k8s.io PodGroup (KEP-4671): gang minCount, or its Workload template's."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    namespace, name = _namespace_name(ctx)
    policy = ctx.mapping(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    gang = ctx.mapping(policy.get("gang"), "spec.schedulingPolicy.gang")
    ref = ctx.mapping(
        ctx.mapping(spec.get("podGroupTemplateRef"), "spec.podGroupTemplateRef").get("workload"),
        "spec.podGroupTemplateRef.workload",
    )
    if ref:
        collected.group_templates[(namespace, name)] = (
            ctx.text(ref.get("workloadName"), "spec.podGroupTemplateRef.workload.workloadName"),
            ctx.text(
                ref.get("podGroupTemplateName"),
                "spec.podGroupTemplateRef.workload.podGroupTemplateName",
            ),
        )
    min_count = ctx.integer(gang.get("minCount"), "spec.schedulingPolicy.gang.minCount", default=0)
    if min_count < 0:
        ctx.fail("spec.schedulingPolicy.gang.minCount", "must be >= 0")
    collected.pod_groups[(namespace, name)] = Gang(namespace, name, min_count)


def _kep_workload(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    namespace, name = _namespace_name(ctx)
    templates = spec.get("podGroupTemplates", spec.get("podGroups"))
    for path, template in ctx.items(templates, "spec.podGroupTemplates"):
        template_name = ctx.text(template.get("name"), f"{path}.name", required=True)
        policy = ctx.mapping(
            template.get("schedulingPolicy", template.get("policy")), f"{path}.schedulingPolicy"
        )
        gang = ctx.mapping(policy.get("gang"), f"{path}.schedulingPolicy.gang")
        if gang:
            collected.workload_min[(namespace, name, template_name)] = ctx.integer(
                gang.get("minCount"), f"{path}.schedulingPolicy.gang.minCount", default=1, minimum=1
            )


# --- capacityweb.io kinds ----------------------------------------------------------------------


def _topology(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """The project's Topology; Kueue/KAI/Volcano ones are topology_k8s's (and win)."""
    topology = topology_k8s.level_topology(ctx, ctx.mapping(obj.get("spec"), "spec"))
    if collected.topology is not None:
        ctx.fail("kind", "only one capacityweb.io Topology per cluster")
    collected.topology = topology


def _node_group(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    name = ctx.object.partition("/")[2]
    min_size = ctx.integer(spec.get("minSize"), "spec.minSize", minimum=0)
    max_size = ctx.integer(spec.get("maxSize"), "spec.maxSize", minimum=0)
    if max_size < min_size:
        ctx.fail("spec.maxSize", f"must be >= minSize ({min_size}), got {max_size}")
    price = ctx.number(
        spec.get("pricePerNodeHour"), "spec.pricePerNodeHour", default=-1.0, minimum=0
    )
    selector = ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector")
    given = frozenset(k for k in spec if spec[k] is not None)
    group = NodeGroup(
        name=name,
        node_selector=selector,
        min_size=min_size,
        max_size=max_size,
        price_per_node_hour=price,
        template=_template_node(ctx, name, selector, price, spec.get("template"))
        if "template" in given
        else Node(name=f"{name}-template", node_group=name),
        placements=_placements(ctx, spec.get("placement")),
        provisioning_delay_seconds=ctx.number(
            spec.get("provisioningDelaySeconds"), "spec.provisioningDelaySeconds"
        ),
    )
    collected.node_groups.append((ctx, group, given))


def _template_node(
    ctx: ObjectContext, group: str, selector: dict[str, str], price: float, raw: Any
) -> Node:
    """What a new node looks like; GPUs built the same way as for real nodes."""
    template = ctx.mapping(raw, "spec.template")
    if not template:
        ctx.fail("spec.template", "required")
    name = f"{group}-template"
    labels = {**selector, **ctx.labels(template.get("labels"), "spec.template.labels")}
    resources, gpu_count = _allocatable(
        ctx, template.get("allocatable"), "spec.template.allocatable"
    )
    node = Node(
        name=name,
        labels=labels,
        taints=_taints(ctx, template.get("taints"), "spec.template.taints"),
        allocatable=resources,
        node_group=group,
        price_per_node_hour=price,
    )
    devices: list[Device] = []
    counter_sets: list[CounterSet] = []
    for path, item in ctx.items(template.get("resourceSlices"), "spec.template.resourceSlices"):
        spec = ctx.mapping(item.get("spec"), f"{path}.spec") if "spec" in item else item
        parsed = dra.parse_slice(ObjectContext(ctx.source, ctx.object), spec)
        devices += [d.device for d in parsed.devices]
        counter_sets += parsed.counter_sets
    return _with_gpus(node, gpu_count, devices, counter_sets)


def _placements(ctx: ObjectContext, raw: Any) -> tuple[NodePlacement, ...]:
    return tuple(
        NodePlacement(
            labels=ctx.labels(item.get("labels"), f"{path}.labels"),
            max_new_nodes=ctx.integer(item.get("maxNewNodes"), f"{path}.maxNewNodes", minimum=0),
        )
        for path, item in ctx.items(raw, "spec.placement")
    )


def _reservation(collected: _Collected, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    spec = ctx.mapping(obj.get("spec"), "spec")
    owner = ctx.mapping(spec.get("owner"), "spec.owner")
    namespaces = tuple(
        ctx.text(n, f"spec.owner.namespaces[{i}]", required=True)
        for i, n in enumerate(ctx.sequence(owner.get("namespaces"), "spec.owner.namespaces"))
    )
    if not namespaces:
        ctx.fail("spec.owner.namespaces", "required: who may use the reservation")
    chosen = [k for k in ("nodeNames", "nodeSelector", "nodeGroup") if spec.get(k)]
    if len(chosen) != 1:
        ctx.fail(
            "spec",
            f"needs exactly one of nodeNames, nodeSelector, nodeGroup; got {chosen or 'none'}",
        )
    start = ctx.timestamp(spec.get("start"), "spec.start")
    end = ctx.timestamp(spec.get("end"), "spec.end")
    if start and end and not start < end:
        ctx.fail("spec.end", "must be after spec.start")
    reservation = Reservation(
        name=ctx.object.partition("/")[2],
        owner_namespaces=namespaces,
        node_names=tuple(
            ctx.text(n, f"spec.nodeNames[{i}]", required=True)
            for i, n in enumerate(ctx.sequence(spec.get("nodeNames"), "spec.nodeNames"))
        ),
        node_selector=ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector"),
        node_group=_reserved_group(ctx, spec.get("nodeGroup")),
        start=start,
        end=end,
        price_per_gpu_hour=ctx.number(spec.get("pricePerGpuHour"), "spec.pricePerGpuHour"),
    )
    collected.reservations.append((ctx, reservation))


def _reserved_group(ctx: ObjectContext, raw: Any) -> ReservedNodeGroupCapacity | None:
    group = ctx.mapping(raw, "spec.nodeGroup")
    if not group:
        return None
    if group.get("count") is None:
        ctx.fail("spec.nodeGroup.count", "required")
    return ReservedNodeGroupCapacity(
        node_group=ctx.text(group.get("name"), "spec.nodeGroup.name", required=True),
        count=ctx.integer(group.get("count"), "spec.nodeGroup.count", minimum=1),
    )


_HANDLERS = {
    ("Node", "*"): _node,
    ("Pod", "*"): _pod,
    ("Namespace", "*"): _namespace,
    ("ResourceSlice", "*"): _resource_slice,
    ("ResourceClaim", "*"): _resource_claim,
    ("ResourceClaimTemplate", "*"): _resource_claim_template,
    ("DeviceClass", "*"): _device_class,
    ("PersistentVolumeClaim", "*"): _persistent_volume_claim,
    ("PersistentVolume", "*"): _persistent_volume,
    ("StorageClass", "*"): _storage_class,
    ("PodGroup", COSCHEDULING_GROUP): _coscheduling_pod_group,
    ("PodGroup", GANG_GROUP): _kep_pod_group,
    ("Workload", GANG_GROUP): _kep_workload,
    ("Topology", PROJECT_GROUP): _topology,
    ("Topology", KUEUE_GROUP): topology_k8s.collect_levels,
    ("Topology", topology_k8s.KAI): topology_k8s.collect_levels,
    ("HyperNode", topology_k8s.VOLCANO_TOPOLOGY): topology_k8s.collect_hypernode,
    ("NodeGroup", PROJECT_GROUP): _node_group,
    ("Reservation", PROJECT_GROUP): _reservation,
    **{kind: workloads_k8s.collect for kind in workloads_k8s.CONTROLLER_KINDS},
    **{kind: quotas.parse_queue for kind in quotas.QUEUE_KINDS},
    ("ConfigMap", "*"): discovery.config_map,
    ("NodePool", "karpenter.sh"): discovery.karpenter_node_pool,
    ("DaemonSet", "apps"): discovery.daemon_set,
    (discovery.KWOK_KIND, "kwok.cluster-autoscaler.x-k8s.io"): discovery.kwok_provider_config,
    ("EC2NodeClass", "karpenter.k8s.aws"): cloud_reservations.karpenter_node_class,
    (cloud_reservations.AWS_KIND, "ec2.amazonaws.com"): cloud_reservations.aws_capacity_reservation,
    (cloud_reservations.GCP_KIND, "compute.googleapis.com"): cloud_reservations.gcp_reservation,
}


# --- assembly ---------------------------------------------------------------------------------


def _assemble(
    collected: _Collected,
    cluster_name: str,
    prices: PriceTable,
    discovered_groups: tuple[NodeGroup, ...] = (),
) -> Snapshot:
    workloads_k8s.add_wanted_pods(collected, _pod)
    devices = _nodes_with_devices(collected)
    found, notices = discovery.discover_node_groups(collected.discovered, devices, prices)
    here = {g.name for g in found}
    found += tuple(g for g in discovered_groups if g.name not in here)
    nodes, node_groups = assign_node_groups(devices, _checked_node_groups(collected, found))
    imported, reservation_notices = cloud_reservations.resolve(
        collected.discovered.cloud_reservations,
        node_groups,
        prices,
        discovery.gpus_by_instance_type(node_groups),
    )
    pods = tuple(
        _pod_with_volumes(collected, record, _pod_with_claims(collected, record))
        for record in collected.pods
    )
    topology, topology_source, topology_notes = topology_k8s.choose(
        collected.topology, collected.topology_found
    )
    collected.notes.extend(topology_notes)
    pods = podaffinity.needing_namespaces(pods, bool(collected.namespaces))
    cluster = Cluster(
        name=cluster_name,
        topology=topology,
        topology_source=topology_source,
        nodes=nodes,
        pods=pods,
        gangs=_gangs(collected, pods),
        device_classes=tuple(dc for dc, _ in collected.device_classes.values()),
        node_groups=node_groups,
        reservations=_checked_reservations(collected, node_groups) + imported,
        queues=quotas.assembled_queues(collected),
        namespace_labels=collected.namespaces,
        ignored=dict(sorted(collected.ignored.items())),
        unsupported=_unsupported_fields(collected),
    )
    return Snapshot(
        cluster=cluster,
        errors=tuple(collected.errors),
        ignored=dict(collected.ignored),
        read=dict(collected.read),
        notes=tuple(collected.notes),
        notices=notices + reservation_notices,
    )


def _unsupported_fields(collected: _Collected) -> tuple[UnsupportedField, ...]:
    """Every field read but not modelled, by object then field (claims' reasons included)."""
    found = [u for record in collected.pods for u in record.unmodelled]
    found += collected.volume_fields
    return tuple(sorted(dict.fromkeys(found), key=lambda u: (u.object, u.field, u.reason)))


def _checked_node_groups(
    collected: _Collected, found: tuple[NodeGroup, ...]
) -> tuple[NodeGroup, ...]:
    """Hand-written groups over discovered ones; one without a template needs a
    discovered group of its name to take the template from."""
    names = {g.name for g in found}
    project = []
    for ctx, group, given in collected.node_groups:
        if "template" not in given and group.name not in names:
            collected.errors.append(ModelError(ctx.source, ctx.object, "spec.template", "required"))
            continue
        project.append((group, given))
    return discovery.merge_project_groups(found, project)


def _checked_reservations(
    collected: _Collected, node_groups: tuple[NodeGroup, ...]
) -> tuple[Reservation, ...]:
    known = {g.name for g in node_groups}
    kept = []
    for ctx, reservation in collected.reservations:
        if reservation.node_group and reservation.node_group.node_group not in known:
            collected.errors.append(
                ModelError(
                    ctx.source,
                    ctx.object,
                    "spec.nodeGroup.name",
                    f"no NodeGroup named {reservation.node_group.node_group!r}",
                )
            )
            continue
        kept.append(reservation)
    return tuple(kept)


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


def _nodes_with_devices(collected: _Collected) -> tuple[Node, ...]:
    by_node: dict[str, list[Any]] = {}
    counter_sets: dict[tuple[str, str], list[Any]] = {}
    for _, parsed in collected.slices:
        for counter in parsed.counter_sets:
            counter_sets.setdefault((parsed.driver, parsed.pool), []).append(counter)
        for item in parsed.devices:
            if item.node_name:
                by_node.setdefault(item.node_name, []).append((parsed, item.device))
    nodes = []
    for node, gpu_count in collected.nodes:
        entries = by_node.get(node.name, [])
        devices = [device for _, device in entries]
        used = {c.counter_set for d in devices for c in d.consumes}
        sets = [
            counter
            for key in dict.fromkeys((p.driver, p.pool) for p, _ in entries)
            for counter in counter_sets.get(key, [])
            if counter.name in used
        ]
        nodes.append(_with_gpus(node, gpu_count, devices, sets))
    return tuple(nodes)


def _selects(selector: dict[str, str] | Any, node: Node) -> bool:
    return all(node.labels.get(k) == v for k, v in selector.items())


def _with_gpus(node: Node, gpu_count: int, devices: list[Any], counter_sets: list[Any]) -> Node:
    """DRA GPU devices win; without them, device-plugin allocatable + GFD labels."""
    gpus, placed = dra.dra_gpus(devices)
    if gpus:
        return replace(node, gpus=gpus, devices=placed, counter_sets=tuple(counter_sets))
    plugin_gpus, plugin_devices = dra.plugin_gpus(dict(node.labels), gpu_count)
    return replace(
        node,
        gpus=plugin_gpus,
        devices=tuple(placed) + plugin_devices,
        counter_sets=tuple(counter_sets),
    )


def _pod_with_claims(collected: _Collected, record: _PodRecord) -> Pod:
    pod = record.pod
    claims, reasons = [], list(pod.unsupported)
    for entry, kind, name in record.claim_refs:
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


def _pod_with_volumes(collected: _Collected, record: _PodRecord, pod: Pod) -> Pod:
    """The pod's claims as kube-scheduler's VolumeBinding and VolumeZone see them: node
    constraints ANDed into its affinity, PreFilter rejections, what is not modelled."""
    if not record.volume_claims or pod.node_name is not None:
        return pod
    found = volumes.pod_volumes(collected.volumes, pod.namespace, record.volume_claims)
    label = object_label("Pod", pod.namespace, pod.name)
    record.unmodelled += [UnsupportedField(label, "spec.volumes", r) for r in found.unsupported]
    return replace(
        pod,
        affinity=volumes.with_volume_affinity(pod.affinity, found.groups),
        rejected=(*pod.rejected, *dict.fromkeys(found.rejected)),
        unsupported=tuple(dict.fromkeys((*pod.unsupported, *found.unsupported))),
    )


def _class_reasons(collected: _Collected, claim: DeviceClaim) -> list[str]:
    reasons = []
    for request in claim.requests:
        if not request.device_class:
            continue
        found = collected.device_classes.get(request.device_class)
        if found is None:
            reasons.append(f"DeviceClass {request.device_class} not found")
        else:
            reasons += found[1]
    return reasons


def _gangs(collected: _Collected, pods: tuple[Pod, ...]) -> tuple[Gang, ...]:
    """Gangs referenced by pods or declared; pod annotations give the topology constraint."""
    members: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.gang:
            members.setdefault(pod.gang, []).append(pod)
    totals = {r.pod.gang: r.group_total for r in collected.pods if r.group_total}
    gangs = {}
    for (namespace, name), gang in collected.pod_groups.items():
        gangs[gang.key] = _resolved_min(collected, gang, namespace, name)
    for key, group_pods in members.items():
        namespace, _, name = key.partition("/")
        gang = gangs.get(key) or Gang(namespace, name, totals.get(key) or len(group_pods))
        first = group_pods[0]
        gangs[key] = replace(
            gang,
            required_topology=gang.required_topology or first.required_topology,
            preferred_topology=gang.preferred_topology or first.preferred_topology,
            priority=max(p.priority for p in group_pods),
        )
    return tuple(gangs[key] for key in sorted(gangs))


def _resolved_min(collected: _Collected, gang: Gang, namespace: str, name: str) -> Gang:
    if gang.min_member:
        return gang
    workload, template = collected.group_templates.get((namespace, name), ("", ""))
    return replace(gang, min_member=collected.workload_min.get((namespace, workload, template), 1))


# the parts discovery (topology.discovery) reads objects with, under public names
node_requirement = _requirement
node_taints = _taints
pod_spec_requests = _pod_requests
required_node_affinity = _required_affinity
pod_tolerations = _tolerations


def node_with_plugin_gpus(node: Node, gpu_count: int) -> Node:
    return _with_gpus(node, gpu_count, [], [])
