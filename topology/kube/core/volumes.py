"""PersistentVolumeClaims, PersistentVolumes and StorageClasses → where a pod may run.

Pure: no Django, no I/O. ``topology.kube.parse`` parses the three kinds into a
``VolumeCatalog`` and asks ``pod_volumes`` what a pod's claims imply. What can be
decided from the objects alone is modelled as kube-scheduler decides it:

VolumeBinding (upstream ``pkg/scheduler/framework/plugins/volumebinding/``
``volume_binding.go`` PreFilter/Filter, ``binder.go`` FindPodVolumes):

- PreFilter, the pod fits no node at all: a claim that does not exist
  (``persistentvolumeclaim "NAME" not found``), is being deleted, or is unbound
  and not WaitForFirstConsumer (no class, a class not found, ``Immediate``, or
  pre-bound by ``volumeName`` without the bind-completed annotation): "pod has
  unbound immediate PersistentVolumeClaims";
- Filter, bound claims: the PV's ``spec.nodeAffinity.required`` must match the
  node ("node(s) had volume node affinity conflict");
- Filter, unbound WaitForFirstConsumer claims to be provisioned: the class's
  ``allowedTopologies`` must match the node, and a class whose provisioner is
  ``kubernetes.io/no-provisioner`` cannot provision at all ("node(s) didn't find
  available persistent volumes to bind"). Binding to an existing Available PV of
  the class is not modelled: such a claim is reported unsupported.

VolumeZone (upstream ``volumezone/volume_zone.go``): a bound PV's zone and
region labels (GA and beta keys; ``a__b`` = several zones) must match the
node's, unless the node has no zone/region label at all ("node(s) had no
available volume zone"); a bound PV that does not exist fails its PreFilter
(``persistentvolume "NAME" not found``).

The node-side rules become node-selector terms merged into the pod's required
node affinity (ANDed, as a cross product of the ORed term lists), each
requirement tagged with the reason it stands for; the engine's NodeAffinity
rule reports that reason when only such a requirement fails. Storage capacity
(CSIStorageCapacity) and attach limits (NodeVolumeLimits) are not modelled; a
ReadWriteOncePod claim (VolumeRestrictions) is reported unsupported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.hardware import LabelRequirement, NodeSelectorTerm

NODE_CONFLICT = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ZONE_CONFLICT = "node(s) had no available volume zone"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
# kube-scheduler's Filter order: VolumeBinding's reasons, then VolumeZone's
REASON_ORDER = (PV_NOT_EXIST, NODE_CONFLICT, BIND_CONFLICT, ZONE_CONFLICT)
READ_WRITE_ONCE_POD_REASON = "a ReadWriteOncePod claim (VolumeRestrictions) is not modelled"
STATIC_BINDING_REASON = (
    "binding a WaitForFirstConsumer claim to an existing Available PersistentVolume "
    "(VolumeBinding) is not modelled"
)

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
GA_ZONE, GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
GA_OF_BETA = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}


@dataclass(frozen=True, slots=True)
class Claim:
    namespace: str
    name: str
    volume_name: str
    bound: bool  # volumeName set and the binding completed
    storage_class: str
    deleting: bool = False
    read_write_once_pod: bool = False  # accessModes holds ReadWriteOncePod


@dataclass(frozen=True, slots=True)
class Volume:
    name: str
    storage_class: str
    available: bool  # no claimRef: free for static binding
    node_terms: tuple[NodeSelectorTerm, ...] | None  # spec.nodeAffinity.required (ORed)
    zones: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (label key, allowed values)
    unsupported: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    wait_for_first_consumer: bool
    provisioner: str
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()  # ORed; empty: anywhere


@dataclass(slots=True)
class VolumeCatalog:
    claims: dict[tuple[str, str], Claim] = field(default_factory=dict)
    volumes: dict[str, Volume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)


@dataclass(slots=True)
class PodVolumes:
    """What a pod's claims imply: node-selector groups to AND with its affinity,
    PreFilter rejections, and what is not modelled."""

    groups: list[tuple[NodeSelectorTerm, ...]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


# --- parsing -------------------------------------------------------------------------


def parse_claim(ctx: ObjectContext, obj: dict[str, Any]) -> Claim:
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    spec = ctx.mapping(obj.get("spec"), "spec")
    status = ctx.mapping(obj.get("status"), "status")
    annotations = ctx.labels(meta.get("annotations"), "metadata.annotations")
    _, namespace, name = ctx.object.split("/", 2)
    volume_name = ctx.text(spec.get("volumeName"), "spec.volumeName")
    # a real bound claim carries the annotation; phase Bound is accepted for hand-written ones
    completed = BIND_COMPLETED in annotations or status.get("phase") == "Bound"
    return Claim(
        namespace=namespace,
        name=name,
        volume_name=volume_name,
        bound=bool(volume_name) and completed,
        storage_class=ctx.text(spec.get("storageClassName"), "spec.storageClassName")
        or annotations.get(BETA_CLASS_ANNOTATION, ""),
        deleting=bool(meta.get("deletionTimestamp")),
        read_write_once_pod="ReadWriteOncePod"
        in ctx.sequence(spec.get("accessModes"), "spec.accessModes"),
    )


TermsReader = Callable[[ObjectContext, Any, str], tuple[tuple[NodeSelectorTerm, ...], list[str]]]


def parse_volume(ctx: ObjectContext, obj: dict[str, Any], terms_of: TermsReader) -> Volume:
    """``terms_of(ctx, raw, field)``: the parser's node-selector reader (terms, reasons)."""
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    spec = ctx.mapping(obj.get("spec"), "spec")
    labels = ctx.labels(meta.get("labels"), "metadata.labels")
    affinity = ctx.mapping(spec.get("nodeAffinity"), "spec.nodeAffinity")
    node_terms: tuple[NodeSelectorTerm, ...] | None = None
    unsupported: list[str] = []
    if affinity.get("required") is not None:
        required = ctx.mapping(affinity.get("required"), "spec.nodeAffinity.required")
        node_terms, unsupported = terms_of(
            ctx, required.get("nodeSelectorTerms"), "spec.nodeAffinity.required.nodeSelectorTerms"
        )
    zones = tuple(
        (key, tuple(v for v in labels[key].split("__") if v))
        for key in ZONE_LABELS
        if key in labels
    )
    return Volume(
        name=ctx.object.partition("/")[2],
        storage_class=ctx.text(spec.get("storageClassName"), "spec.storageClassName"),
        available=not spec.get("claimRef"),
        node_terms=node_terms,
        zones=zones,
        unsupported=tuple(unsupported),
    )


def parse_class(ctx: ObjectContext, obj: dict[str, Any]) -> StorageClass:
    mode = ctx.text(obj.get("volumeBindingMode"), "volumeBindingMode") or "Immediate"
    if mode not in ("Immediate", WAIT_FOR_FIRST_CONSUMER):
        ctx.fail("volumeBindingMode", f"must be Immediate or WaitForFirstConsumer, got {mode!r}")
    terms = []
    for path, term in ctx.items(obj.get("allowedTopologies"), "allowedTopologies"):
        requirements = []
        for req_path, expression in ctx.items(
            term.get("matchLabelExpressions"), f"{path}.matchLabelExpressions"
        ):
            key = ctx.text(expression.get("key"), f"{req_path}.key", required=True)
            values = tuple(
                ctx.text(v, f"{req_path}.values[{i}]")
                for i, v in enumerate(ctx.sequence(expression.get("values"), f"{req_path}.values"))
            )
            requirements.append(LabelRequirement(key, "In", values, BIND_CONFLICT))
        terms.append(NodeSelectorTerm(tuple(requirements)))
    return StorageClass(
        name=ctx.object.partition("/")[2],
        wait_for_first_consumer=mode == WAIT_FOR_FIRST_CONSUMER,
        provisioner=ctx.text(obj.get("provisioner"), "provisioner"),
        allowed_topologies=tuple(terms),
    )


# --- what a pod's claims imply ---------------------------------------------------------


def pod_volumes(catalog: VolumeCatalog, namespace: str, claim_names: Sequence[str]) -> PodVolumes:
    """kube-scheduler's VolumeBinding and VolumeZone for one pod's claims (see above)."""
    result = PodVolumes()
    zones: list[tuple[str, tuple[str, ...]]] = []
    for name in claim_names:
        claim = catalog.claims.get((namespace, name))
        if claim is None:
            result.rejected.append(f'persistentvolumeclaim "{name}" not found')
        elif claim.deleting:
            result.rejected.append(f'persistentvolumeclaim "{name}" is being deleted')
        elif claim.read_write_once_pod:  # one pod cluster-wide: needs every other pod's claims
            result.unsupported.append(READ_WRITE_ONCE_POD_REASON)
        elif claim.bound:
            zones += _bound_claim(catalog, claim, result)
        else:
            _unbound_claim(catalog, claim, result)
    if zones and not result.rejected:
        result.groups.append(_zone_group(zones))
    return result


def _bound_claim(
    catalog: VolumeCatalog, claim: Claim, result: PodVolumes
) -> list[tuple[str, tuple[str, ...]]]:
    volume = catalog.volumes.get(claim.volume_name)
    if volume is None:  # VolumeZone's PreFilter fetches it first
        result.rejected.append(f'persistentvolume "{claim.volume_name}" not found')
        return []
    result.unsupported += volume.unsupported
    if volume.node_terms is not None:
        result.groups.append(_tagged(volume.node_terms, NODE_CONFLICT))
    return list(volume.zones)


def _unbound_claim(catalog: VolumeCatalog, claim: Claim, result: PodVolumes) -> None:
    storage_class = catalog.classes.get(claim.storage_class) if claim.storage_class else None
    if storage_class is None or not storage_class.wait_for_first_consumer or claim.volume_name:
        result.rejected.append(UNBOUND_IMMEDIATE)
        return
    if any(v.available and v.storage_class == storage_class.name for v in catalog.volumes.values()):
        result.unsupported.append(STATIC_BINDING_REASON)
        return
    if storage_class.provisioner in ("", NO_PROVISIONER):
        result.groups.append((NodeSelectorTerm((_never(BIND_CONFLICT),)),))
    elif storage_class.allowed_topologies:
        result.groups.append(storage_class.allowed_topologies)


def _zone_group(zones: list[tuple[str, tuple[str, ...]]]) -> tuple[NodeSelectorTerm, ...]:
    """VolumeZone as ORed terms: the node has no zone/region label at all, or every PV
    label matches (a beta key falls back to the node's GA label when it lacks the beta one)."""
    unlabelled = NodeSelectorTerm(
        tuple(LabelRequirement(k, "DoesNotExist", (), ZONE_CONFLICT) for k in ZONE_LABELS)
    )
    per_label = []
    for key, values in dict.fromkeys(zones):
        match = [NodeSelectorTerm((LabelRequirement(key, "In", values, ZONE_CONFLICT),))]
        if key in GA_OF_BETA:
            match.append(
                NodeSelectorTerm(
                    (
                        LabelRequirement(key, "DoesNotExist", (), ZONE_CONFLICT),
                        LabelRequirement(GA_OF_BETA[key], "In", values, ZONE_CONFLICT),
                    )
                )
            )
        per_label.append(match)
    return (unlabelled, *_product_terms(per_label))


def with_volume_affinity(
    affinity: tuple[NodeSelectorTerm, ...], groups: Iterable[tuple[NodeSelectorTerm, ...]]
) -> tuple[NodeSelectorTerm, ...]:
    """The pod's ORed terms ANDed with each group's: the cross product, concatenated."""
    groups = list(groups)
    if not groups:
        return affinity
    own = [list(affinity)] if affinity else []
    return tuple(_product_terms([*own, *(list(g) for g in groups)]))


def _product_terms(groups: list[list[NodeSelectorTerm]]) -> list[NodeSelectorTerm]:
    terms = []
    for combination in product(*groups):
        requirements = tuple(r for term in combination for r in term.requirements)
        terms.append(NodeSelectorTerm(requirements))
    return terms


def _tagged(terms: tuple[NodeSelectorTerm, ...], origin: str) -> tuple[NodeSelectorTerm, ...]:
    if not terms:  # no term matches any node (MatchNodeSelectorTerms of none is false)
        return (NodeSelectorTerm((_never(origin),)),)
    return tuple(
        NodeSelectorTerm(
            tuple(LabelRequirement(r.key, r.operator, r.values, origin) for r in term.requirements)
        )
        for term in terms
    )


def _never(origin: str) -> LabelRequirement:
    """A requirement no node meets (In with no value), failing with ``origin``'s reason."""
    return LabelRequirement("", "In", (), origin)


def failed_origin(terms: tuple[NodeSelectorTerm, ...], labels: dict[str, str] | Any) -> str | None:
    """Which rule a node failing ``terms`` fails first, in kube-scheduler's order: None for
    the pod's own node affinity, else the volume reason (see REASON_ORDER)."""
    allowed = {""}
    if not _any_term_matches(terms, labels, allowed):
        return None
    for origin in REASON_ORDER:
        allowed.add(origin)
        if not _any_term_matches(terms, labels, allowed):
            return origin
    return None


def _any_term_matches(terms: tuple[NodeSelectorTerm, ...], labels: Any, allowed: set[str]) -> bool:
    return any(
        all(r.matches(labels) for r in term.requirements if r.origin in allowed) for term in terms
    )
