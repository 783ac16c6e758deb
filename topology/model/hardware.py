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

Devices live in ``topology.model.devices`` and the scheduling terms (taints,
selectors, affinity, spread) in ``topology.model.terms``; this module re-exports
them, so every reader imports the model from here.

Pure: no Django, no I/O, no clock. Mappings inside the frozen objects are
never mutated after construction; treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

# re-exported: ``from topology.model.hardware import X`` stays the one way in to the model
from topology.model.autoscalerstate import (
    AutoscalerEvent as AutoscalerEvent,
    ProvisioningRequest as ProvisioningRequest,
    RequestCondition as RequestCondition,
    RequestPodSet as RequestPodSet,
)
from topology.model.devices import (
    GPU_RESOURCE as GPU_RESOURCE,
    AllocatedDevice as AllocatedDevice,
    AttributeSelector as AttributeSelector,
    ClaimAllocation as ClaimAllocation,
    CounterConsumption as CounterConsumption,
    CounterSet as CounterSet,
    Device as Device,
    DeviceClaim as DeviceClaim,
    DeviceClass as DeviceClass,
    DeviceRequest as DeviceRequest,
    Gpu as Gpu,
    MatchAttribute as MatchAttribute,
)
from topology.model.podstate import (
    PREEMPT_LOWER_PRIORITY as PREEMPT_LOWER_PRIORITY,
    DisruptionBudget as DisruptionBudget,
    PodScheduled as PodScheduled,
)
from topology.model.queues import QuotaQueue as QuotaQueue
from topology.model.terms import (
    BIND_ALL_HOST_IP as BIND_ALL_HOST_IP,
    NO_POD_TERMS as NO_POD_TERMS,
    NO_PREFERRED as NO_PREFERRED,
    HostPort as HostPort,
    LabelRequirement as LabelRequirement,
    NodeSelectorTerm as NodeSelectorTerm,
    PodAffinityTerm as PodAffinityTerm,
    PodPlacementTerms as PodPlacementTerms,
    PodSelector as PodSelector,
    PreferredTerms as PreferredTerms,
    SpreadConstraint as SpreadConstraint,
    Taint as Taint,
    Toleration as Toleration,
    WeightedNodeTerm as WeightedNodeTerm,
    WeightedPodTerm as WeightedPodTerm,
)

# time-slicing/MPS replicas under the device plugin's renameByDefault: a separate
# extended resource, drawn as GPU units too (see topology.kube.dra.slices.plugin_gpus)
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


# --- capacity -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resources:
    """Countable resources in base units. ``extended`` excludes nvidia.com/gpu,
    which is modelled as devices (see Node.devices / Pod.gpu)."""

    cpu_milli: int = 0
    memory_bytes: int = 0
    pods: int = 0
    extended: Mapping[str, int] = field(default_factory=dict)


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
    # "<driver>/<pool>" of its DRA pools whose newest generation lacks slices
    # (fewer than spec.pool.resourceSliceCount): no request takes their devices, and
    # "All" requests fail on it
    incomplete_pools: tuple[str, ...] = ()
    # status.nodeInfo.kubeletVersion as written ("v1.36.2"; "" not given): the newest
    # says which kube-scheduler release the cluster runs at least
    # (``recommender.engine.scheduler.profiles.scheduler_release``)
    kubelet_version: str = ""

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
    # a fraction-aware scheduler places the share (KAI's gpu-fraction,
    # topology.kube.kai): any device plugin's whole GPU can hold it, not only
    # shareable devices
    shares_whole_gpus: bool = False

    @property
    def total_milli(self) -> int:
        return self.count * self.milli_per_gpu

    @property
    def is_share(self) -> bool:
        return self.milli_per_gpu < WHOLE_GPU_MILLI


@dataclass(frozen=True, slots=True)
class FlavorOption:
    """A Kueue ResourceFlavor a pending pod set may be admitted on, and the pod's
    nodeSelector and tolerations if it is (``topology.kube.kueue.flavors``)."""

    name: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()


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
    # the group its application needs all at once (a LeaderWorkerSet group, a training
    # job) when nothing enforces all-or-nothing (no gang scheduler, no Kueue): kube-scheduler
    # binds its pods one by one, so it is no Gang; "namespace/name", None: no such group
    app_group: str | None = None
    required_topology: str | None = None  # level label key (Kueue podset-required-topology)
    preferred_topology: str | None = None
    unsupported: tuple[str, ...] = ()  # reasons this pod uses something we do not model
    queue: str | None = (
        None  # quota queue reference (see topology.kube.kueue.quotas), None: no queue
    )
    synthesized_by: str | None = None  # "Kind/ns/name" of the controller that will create it
    # required podAffinity / podAntiAffinity / DoNotSchedule topologySpreadConstraints
    pod_terms: PodPlacementTerms = NO_POD_TERMS
    # spec.schedulingGates: while any is set kube-scheduler never tries the pod (PreEnqueue)
    scheduling_gates: tuple[str, ...] = ()
    # the ProvisioningRequest the pod consumes, as (name, provisioningClassName) from
    # autoscaling.x-k8s.io/consume-provisioning-request and .../provisioning-class-name
    # ("" when the class annotation is missing); None: it consumes none
    provisioning_request: tuple[str, str] | None = None
    # cluster-autoscaler.kubernetes.io/pod-scale-up-delay as given (a Go duration): how
    # long cluster-autoscaler waits before scaling up for the pod; None: not set
    scale_up_delay: str | None = None
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
    # why every fresh node of its group runs one too (cluster-autoscaler
    # podsExpectedOnFreshNode): "DaemonSet/<ns>/<name>" of its controller, or the key of
    # the annotation that says so (cluster-autoscaler.kubernetes.io/daemonset-pod "true",
    # a static pod's mirror kubernetes.io/config.mirror); None: any other pod, or one
    # being deleted (topology.kube.core.daemons)
    node_daemon: str | None = None
    # metadata.deletionTimestamp is set: the pod is being deleted (topology.kube.core.podowner)
    terminating: bool = False
    # why kube-scheduler never schedules this pending pod (another scheduler's, or being
    # deleted), in words; None: it is ours to place (topology.kube.core.podowner)
    not_ours: str | None = None
    # the Kueue ResourceFlavor whose quota the pod uses (topology.kube.kueue.flavors)
    quota_flavor: str | None = None
    # the flavors, in the ClusterQueue's order, its pod set fits (quota_flavor first):
    # Kueue tries the next when one's quota is used (flavorFungibility)
    flavor_options: tuple[FlavorOption, ...] = ()
    # preferred node/pod (anti-)affinity terms and ScheduleAnyway spread: they only score
    preferred: PreferredTerms = NO_PREFERRED
    # what cluster-autoscaler's drain rules read (recommender.engine.moves.drainability):
    # "Kind/<ns>/<name>" of the controller owner reference (metadata.ownerReferences with
    # controller: true); None: a bare pod, which nothing recreates once evicted
    controller: str | None = None
    # cluster-autoscaler.kubernetes.io/safe-to-evict: True for "true", False for "false",
    # None when unset or any other value (utils/drain HasSafeToEvictAnnotation)
    safe_to_evict: bool | None = None
    # names of its hostPath and disk-backed emptyDir volumes (utils/drain isLocalVolume)
    # less those cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes lists
    blocking_local_volumes: tuple[str, ...] = ()
    # the object whose pod template its replacement is made from, when that is not
    # ``controller``: "Deployment/<ns>/<name>" owning its ReplicaSet, or the ReplicaSet
    # itself read without one; None for other pods, and when its ReplicaSet was not
    # read (topology.kube.workloads.with_template_owners)
    template_owner: str | None = None
    # a Job's pod: "CronJob/<ns>/<name>" that created its Job (the Job's controller
    # owner reference), whose spec.jobTemplate the next runs are made from; None when
    # its Job has none or was not read (topology.kube.workloads.with_template_owners)
    cron_job: str | None = None

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
    queue: str | None = (
        None  # quota queue reference of the whole group (see topology.kube.kueue.quotas)
    )
    # Kueue partial admission: the fewest pods Kueue may admit when all do not fit the
    # quota (a Job's kueue.x-k8s.io/job-min-parallelism, the PodSet's minCount); None:
    # all or none
    min_count: int | None = None
    # Volcano: the PodGroup's spec.minResources while it waits in phase Pending for the
    # enqueue action (topology.kube.kueue.quotas.VolcanoEnqueue); None: none, or Inqueue already
    min_resources: Mapping[str, int] | None = None
    # Volcano Job: its controller creates the pods only once the PodGroup is Inqueue
    pods_on_enqueue: bool = False

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
class PoolLimit:
    """One resource of a Karpenter NodePool's ``spec.limits`` (kubernetes-sigs/karpenter
    ``pkg/apis/v1/nodepool.go`` ``Limits``): the limit, what the pool's nodes leave of it,
    and what one node of the group counts against it. Exact fractions as text
    (``str(Fraction)``) so a stored snapshot keeps them."""

    resource: str
    limit: str
    left: str
    per_node: str


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
    # a Karpenter NodePool's spec.limits, one entry per resource; () when it sets none
    # (no limit: nothing to raise, Karpenter launches for the pending pods by itself)
    limits: tuple[PoolLimit, ...] = ()


@dataclass(frozen=True, slots=True)
class DaemonPod:
    """What one DaemonSet would run on a new node: its requests and where it goes
    (``topology.kube.core.daemons``). ``name``: the DaemonSet, ``DaemonSet/<ns>/<name>``."""

    name: str
    requests: Resources
    gpu_count: int
    node_selector: Mapping[str, str]
    affinity: tuple[NodeSelectorTerm, ...]
    tolerations: tuple[Toleration, ...]


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
    # False: no price is known for the group (not in the price table, none given): the
    # plans count it as 0, and every page says "price unknown", never 0/h
    price_known: bool = True
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

    def holds(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """The node is one of its named nodes, or its labels match its nodeSelector."""
        if node_name in self.node_names:
            return True
        return bool(self.node_selector) and all(
            labels.get(k) == v for k, v in self.node_selector.items()
        )


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
    # Kueue Cohort objects read, as QuotaQueues named "Cohort/<name>" whose ``cohort`` is
    # their parent (hierarchical cohorts, topology.kube.kueue.quotas._CohortTree)
    cohorts: tuple[QuotaQueue, ...] = ()
    topology_source: str = "default"  # which object defined the levels ("Kind/name" or default)
    # Namespace objects read: name → labels (namespaceSelector of inter-pod terms)
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # read but not modelled: object kinds ("Kind (apiVersion)" → count) and fields
    ignored: Mapping[str, int] = field(default_factory=dict)
    unsupported: tuple[UnsupportedField, ...] = ()
    # PodDisruptionBudgets: which running pods preemption spares (topology.kube.core.disruption)
    disruption_budgets: tuple[DisruptionBudget, ...] = ()
    # DaemonSets read: what each runs on every node it selects (templates of new nodes)
    daemon_pods: tuple[DaemonPod, ...] = ()
    # every ResourceClaim with status.allocation: its devices are taken once
    allocated_claims: tuple[DeviceClaim, ...] = ()
    # autoscaling.x-k8s.io ProvisioningRequests read (topology.kube.autoscaler.provreq)
    provisioning_requests: tuple[ProvisioningRequest, ...] = ()
    # core/v1 PodTemplates as pods, by "namespace/name": what a request's podSets name
    pod_templates: Mapping[str, Pod] = field(default_factory=dict)
    # what the autoscalers reported, newest first (topology.kube.autoscaler.events)
    autoscaler_events: tuple[AutoscalerEvent, ...] = ()

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
