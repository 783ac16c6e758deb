"""The one hardware model: frozen dataclasses both control loops read.

Everything capacityweb knows about a cluster ends up here, whatever the source
(Kubernetes API, exported files, the openb trace). The scheduler simulation and
the autoscaler simulation read the same objects, so they cannot disagree about
what the hardware is — only about what to do with it.

::

    Cluster
     ├─ Topology: levels outermost first (zone › block › rack › host › clique)
     ├─ Node ──┬─ Gpu      one physical accelerator (the heatmap cell)
     │         ├─ Device   one allocatable unit: a whole GPU, a MIG-like
     │         │           partition consuming CounterSet counters, or a
     │         │           consumable share (gpu_milli / memory)
     │         └─ CounterSet  shared counters of a partitionable GPU
     ├─ Pod ─── GpuRequest (count / milli / models) and DeviceClaim (DRA)
     ├─ Gang    all-or-nothing group of pods
     ├─ NodeGroup   what can be added, where, at what price
     └─ Reservation what is paid for, by whom

Pure: no Django, no I/O, no clock. Mappings inside the frozen objects are
never mutated after construction; treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

GPU_RESOURCE = "nvidia.com/gpu"
# time-slicing/MPS replicas under the device plugin's renameByDefault: a separate
# extended resource, drawn as GPU units too (see topology.dra.plugin_gpus)
SHARED_GPU_RESOURCE = "nvidia.com/gpu.shared"
WHOLE_GPU_MILLI = 1000
UNKNOWN = None  # a domain value a node's labels do not give: shown as unknown, never guessed

HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_LEVEL_KEYS: tuple[tuple[str, str], ...] = (
    ("topology.kubernetes.io/region", "region"),
    ("topology.kubernetes.io/zone", "zone"),
    ("cloud.google.com/gce-topology-block", "block"),
    ("cloud.google.com/gce-topology-subblock", "rack"),
    (HOSTNAME_LABEL, "host"),
    ("nvidia.com/gpu.clique", "nvlink"),
)


class ModelError(Exception):
    """The one project error: bad input, named by source, object, field and reason.

    ``object`` is ``Kind/namespace/name`` (or ``Kind/name`` for cluster-scoped
    objects); ``field`` is a dotted path into the object. ``str()`` gives the
    line the CLI prints and the API returns.
    """

    def __init__(self, source: str, object: str, field: str, reason: str) -> None:  # noqa: A002
        self.source = source
        self.object = object
        self.field = field
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.source, self.object, self.field) if p]
        return ": ".join([*parts, self.reason])

    def as_dict(self) -> dict[str, str]:
        return {
            "source": self.source,
            "object": self.object,
            "field": self.field,
            "reason": self.reason,
        }


# --- topology -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopologyLevel:
    """One level of the hierarchy, named by the node label key that carries it."""

    key: str
    name: str


@dataclass(frozen=True, slots=True)
class Topology:
    """Levels outermost first, like Kueue's Topology object."""

    levels: tuple[TopologyLevel, ...]

    @classmethod
    def default(cls) -> Topology:
        return cls(tuple(TopologyLevel(key, name) for key, name in DEFAULT_LEVEL_KEYS))

    def index_of(self, key_or_name: str) -> int | None:
        for index, level in enumerate(self.levels):
            if key_or_name in (level.key, level.name):
                return index
        return None

    def path(self, labels: Mapping[str, str]) -> tuple[str | None, ...]:
        """The node's domain value at each level; None where the label is absent."""
        return tuple(labels.get(level.key) for level in self.levels)


# --- scheduling constraints ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""  # empty key with operator Exists tolerates everything
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty matches all effects

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One nodeSelectorRequirement: In, NotIn, Exists, DoesNotExist, Gt, Lt.

    ``origin`` says which kube-scheduler plugin the requirement belongs to: ""
    for the pod's own node affinity, ``VolumeBinding`` / ``VolumeZone`` for one
    merged in from a volume (so a node that fails it gets that plugin's reason).
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    origin: str = ""

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.operator
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if op in ("Gt", "Lt"):
            if value is None or not _is_int(value) or not self.values:
                return False
            bound = int(self.values[0])
            return int(value) > bound if op == "Gt" else int(value) < bound
        return False


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Requirements ANDed; the terms of a node affinity are ORed."""

    requirements: tuple[LabelRequirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


# --- inter-pod constraints (InterPodAffinity, PodTopologySpread) ---------------


@dataclass(frozen=True, slots=True)
class PodSelector:
    """A metav1.LabelSelector over pod (or namespace) labels: requirements ANDed.

    ``nothing`` is the nil selector, which matches no pod (as
    ``LabelSelectorAsSelector(nil)`` does); no requirements match every pod.
    """

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """``{}``: matches everything (PodTopologySpread counts no pod with it)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return not self.nothing and all(r.matches(labels) for r in self.requirements)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """One required (anti-)affinity term: pods matching ``selector`` in ``namespaces``
    (or in namespaces matching ``namespace_selector``) within ``topology_key``.

    ``namespaces`` is already defaulted: a term naming neither namespaces nor a
    namespaceSelector means the owning pod's own namespace."""

    selector: PodSelector
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: PodSelector | None = None  # None: not given (matches no namespace)

    def matches(
        self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]
    ) -> bool:
        """kube-scheduler's ``AffinityTerm.Matches``: namespace first, then labels."""
        selected = self.namespace_selector
        if namespace in self.namespaces or (
            selected is not None and selected.matches(namespace_labels)
        ):
            return self.selector.matches(labels)
        return False


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One DoNotSchedule topologySpreadConstraint, matchLabelKeys merged into
    ``selector``; defaults as kube-scheduler's: minDomains 1, nodeAffinityPolicy
    Honor, nodeTaintsPolicy Ignore."""

    max_skew: int
    topology_key: str
    selector: PodSelector
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False


@dataclass(frozen=True, slots=True)
class PodPlacementTerms:
    """What a pod asks of the pods around it (required terms only: they filter)."""

    affinity: tuple[PodAffinityTerm, ...] = ()
    anti_affinity: tuple[PodAffinityTerm, ...] = ()
    spread: tuple[SpreadConstraint, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.affinity or self.anti_affinity or self.spread)


NO_POD_TERMS = PodPlacementTerms()


# --- capacity -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resources:
    """Countable resources in base units. ``extended`` excludes nvidia.com/gpu,
    which is modelled as devices (see Node.devices / Pod.gpu)."""

    cpu_milli: int = 0
    memory_bytes: int = 0
    pods: int = 0
    extended: Mapping[str, int] = field(default_factory=dict)


# --- devices ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gpu:
    """One physical accelerator: the unit the heatmap draws and the GPU counts count."""

    name: str  # unique within the node, e.g. "gpu-0"
    model: str | None = None
    memory_bytes: int | None = None
    pcie_root: str | None = None
    numa_node: int | None = None


@dataclass(frozen=True, slots=True)
class CounterSet:
    """Shared counters of one partitionable device (DRA sharedCounters).

    A MIG-capable GPU exposes e.g. ``memory-slice-0..7`` and ``compute`` here;
    each partition Device consumes some of them. A placement is valid only if
    the counters stay non-negative.
    """

    name: str
    counters: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    counter_set: str
    counters: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Device:
    """One allocatable unit on a node.

    - whole GPU: ``consumes`` empty, ``shareable`` False;
    - partition (MIG-like): ``profile`` set, ``consumes`` draws from a CounterSet;
    - consumable: ``shareable`` True (DRA allowMultipleAllocations): several
      pods draw ``capacity`` (e.g. ``gpu_milli`` 1000, ``memory`` bytes) at once;
    - counted unit: ``unit_gpu_milli`` set. The device plugin advertises
      ``nvidia.com/gpu`` as a count and kube-scheduler only counts it, so a
      MIG-single instance or a time-slicing/MPS replica is one unit of that
      count, taken whole by one pod, several per physical GPU.

    ``gpu`` names the physical Gpu the device lives on (None for non-GPU devices).
    ``attributes`` are DRA attributes by qualified name (e.g.
    ``resource.kubernetes.io/pcieRoot``, ``gpu.nvidia.com/productName``).
    """

    name: str
    driver: str = GPU_RESOURCE
    gpu: str | None = None
    model: str | None = None
    memory_bytes: int | None = None
    profile: str | None = None
    attributes: Mapping[str, str | int | bool] = field(default_factory=dict)
    capacity: Mapping[str, int] = field(default_factory=dict)
    consumes: tuple[CounterConsumption, ...] = ()
    shareable: bool = False
    pool: str = ""
    # one advertised unit of a counted device-plugin resource that shares its physical
    # GPU with the GPU's other units (a MIG instance under the single strategy, a
    # time-slicing or MPS replica): taking it holds this much of the GPU and leaves the
    # other units free; None for a device that is the whole GPU or a DRA device
    unit_gpu_milli: int | None = None


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True
    allocatable: Resources = field(default_factory=Resources)
    gpus: tuple[Gpu, ...] = ()
    devices: tuple[Device, ...] = ()
    counter_sets: tuple[CounterSet, ...] = ()
    node_group: str | None = None
    price_per_node_hour: float | None = None
    created: float = 0.0  # metadata.creationTimestamp, epoch seconds (0: not given)

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)


# --- demand -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """Count-based GPU demand (device plugin or trace).

    ``count`` GPUs, each needing ``milli_per_gpu`` of one GPU (1000 = whole,
    below 1000 = a fractional share, only with count 1). ``models`` restricts
    the GPU model (empty = any); ``memory_bytes`` a minimum GPU memory.
    """

    count: int
    milli_per_gpu: int = WHOLE_GPU_MILLI
    models: tuple[str, ...] = ()
    memory_bytes: int | None = None

    @property
    def total_milli(self) -> int:
        return self.count * self.milli_per_gpu

    @property
    def is_share(self) -> bool:
        return self.milli_per_gpu < WHOLE_GPU_MILLI


@dataclass(frozen=True, slots=True)
class AttributeSelector:
    """One compiled term of the supported CEL subset.

    ``device.attributes["d"].a == v`` → (attribute "d/a", op "==", v);
    ``device.capacity["d"].memory >= q`` → (capacity "d/memory", op ">=", v);
    ``device.driver == "x"`` → (driver, "==", "x"). Terms are ANDed.
    """

    target: str  # "attribute" | "capacity" | "driver"
    name: str  # qualified attribute / capacity name; "" for driver
    op: str  # == != < <= > >= in
    value: str | int | bool | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    device_class: str
    count: int = 1
    allocation_mode: str = "ExactCount"  # ExactCount | All
    selectors: tuple[AttributeSelector, ...] = ()
    capacity_requests: Mapping[str, int] = field(default_factory=dict)
    # the devices asked for are GPUs or parts of one (what GPU demand counts); the
    # engine decides it against the cluster's devices (workloads.pending_workloads)
    gpu: bool = True


@dataclass(frozen=True, slots=True)
class MatchAttribute:
    """All devices of the named requests (all requests if empty) share this attribute's value."""

    attribute: str
    requests: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    name: str
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[MatchAttribute, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[AttributeSelector, ...] = ()


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    """A policy/v1 PodDisruptionBudget as preemption reads it (``topology.disruption``).

    ``disruptions_allowed`` is ``status.disruptionsAllowed`` (None: the object has
    no status; then ``min_available`` / ``max_unavailable``, an int or a "N%",
    are worked out over the snapshot's pods)."""

    namespace: str
    name: str
    selector: PodSelector
    disruptions_allowed: int | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disrupted_pods: frozenset[str] = frozenset()  # status.disruptedPods: names already counted

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selects(self, pod: Pod) -> bool:
        """filterPodsWithPDBViolation (default_preemption.go): same namespace, and a
        non-empty selector matching the pod's (non-empty) labels."""
        selector = self.selector
        if pod.namespace != self.namespace or not pod.labels:
            return False
        return not selector.empty and selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class HostPort:
    """One container port bound on the node (NodePorts): what two pods on one node
    may not both ask for. ``ip`` "0.0.0.0" (the default) conflicts with every IP."""

    ip: str
    protocol: str
    port: int

    def conflicts(self, other: HostPort) -> bool:
        """upstream ``HostPortInfo.CheckConflict`` (pkg/scheduler/framework/types.go)."""
        if self.port != other.port or self.protocol != other.protocol:
            return False
        return BIND_ALL_HOST_IP in (self.ip, other.ip) or self.ip == other.ip


BIND_ALL_HOST_IP = "0.0.0.0"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


@dataclass(frozen=True, slots=True)
class PodScheduled:
    """The pod's ``PodScheduled`` condition: what the real kube-scheduler said
    (``topology.podstatus``). ``since``: its lastTransitionTime, epoch seconds
    (0: not given); ``nominated_node``: ``status.nominatedNodeName`` (preemption)."""

    status: bool
    reason: str = ""
    message: str = ""
    since: float = 0.0
    nominated_node: str | None = None

    @property
    def unschedulable(self) -> bool:
        return not self.status and self.reason == "Unschedulable"


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    requests: Resources = field(default_factory=lambda: Resources(pods=1))
    gpu: GpuRequest | None = None
    claims: tuple[DeviceClaim, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: tuple[NodeSelectorTerm, ...] = ()  # ORed; empty = no required affinity
    tolerations: tuple[Toleration, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    priority: int = 0
    arrival: float = 0.0  # creation order (seconds); ties broken by name
    node_name: str | None = None  # bound: its requests are already used on that node
    gang: str | None = None  # "namespace/name" of its Gang
    required_topology: str | None = None  # level label key (Kueue podset-required-topology)
    preferred_topology: str | None = None
    unsupported: tuple[str, ...] = ()  # reasons this pod uses something we do not model
    queue: str | None = None  # quota queue reference (see topology.quotas), None: no queue
    synthesized_by: str | None = None  # "Kind/ns/name" of the controller that will create it
    # required podAffinity / podAntiAffinity / DoNotSchedule topologySpreadConstraints
    pod_terms: PodPlacementTerms = NO_POD_TERMS
    # what only scores (preferred terms, ScheduleAnyway): not modelled, said so
    score_only: tuple[str, ...] = ()
    # spec.schedulingGates: while any is set kube-scheduler never tries the pod (PreEnqueue)
    scheduling_gates: tuple[str, ...] = ()
    # the ProvisioningRequest the pod consumes, as (name, provisioningClassName) from
    # autoscaling.x-k8s.io/consume-provisioning-request and .../provisioning-class-name
    # ("" when the class annotation is missing); None: it consumes none
    provisioning_request: tuple[str, str] | None = None
    # why kube-scheduler refuses the pod before looking at any node (PreFilter), in its words
    rejected: tuple[str, ...] = ()
    # host ports of its containers and restartable init containers (NodePorts)
    host_ports: tuple[HostPort, ...] = ()
    # spec.preemptionPolicy: "Never" pods never preempt others (DefaultPreemption)
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    # status.startTime (seconds), None when not started: the older of two equal-priority
    # victims is the more important one (DefaultPreemption)
    started: float | None = None
    # what the real scheduler said (status.conditions PodScheduled), None: no such condition
    scheduled: PodScheduled | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def gpu_count(self) -> int:
        return self.gpu.count if self.gpu else 0


@dataclass(frozen=True, slots=True)
class Gang:
    """All-or-nothing group (PodGroup minMember, Kueue pod group, Workload gang)."""

    namespace: str
    name: str
    min_member: int
    required_topology: str | None = None
    preferred_topology: str | None = None
    priority: int = 0
    queue: str | None = None  # quota queue reference of the whole group (see topology.quotas)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# --- what can be bought, what is paid for --------------------------------------


@dataclass(frozen=True, slots=True)
class NodePlacement:
    """Where new nodes of a group can land (topology labels) and how many."""

    labels: Mapping[str, str]
    max_new_nodes: int


@dataclass(frozen=True, slots=True)
class AutoscalerRef:
    """The real object that grows a group: what a recommendation must change.

    ``kind``: ``cluster-autoscaler`` (a CA node group, ``name`` as CA reports it),
    ``karpenter`` (``name``: the NodePool), or a managed pool — ``gke``, ``eks``,
    ``aks`` (``name``: the node pool / node group / agent pool).
    ``pool_kind``/``pool``: the managed pool behind a CA group, when known.
    """

    kind: str
    name: str
    pool_kind: str | None = None
    pool: str | None = None
    target_size: int | None = None  # CA cloudProviderTarget
    weight: int | None = None  # a Karpenter NodePool's spec.weight (higher is tried first)


@dataclass(frozen=True, slots=True)
class NodeGroup:
    name: str
    node_selector: Mapping[str, str]
    min_size: int
    max_size: int
    price_per_node_hour: float
    template: Node  # labels/taints/allocatable/devices of a new node
    placements: tuple[NodePlacement, ...] = ()
    provisioning_delay_seconds: float = 0.0
    current_size: int = 0  # existing members (nodes matching node_selector)
    # where the group was found ("cluster-autoscaler status ConfigMap + GKE node pool
    # label", "Karpenter NodePool gpu", "capacityweb.io NodeGroup"); None: not recorded
    source: str | None = None
    autoscaler: AutoscalerRef | None = None  # what grows it; None for a project-only group
    price_source: str | None = None  # where price_per_node_hour comes from; None: unknown
    notes: tuple[str, ...] = ()  # what the model does not cover about this group
    # the cloud provider's template for an EMPTY group carries its DRA devices
    # (cluster-autoscaler docs/dra_support.md: DRA scale-from-0 only where the provider
    # implements it); False: the autoscaler's template from zero has no DRA devices
    dra_scale_from_zero: bool = True


@dataclass(frozen=True, slots=True)
class ReservedNodeGroupCapacity:
    node_group: str
    count: int


@dataclass(frozen=True, slots=True)
class Reservation:
    name: str
    owner_namespaces: tuple[str, ...]
    node_names: tuple[str, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_group: ReservedNodeGroupCapacity | None = None
    start: datetime | None = None
    end: datetime | None = None
    price_per_gpu_hour: float = 0.0
    source: str | None = None  # e.g. "aws ec2 describe-capacity-reservations"; None: project kind

    def active_at(self, at: datetime) -> bool:
        return (self.start is None or self.start <= at) and (self.end is None or at < self.end)

    def may_use(self, namespace: str) -> bool:
        return namespace in self.owner_namespaces


# --- queues and quotas (Kueue, Volcano, KAI) ---------------------------------------


@dataclass(frozen=True, slots=True)
class QuotaQueue:
    """A queue that admits work against a quota before the scheduler sees it.

    ``name`` is the reference pods and gangs carry in ``queue`` (e.g.
    ``ClusterQueue/cq``, ``VolcanoQueue/q``, ``KaiQueue/q``); amounts are in the
    pod's base units (cpu milli, memory bytes, whole GPUs / extended units).
    ``limit`` is what may be admitted in total without borrowing (Kueue
    nominalQuota, Volcano capability, KAI limit); ``borrowing_limit`` None means
    unbounded borrowing from the cohort (Kueue), 0 none.
    """

    name: str
    limit: Mapping[str, int]
    cohort: str | None = None
    borrowing_limit: Mapping[str, int] | None = None
    local_queues: tuple[str, ...] = ()  # "namespace/name" of the LocalQueues pointing here
    hides_pending_pods: bool = False  # Kueue: a job is suspended (pods gated) until admitted


# --- what the model leaves out --------------------------------------------------------


SCORE_ONLY = "not modelled (score only)"


@dataclass(frozen=True, slots=True)
class UnsupportedField:
    """A field read from an object that changes scheduling but is not modelled.

    ``blocking``: the object's workload is reported blocked "unsupported: …"
    rather than guessed at; otherwise (a score-only preference, say) it is only
    listed, as placement may differ from kube-scheduler's but feasibility not.
    """

    object: str  # Kind/namespace/name
    field: str  # dotted path
    reason: str
    blocking: bool = True

    def to_json(self) -> dict[str, str]:
        return {"object": self.object, "field": self.field, "reason": self.reason}


# --- the whole --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cluster:
    """One snapshot's model. ``pods`` holds bound (running) and pending pods."""

    name: str
    topology: Topology = field(default_factory=Topology.default)
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    gangs: tuple[Gang, ...] = ()
    device_classes: tuple[DeviceClass, ...] = ()
    node_groups: tuple[NodeGroup, ...] = ()
    reservations: tuple[Reservation, ...] = ()
    queues: tuple[QuotaQueue, ...] = ()
    topology_source: str = "default"  # which object defined the levels ("Kind/name" or default)
    # Namespace objects read: name → labels (namespaceSelector of inter-pod terms)
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # read but not modelled: object kinds ("Kind (apiVersion)" → count) and fields
    ignored: Mapping[str, int] = field(default_factory=dict)
    unsupported: tuple[UnsupportedField, ...] = ()
    # PodDisruptionBudgets: which running pods preemption should spare (topology.disruption)
    disruption_budgets: tuple[DisruptionBudget, ...] = ()

    @property
    def gpu_count(self) -> int:
        return sum(node.gpu_count for node in self.nodes)

    def pending_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.node_name is None)

    def bound_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.node_name is not None)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a parse produced: the model plus every object it had to reject."""

    cluster: Cluster
    errors: tuple[ModelError, ...] = ()
    ignored: Mapping[str, int] = field(default_factory=dict)  # kinds not modelled → count
    read: Mapping[str, int] = field(default_factory=dict)  # "Kind (apiVersion)" modelled → count
    notes: tuple[str, ...] = ()  # what was read but not (fully) modelled, one line each
    # read but only partly modelled (a node group without a template, a Karpenter
    # weight): shown to the user, never an input error
    notices: tuple[ModelError, ...] = ()
