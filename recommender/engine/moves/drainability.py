"""May a running pod be moved? cluster-autoscaler's drain rules, then the move's own.

cluster-autoscaler decides whether a node can be drained pod by pod with the rules of
``simulator/drainability/rules/rules.go`` ``Default``, in this order, the first rule
with an outcome deciding (``Rules.Drainable``); a pod no rule decides is drainable::

    mirror          skip        a static pod's mirror: the kubelet runs it
    longterminating drainable   being deleted long enough (here: any terminating pod
                                is skipped, see ``terminating``)
    daemonset       drainable   (CA: deleted with its node; a move keeps the node, and
                                the DaemonSet recreates the pod right there: skipped)
    safetoevict     drainable   safe-to-evict "true"
    replicated      blocked     no controller (or, by default, a custom one)
    system          blocked     kube-system without a PodDisruptionBudget
    notsafetoevict  blocked     safe-to-evict "false"
    localstorage    blocked     hostPath / disk emptyDir not listed as safe
    pdb             blocked     a budget with no disruption left

``customcontroller`` runs only with ``--skip-nodes-with-custom-controller-pods=false``
and then checks the controller exists and its replicas against
``--min-replica-count``: a snapshot holds neither listers nor replica counts, so
with that setting any controller counts as replicated (``replicated``'s own check).
``terminal`` never applies: the parser drops Succeeded and Failed pods.

A move then needs more than a drain (``move_rules``): something must recreate the
pod (safe-to-evict "true" lets cluster-autoscaler delete a bare pod; a move never
does), the pod is at or below a priority (by default the blocked workload's), and it
is no member of a running gang (moving one member breaks the gang's all-or-nothing).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from topology.kube.core.disruption import disruptions_allowed
from topology.model.hardware import Cluster, DisruptionBudget, Pod

DRAINABLE = "drainable"
BLOCKED = "blocked"
SKIP = "skip"  # left where it is: neither moved nor in the way of a drain

KUBE_SYSTEM = "kube-system"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"  # Pod.node_daemon of a mirror pod
# replicated/rule.go replicatedKind: the kinds replicated by default
# (--skip-nodes-with-custom-controller-pods=true)
REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})


@dataclass(frozen=True, slots=True)
class DrainSettings:
    """cluster-autoscaler's drain flags (its defaults) and the move's own settings.

    ``max_priority``: move only pods at or below it; None: at or below the priority
    of the workload the move is for (no pod is disrupted for less important work)."""

    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    max_priority: int | None = None


@dataclass(frozen=True, slots=True)
class DrainStatus:
    """A rule's outcome for one pod, named by the rule, with the reason in words."""

    outcome: str
    rule: str
    reason: str = ""

    @property
    def movable(self) -> bool:
        return self.outcome == DRAINABLE


@dataclass
class DrainContext:
    """What the rules read besides the pod: the settings, and each budget's
    disruptions allowed (``disruptions_allowed``: its status, else its spec over the
    running pods), the ``RemainingPdbTracker`` of upstream."""

    settings: DrainSettings
    budgets: tuple[DisruptionBudget, ...] = ()
    allowed: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, cluster: Cluster, settings: DrainSettings) -> DrainContext:
        budgets = cluster.disruption_budgets
        allowed = {b.key: disruptions_allowed(b, cluster.pods) for b in budgets}
        return cls(settings, budgets, allowed)

    def matching(self, pod: Pod) -> list[DisruptionBudget]:
        return [b for b in self.budgets if b.selects(pod)]


Rule = Callable[[Pod, DrainContext], DrainStatus | None]


def mirror(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/mirror/rule.go``: a mirror pod (``IsMirrorPod``) is skipped."""
    if pod.node_daemon == MIRROR_ANNOTATION:
        return DrainStatus(SKIP, "mirror", "a static pod's mirror: the kubelet runs it there")
    return None


def terminating(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/longterminating/rule.go`` makes a pod deleted for longer than its grace
    period plus 30 s drainable (as if gone). The snapshot says only that a pod is being
    deleted, not since when; either way it is leaving by itself: nothing to move."""
    if pod.terminating:
        return DrainStatus(SKIP, "longterminating", "being deleted: its room frees by itself")
    return None


def daemonset(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/daemonset/rule.go``: a DaemonSet pod (``IsDaemonSetPod``: controller kind
    DaemonSet, or the daemonset-pod annotation "true") is drainable for a node that goes
    away; a move keeps the node and the DaemonSet recreates the pod on it: skipped."""
    if pod.node_daemon is not None and pod.node_daemon != MIRROR_ANNOTATION:
        return DrainStatus(SKIP, "daemonset", f"runs on every node ({pod.node_daemon})")
    return None


def safe_to_evict(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/safetoevict/rule.go``: safe-to-evict "true" is drainable, before any
    blocking rule (``utils/drain`` ``HasSafeToEvictAnnotation``)."""
    if pod.safe_to_evict is True:
        return DrainStatus(DRAINABLE, "safetoevict", "annotated safe to evict")
    return None


def replicated(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/replicated/rule.go``: a pod without a controller blocks (NotReplicated);
    with ``--skip-nodes-with-custom-controller-pods`` (the default) so does one whose
    controller's kind is not in ``replicatedKind``."""
    if pod.controller is None:
        return DrainStatus(BLOCKED, "replicated", "not replicated: no controller recreates it")
    kind = pod.controller.split("/", 1)[0]
    if ctx.settings.skip_nodes_with_custom_controller_pods and kind not in REPLICATED_KINDS:
        reason = (
            f"not replicated: controller kind {kind} is not one cluster-autoscaler "
            "trusts (--skip-nodes-with-custom-controller-pods=true)"
        )
        return DrainStatus(BLOCKED, "replicated", reason)
    return None


def system(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/system/rule.go``: with ``--skip-nodes-with-system-pods`` (the default), a
    kube-system pod no PodDisruptionBudget selects blocks (UnmovableKubeSystemPod)."""
    if not ctx.settings.skip_nodes_with_system_pods or pod.namespace != KUBE_SYSTEM:
        return None
    if ctx.matching(pod):
        return None
    return DrainStatus(BLOCKED, "system", "kube-system pod without a PodDisruptionBudget")


def not_safe_to_evict(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/notsafetoevict/rule.go``: safe-to-evict "false" blocks."""
    if pod.safe_to_evict is False:
        return DrainStatus(BLOCKED, "notsafetoevict", "annotated not safe to evict")
    return None


def local_storage(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/localstorage/rule.go``: with ``--skip-nodes-with-local-storage`` (the
    default), local volumes not listed as safe block (``HasBlockingLocalStorage``)."""
    if ctx.settings.skip_nodes_with_local_storage and pod.blocking_local_volumes:
        names = ", ".join(pod.blocking_local_volumes)
        return DrainStatus(BLOCKED, "localstorage", f"local storage would be lost: {names}")
    return None


def disruption_budget(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """``rules/pdb/rule.go``: a budget selecting the pod with fewer than one disruption
    left blocks (NotEnoughPdb). Several pods of one budget: ``budgets_block``."""
    for budget in ctx.matching(pod):
        if ctx.allowed.get(budget.key, 0) < 1:
            reason = f"PodDisruptionBudget {budget.key} allows no disruption"
            return DrainStatus(BLOCKED, "pdb", reason)
    return None


# rules.go Default, in its order (customcontroller and terminal: see the module docstring)
DRAIN_RULES: tuple[Rule, ...] = (
    mirror,
    terminating,
    daemonset,
    safe_to_evict,
    replicated,
    system,
    not_safe_to_evict,
    local_storage,
    disruption_budget,
)


def drain_status(pod: Pod, ctx: DrainContext) -> DrainStatus:
    """``Rules.Drainable``: the first rule with an outcome, else drainable."""
    for rule in DRAIN_RULES:
        status = rule(pod, ctx)
        if status is not None:
            return status
    return DrainStatus(DRAINABLE, "", "")


def recreated(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """A move, unlike a drain, must not lose the pod: a bare pod (safe-to-evict "true"
    makes it drainable for cluster-autoscaler) is deleted by an eviction, never moved."""
    if pod.controller is None:
        return DrainStatus(BLOCKED, "bare", "bare pod: an eviction deletes it, none is recreated")
    return None


def gang_member(pod: Pod, ctx: DrainContext) -> DrainStatus | None:
    """A member of a running gang moves only with the whole gang, which is not searched:
    one member evicted stops the gang's work (all or nothing)."""
    if pod.gang is not None:
        return DrainStatus(BLOCKED, "gang", f"member of running gang {pod.gang}")
    return None


def movable(pod: Pod, ctx: DrainContext, priority_cap: int | None) -> DrainStatus:
    """``drain_status``, then the move's own rules and the priority cap (``settings.
    max_priority``, else ``priority_cap``: the priority of the work moved for)."""
    status = drain_status(pod, ctx)
    if status.outcome != DRAINABLE:
        return status
    for rule in (recreated, gang_member):
        found = rule(pod, ctx)
        if found is not None:
            return found
    cap = ctx.settings.max_priority if ctx.settings.max_priority is not None else priority_cap
    if cap is not None and pod.priority > cap:
        return DrainStatus(BLOCKED, "priority", f"priority {pod.priority} above {cap}")
    return status


def sequential_budgets(pods: Iterable[Pod], ctx: DrainContext) -> tuple[str, ...]:
    """The budgets that let the pods go only one after another: ``CanRemovePods``
    (``core/scaledown/pdb/basic.go``) removes pods of a budget with fewer disruptions
    allowed than pods selected, but not in parallel (each pod already passed the
    ``pdb`` rule, so the budget allows at least one). The Eviction API then refuses an
    eviction until the replacement before it is healthy."""
    counts: Counter[str] = Counter()
    for pod in pods:
        for budget in ctx.matching(pod):
            counts[budget.key] += 1
    return tuple(key for key, count in sorted(counts.items()) if ctx.allowed.get(key, 0) < count)


def blocked_counts(statuses: Sequence[DrainStatus]) -> dict[str, int]:
    """How many pods each rule kept in place (the rule name, or the outcome skip)."""
    counts = Counter(s.rule for s in statuses if s.outcome != DRAINABLE)
    return dict(sorted(counts.items()))
