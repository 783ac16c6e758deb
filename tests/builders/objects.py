"""Kubernetes objects as the API serves them: the parser's inputs (``parse_objects``).

The model builders (``make_node``…) build what the parser returns; these build what it
reads, for tests of the readers and of whole snapshots. Same habits: every setter
returns a changed copy, so a module names a shape once; ``dict()`` returns a fresh
object dict (tests may change it in place)::

    node_object("n1").allocatable(cpu="64", memory="512Gi", pods="110").gpus(8).dict()
    pod_object("ml", "p").requests(cpu="1").limits({GPU: "1"}).on("n1").dict()

Field names are upstream's (``k8s.io/api/core/v1``, ``batch/v1``, Kueue, Karpenter,
scheduler-plugins…); what a builder does not say is absent, as in a real object.
Quantities stay as given: ``"64"``, ``"512Gi"``, or a number where a manifest has one.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Self

GPU = "nvidia.com/gpu"
GPU_PRODUCT = "nvidia.com/gpu.product"
HOSTNAME = "kubernetes.io/hostname"
CAPACITYWEB = "capacityweb.io/v1alpha1"
KUEUE = "kueue.x-k8s.io/v1beta1"
KARPENTER = "karpenter.sh/v1"
DRA = "resource.k8s.io/v1"
OWNER_API = {
    "DaemonSet": "apps/v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
    "JobSet": "jobset.x-k8s.io/v1alpha2",
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
}


def _merged(into: dict[str, Any], path: tuple[str, ...], fields: Mapping[str, Any]) -> None:
    for key in path:
        into = into.setdefault(key, {})
    into.update(fields)


class ObjectBuilder:
    """Any object: apiVersion, kind, metadata, then whatever is set."""

    def __init__(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        metadata: dict[str, Any] = {"name": name}
        if namespace is not None:
            metadata["namespace"] = namespace
        self._object: dict[str, Any] = {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": metadata,
        }

    def _changed(self, path: tuple[str, ...], fields: Mapping[str, Any]) -> Self:
        clone = copy.copy(self)
        clone._object = copy.deepcopy(self._object)
        _merged(clone._object, path, fields)
        return clone

    def _appended(self, path: tuple[str, ...], key: str, *items: Any) -> Self:
        clone = self._changed(path, {})
        into = clone._object
        for part in path:
            into = into[part]
        into[key] = [*into.get(key, []), *copy.deepcopy(items)]
        return clone

    def named(self, name: str) -> Self:
        return self.meta(name=name)

    def field(self, *path: str, **fields: Any) -> Self:
        """Fields of ``path`` (``field("status", phase="Running")``), merged in."""
        return self._changed(path, fields)

    def top(self, **fields: Any) -> Self:
        """Fields beside metadata (a StorageClass's ``provisioner``, a ConfigMap's ``data``)."""
        return self._changed((), fields)

    def spec(self, **fields: Any) -> Self:
        return self._changed(("spec",), fields)

    def status(self, **fields: Any) -> Self:
        return self._changed(("status",), fields)

    def meta(self, **fields: Any) -> Self:
        return self._changed(("metadata",), fields)

    def label(self, key: str, value: str) -> Self:
        return self._changed(("metadata", "labels"), {key: value})

    def labels(self, labels: Mapping[str, str]) -> Self:
        """Labels added (``{}``: an empty ``labels`` map, as some manifests carry)."""
        return self._changed(("metadata", "labels"), labels)

    def annotation(self, key: str, value: str) -> Self:
        return self._changed(("metadata", "annotations"), {key: value})

    def annotations(self, annotations: Mapping[str, str]) -> Self:
        return self._changed(("metadata", "annotations"), annotations)

    def owner(self, kind: str, name: str, api_version: str | None = None, uid: str = "u1") -> Self:
        """The controller's ownerReference (``controller: true``)."""
        ref = {
            "apiVersion": api_version or OWNER_API.get(kind, "v1"),
            "kind": kind,
            "name": name,
            "uid": uid,
            "controller": True,
        }
        return self._appended(("metadata",), "ownerReferences", ref)

    def created(self, at: str) -> Self:
        """``metadata.creationTimestamp`` (RFC 3339, as served)."""
        return self.meta(creationTimestamp=at)

    def deleting(self, at: str) -> Self:
        """``metadata.deletionTimestamp``: terminating."""
        return self.meta(deletionTimestamp=at)

    def dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._object)


def kube_object(
    api_version: str, kind: str, name: str, namespace: str | None = None
) -> ObjectBuilder:
    """An object of any kind; ``spec``/``status``/``top`` fill it."""
    return ObjectBuilder(api_version, kind, name, namespace)


# --- nodes ------------------------------------------------------------------------------


class NodeObjectBuilder(ObjectBuilder):
    """A v1 Node: no labels, no allocatable, no conditions until said."""

    def __init__(self, name: str) -> None:
        super().__init__("v1", "Node", name, None)
        self._hostname = False
        self._capacity_is_allocatable = False

    def allocatable(self, resources: Mapping[str, Any] | None = None, /, **named: Any) -> Self:
        """``status.allocatable``: ``allocatable(cpu="64", memory="512Gi", pods="110")``;
        resources with a ``/`` in a mapping (``{GPU: "8"}``)."""
        return self._changed(("status", "allocatable"), {**(resources or {}), **named})

    def capacity(self, resources: Mapping[str, Any] | None = None, /, **named: Any) -> Self:
        """``status.capacity``; nothing said: the same as allocatable (no reserve),
        whatever allocatable is at ``dict()``."""
        if resources is None and not named:
            clone = copy.copy(self)
            clone._capacity_is_allocatable = True
            return clone
        return self._changed(("status", "capacity"), {**(resources or {}), **named})

    def gpus(self, count: int | str, product: str | None = None) -> Self:
        """``count`` device-plugin GPUs allocatable (``nvidia.com/gpu``, as a string);
        ``product``: the ``nvidia.com/gpu.product`` label GPU feature discovery sets."""
        found = self.allocatable({GPU: str(count)})
        return found.label(GPU_PRODUCT, product) if product is not None else found

    def hostname(self) -> Self:
        """The ``kubernetes.io/hostname`` label the kubelet sets: the node's name,
        whatever it is named at ``dict()``."""
        clone = copy.copy(self)
        clone._hostname = True
        return clone

    def taint(self, key: str, value: str | None = None, effect: str = "NoSchedule") -> Self:
        taint = {"key": key, "effect": effect} if value is None else {
            "key": key, "value": value, "effect": effect,
        }  # fmt: skip
        return self._appended(("spec",), "taints", taint)

    def taints(self, *taints: Mapping[str, str]) -> Self:
        """Taints as dicts; none: an empty ``spec.taints`` list."""
        return self._appended(("spec",), "taints", *taints)

    def unschedulable(self) -> Self:
        return self.spec(unschedulable=True)

    def ready(self, ready: bool = True) -> Self:
        """The kubelet's Ready condition, in place of the one said before."""
        condition = {"type": "Ready", "status": "True" if ready else "False"}
        conditions = self._object.get("status", {}).get("conditions", [])
        kept = [c for c in conditions if c.get("type") != "Ready"]
        return self._changed(("status",), {"conditions": copy.deepcopy([*kept, condition])})

    def dict(self) -> dict[str, Any]:
        found = super().dict()
        if self._hostname:
            metadata = found["metadata"]
            metadata["labels"] = {**metadata.get("labels", {}), HOSTNAME: metadata["name"]}
        if self._capacity_is_allocatable:
            status = found.setdefault("status", {})
            status["capacity"] = copy.deepcopy(status.get("allocatable", {}))
        return found


def node_object(name: str) -> NodeObjectBuilder:
    return NodeObjectBuilder(name)


# --- pods and pod templates -------------------------------------------------------------


def _container(
    name: str,
    requests: Mapping[str, Any] | None,
    limits: Mapping[str, Any] | None,
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    resources = {
        key: dict(value)
        for key, value in (("requests", requests), ("limits", limits))
        if value is not None
    }
    if resources:
        container["resources"] = resources
    return {**container, **fields}


class PodSpecBuilder(ObjectBuilder):
    """What a Pod and a pod template share: ``_pod_spec`` is where the PodSpec lives."""

    _pod_spec: tuple[str, ...] = ("spec",)

    def _spec(self) -> dict[str, Any]:
        into = self._object
        for part in self._pod_spec:
            into = into.get(part, {})
        return into

    def pod_spec(self, **fields: Any) -> Self:
        """Any PodSpec field (``affinity``, ``topologySpreadConstraints``, ``volumes``…)."""
        return self._changed(self._pod_spec, fields)

    def container(
        self,
        name: str = "c",
        requests: Mapping[str, Any] | None = None,
        limits: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> Self:
        """One more container; ``resources`` only with requests or limits said
        (``{}`` for an empty map)."""
        entry = _container(name, requests, limits, fields)
        return self._appended(self._pod_spec, "containers", entry)

    def init_container(
        self,
        name: str = "init",
        requests: Mapping[str, Any] | None = None,
        limits: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> Self:
        """One more of ``spec.initContainers``, as ``container`` (a sidecar:
        ``restartPolicy="Always"``)."""
        entry = _container(name, requests, limits, fields)
        return self._appended(self._pod_spec, "initContainers", entry)

    def _resources(self, key: str, values: Mapping[str, Any]) -> Self:
        containers = self._spec().get("containers")
        clone = self if containers else self.container()
        clone = clone._changed(self._pod_spec, {})
        container = clone._spec()["containers"][0]
        resources = container.setdefault("resources", {})
        resources[key] = {**resources.get(key, {}), **values}
        return clone

    def requests(self, resources: Mapping[str, Any] | None = None, /, **named: Any) -> Self:
        """Requests of the first container (made if none): ``requests(cpu="1")``,
        ``requests({GPU: "1"})``."""
        return self._resources("requests", {**(resources or {}), **named})

    def limits(self, resources: Mapping[str, Any] | None = None, /, **named: Any) -> Self:
        return self._resources("limits", {**(resources or {}), **named})

    def node_selector(self, selector: Mapping[str, str]) -> Self:
        return self._changed((*self._pod_spec, "nodeSelector"), selector)

    def tolerate(
        self,
        key: str | None = None,
        value: str | None = None,
        effect: str | None = None,
        operator: str | None = None,
    ) -> Self:
        """One toleration; what is not said is absent (``tolerate()``: tolerates all)."""
        fields = {"key": key, "operator": operator, "value": value, "effect": effect}
        toleration = {k: v for k, v in fields.items() if v is not None}
        return self._appended(self._pod_spec, "tolerations", toleration)

    def affinity(self, **kinds: Any) -> Self:
        """``spec.affinity``: ``affinity(podAntiAffinity={...})``."""
        return self._changed((*self._pod_spec, "affinity"), kinds)

    def spread(self, *constraints: Mapping[str, Any]) -> Self:
        return self._appended(self._pod_spec, "topologySpreadConstraints", *constraints)

    def priority(self, priority: int) -> Self:
        return self.pod_spec(priority=priority)

    def scheduler(self, name: str) -> Self:
        return self.pod_spec(schedulerName=name)

    def gate(self, name: str) -> Self:
        """A scheduling gate: the pod waits until it is removed."""
        return self._appended(self._pod_spec, "schedulingGates", {"name": name})

    def volume_claim(self, claim: str, volume: str | None = None) -> Self:
        """A volume of the PersistentVolumeClaim ``claim`` (named ``v<i>`` by default)."""
        name = volume or f"v{len(self._spec().get('volumes', []))}"
        entry = {"name": name, "persistentVolumeClaim": {"claimName": claim}}
        return self._appended(self._pod_spec, "volumes", entry)

    def resource_claim(self, name: str, claim: str) -> Self:
        """``spec.resourceClaims``: the DRA ResourceClaim ``claim``, as ``name``."""
        entry = {"name": name, "resourceClaimName": claim}
        return self._appended(self._pod_spec, "resourceClaims", entry)


class PodObjectBuilder(PodSpecBuilder):
    """A v1 Pod: no containers, Pending, or Running once bound (``on``), until said."""

    def __init__(self, namespace: str, name: str) -> None:
        super().__init__("v1", "Pod", name, namespace)
        self._phase: str | None = None
        self._written = False

    def on(self, node_name: str | None) -> Self:
        """Bound (``spec.nodeName``); ``None``: stays pending."""
        return self if node_name is None else self.pod_spec(nodeName=node_name)

    def phase(self, phase: str) -> Self:
        """``status.phase``; unsaid: Running when bound, Pending otherwise."""
        clone = copy.copy(self)
        clone._phase = phase
        return clone

    def as_written(self) -> Self:
        """No ``status`` at all: a manifest as written by hand, not yet created."""
        clone = copy.copy(self)
        clone._written = True
        return clone

    def dict(self) -> dict[str, Any]:
        found = super().dict()
        if self._written:
            return found
        bound = "nodeName" in found.get("spec", {})
        phase = self._phase or ("Running" if bound else "Pending")
        found["status"] = {**found.get("status", {}), "phase": phase}
        return found


def pod_object(namespace: str, name: str) -> PodObjectBuilder:
    return PodObjectBuilder(namespace, name)


class TemplateBuilder(PodSpecBuilder):
    """A controller whose ``spec.template`` is a pod template (DaemonSet, Job…)."""

    _pod_spec = ("spec", "template", "spec")

    def template_labels(self, labels: Mapping[str, str]) -> Self:
        return self._changed(("spec", "template", "metadata", "labels"), labels)


def daemon_set_object(namespace: str, name: str) -> TemplateBuilder:
    return TemplateBuilder("apps/v1", "DaemonSet", name, namespace)


def job_object(namespace: str, name: str) -> TemplateBuilder:
    """A batch/v1 Job; ``spec(parallelism=…, completions=…)`` sizes it."""
    return TemplateBuilder("batch/v1", "Job", name, namespace)


# --- gangs --------------------------------------------------------------------------------


def pod_group_object(namespace: str, name: str, min_member: int) -> ObjectBuilder:
    """scheduler-plugins' coscheduling PodGroup (members: label
    ``scheduling.x-k8s.io/pod-group``)."""
    return kube_object("scheduling.x-k8s.io/v1alpha1", "PodGroup", name, namespace).spec(
        minMember=min_member
    )


def volcano_pod_group_object(
    namespace: str, name: str, min_member: int, queue: str = "default"
) -> ObjectBuilder:
    """Volcano's PodGroup (members: annotation ``scheduling.k8s.io/group-name``)."""
    return kube_object("scheduling.volcano.sh/v1beta1", "PodGroup", name, namespace).spec(
        minMember=min_member, queue=queue
    )


# --- what can be bought: capacityweb NodeGroups and Reservations, Karpenter ----------------


class NodeGroupObjectBuilder(ObjectBuilder):
    """capacityweb's NodeGroup: nothing in its spec until said."""

    def __init__(self, name: str) -> None:
        super().__init__(CAPACITYWEB, "NodeGroup", name, None)

    def selector(self, selector: Mapping[str, str]) -> Self:
        return self._changed(("spec", "nodeSelector"), selector)

    def size(self, min_size: int, max_size: int) -> Self:
        return self.spec(minSize=min_size, maxSize=max_size)

    def price(self, per_node_hour: float) -> Self:
        return self.spec(pricePerNodeHour=per_node_hour)

    def template(
        self, labels: Mapping[str, str], allocatable: Mapping[str, Any], **fields: Any
    ) -> Self:
        """A new node's labels and allocatable (``taints`` and the rest as fields)."""
        template = {"labels": dict(labels), "allocatable": dict(allocatable), **fields}
        return self.spec(template=template)

    def placement(self, labels: Mapping[str, str], max_new_nodes: int) -> Self:
        entry = {"labels": dict(labels), "maxNewNodes": max_new_nodes}
        return self._appended(("spec",), "placement", entry)


def node_group_object(name: str) -> NodeGroupObjectBuilder:
    return NodeGroupObjectBuilder(name)


def reservation_object(name: str) -> ObjectBuilder:
    """capacityweb's Reservation; ``spec(owner=…, nodeNames=…, start=…, end=…)``."""
    return kube_object(CAPACITYWEB, "Reservation", name)


def node_pool_object(name: str, *requirements: Mapping[str, Any], **spec: Any) -> ObjectBuilder:
    """A Karpenter NodePool: its template's requirements, and ``taints`` and the rest of
    ``spec.template.spec`` as ``spec``."""
    template = {"requirements": [dict(r) for r in requirements], **spec}
    return kube_object(KARPENTER, "NodePool", name).spec(template={"spec": template})


def node_claim_object(name: str, node_pool: str, instance_type: str) -> ObjectBuilder:
    """A Karpenter NodeClaim of ``node_pool`` asking for one instance type, not yet a
    node; ``status(conditions=…)`` says how far it got."""
    type_label = "node.kubernetes.io/instance-type"
    requirement = {"key": type_label, "operator": "In", "values": [instance_type]}
    node_class = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}
    return (
        kube_object(KARPENTER, "NodeClaim", name)
        .labels({"karpenter.sh/nodepool": node_pool, type_label: instance_type})
        .spec(nodeClassRef=node_class, requirements=[requirement])
    )


def ca_status_object(text: str) -> ObjectBuilder:
    """cluster-autoscaler's status ConfigMap (``kube-system/cluster-autoscaler-status``)
    carrying the readable status ``text``."""
    configmap = kube_object("v1", "ConfigMap", "cluster-autoscaler-status", "kube-system")
    return configmap.top(data={"status": text})


# --- quotas: Kueue ------------------------------------------------------------------------


def cluster_queue_object(name: str, *resource_groups: Mapping[str, Any]) -> ObjectBuilder:
    """A Kueue ClusterQueue with ``spec.resourceGroups``; ``spec(cohort=…)`` for the rest."""
    groups = [dict(g) for g in resource_groups]
    return kube_object(KUEUE, "ClusterQueue", name).spec(resourceGroups=groups)


def local_queue_object(namespace: str, name: str, cluster_queue: str) -> ObjectBuilder:
    return kube_object(KUEUE, "LocalQueue", name, namespace).spec(clusterQueue=cluster_queue)


# --- storage --------------------------------------------------------------------------------


def pv_object(name: str) -> ObjectBuilder:
    """A PersistentVolume; ``spec(claimRef=…, nodeAffinity=…)``."""
    return kube_object("v1", "PersistentVolume", name)


def pvc_object(namespace: str, name: str) -> ObjectBuilder:
    """A PersistentVolumeClaim; ``spec(volumeName=…, storageClassName=…)``."""
    return kube_object("v1", "PersistentVolumeClaim", name, namespace)


def storage_class_object(name: str, provisioner: str, binding_mode: str) -> ObjectBuilder:
    return kube_object("storage.k8s.io/v1", "StorageClass", name).top(
        provisioner=provisioner, volumeBindingMode=binding_mode
    )


# --- DRA ---------------------------------------------------------------------------------------


def resource_slice_object(
    name: str,
    driver: str,
    node_name: str,
    devices: list[dict[str, Any]],
    generation: int = 0,
    slice_count: int = 1,
) -> ObjectBuilder:
    """A ResourceSlice of ``node_name``'s pool (named after the node)."""
    pool = {"name": node_name, "generation": generation, "resourceSliceCount": slice_count}
    return kube_object(DRA, "ResourceSlice", name).spec(
        driver=driver, nodeName=node_name, pool=pool, devices=devices
    )


def device_class_object(name: str, expression: str) -> ObjectBuilder:
    """A DeviceClass selecting devices by one CEL expression."""
    return kube_object(DRA, "DeviceClass", name).spec(
        selectors=[{"cel": {"expression": expression}}]
    )


def resource_claim_object(namespace: str, name: str, *requests: Mapping[str, Any]) -> ObjectBuilder:
    """A ResourceClaim with ``spec.devices.requests``; ``status(allocation=…)`` once
    allocated."""
    return kube_object(DRA, "ResourceClaim", name, namespace).spec(
        devices={"requests": [dict(r) for r in requests]}
    )


def as_dicts(*objects: ObjectBuilder | Mapping[str, Any]) -> list[dict[str, Any]]:
    """Builders built and object dicts as they are: what a test's ``parse`` takes."""
    return [o.dict() if isinstance(o, ObjectBuilder) else dict(o) for o in objects]


KubeObject = ObjectBuilder | dict[str, Any]
