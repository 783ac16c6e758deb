"""What would change a blocked workload's answer: the smallest relaxations, each verified.

For a workload the joint plan blocks, candidate edits (``edits.Edit``) are tried and
a relaxation is kept only if the engine's verdict changes with it::

    blocked workload ──► alone on the snapshot still blocked? ──no──► "order": the
         │                                                           workloads planned
         │ yes                                                       before it take it
         ▼
    reservation R      (each active one its namespace does not own)
    topology           (each outer level, then none: the first that helps)
    sharing on G       (only for pods asking a fraction of a GPU)
    raise-max G by N   (each group whose template takes its pods: the least N, by
                        bisection between 1 and the nodes it could need; the least one)
    gpu-model M        (each other model a group offers or with its GPUs free)
    priority P         (the least priority above running pods' that lets it evict them)
         │
         ▼  apply the edit to a copy of the model, plan the workload again (the same
            ``scale_up`` joint plan, alone on the snapshot's state) ──► kept if not blocked

"Alone" means the other pending workloads are not planned first: the check costs
one single-workload plan, not the whole evaluation, and the "order" relaxation says
when the others are what blocks it. The work is bounded by counts (no clock):
``MAX_WORKLOADS`` blocked workloads and ``MAX_TRIES`` plans each; a workload past
either bound gets a relaxation of kind "not-searched", never a silent short list.
Lone pods alike but for their name (``alike``) are searched once: planned alone on
the same snapshot, they get the same answers (unless the words name the pod).

This is a deferred part of the evaluation (``evaluation.relaxation_part``): no verdict
waits for it.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from typing import Any

from recommender.engine.autoscaler.options import OptionSearch
from recommender.engine.autoscaler.plan import BLOCKED, JOINT, WorkloadPlan, workload_gpu_milli
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.evaluate import edits
from recommender.engine.evaluate.edits import Edit
from recommender.engine.scheduler.caches import only_pending_differ
from recommender.engine.scheduler.demand import GpuDemandFloor
from recommender.engine.scheduler.preemption import forget_shared, may_preempt
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import Workload, pending_workloads
from topology.model.hardware import WHOLE_GPU_MILLI, Cluster, NodeGroup
from topology.model.money import DEFAULT_CURRENCY

MAX_WORKLOADS = 20
MAX_TRIES = 40
ORDER = "order"
NOT_SEARCHED = "not-searched"


@dataclass(frozen=True, slots=True)
class Relaxation:
    kind: str
    edit: Edit | None
    text: str
    verdict: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "edit": self.edit.to_json() if self.edit else None,
            "text": self.text,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
        }


class Verifier:
    """Plans one workload alone on a (possibly edited) copy of the snapshot."""

    def __init__(
        self,
        cluster: Cluster,
        state: ClusterState,
        at: datetime,
        policy: str,
        pending: Sequence[Workload] = (),
        currency: str = DEFAULT_CURRENCY,
        floor: Callable[[], GpuDemandFloor] | None = None,
    ) -> None:
        self.cluster, self.state, self.at, self.policy = cluster, state, at, policy
        self.currency = currency  # the plans' reasons' money
        self.tries = 0
        self.pending = {w.key: w for w in pending}  # the unedited workloads, when known
        self._options: OptionSearch | None = None
        # the unedited cluster's GPU demand floor (made once, shared by the verifiers)
        self._floor = floor or cache(lambda: GpuDemandFloor(cluster))

    def plan(self, workload_key: str, edit: Edit | None = None) -> WorkloadPlan | None:
        """The joint plan's answer for the workload with ``edit`` made (None: it is not
        pending in the edited model)."""
        self.tries += 1
        cluster = self.cluster if edit is None else edits.apply(self.cluster, workload_key, edit)
        state = ClusterState.from_cluster(cluster) if edit and edit.changes_nodes else self.state
        workload = self.pending.get(workload_key) if edit is None or not edit.changes_pods else None
        workload = workload or self._pending(cluster, workload_key)
        if workload is None:
            return None
        plan = scale_up(
            cluster,
            [workload],
            state=state,
            mode=JOINT,
            at=self.at,
            policy=self.policy,
            currency=self.currency,
        )
        return plan.outcomes[workload_key]

    def _pending(self, cluster: Cluster, key: str) -> Workload | None:
        """The workload ``key`` of the edited ``cluster``; the GPU demand floor (read
        from the nodes, node groups and device classes) made once for the edits that
        keep those (``only_pending_differ``: the priority edit's plans)."""
        floor = self._floor() if only_pending_differ(self.cluster, cluster) else None
        return next((w for w in pending_workloads(cluster, floor) if w.key == key), None)

    def hosts(self, group: NodeGroup, workload: Workload) -> bool:
        """Whether the group's template node takes every pod of the workload (a larger
        group that cannot host it never helps)."""
        if self._options is None:
            self._options = OptionSearch(self.cluster, self.state.copy(), self.at, self.policy)
        return self._options.compatible(group, workload) is None


def relaxations(
    cluster: Cluster,
    state: ClusterState,
    pending: Sequence[Workload],
    blocked: Iterable[str],
    *,
    at: datetime,
    policy: str,
    currency: str = DEFAULT_CURRENCY,
) -> dict[str, tuple[Relaxation, ...]]:
    """Per blocked workload key, the relaxations that unblock it (see the module).

    Alike workloads (``alike``: lone pods the same but for their name) are searched
    once: each is planned alone on the same snapshot, so their answers are the same,
    and one is taken for another only when its words do not name the pod searched."""
    by_key = {w.key: w for w in pending}
    found: dict[str, tuple[Relaxation, ...]] = {}
    searched: dict[str, tuple[Relaxation, ...]] = {}
    floor = cache(lambda: GpuDemandFloor(cluster))
    for index, key in enumerate(blocked):
        if index >= MAX_WORKLOADS:
            text = f"not searched: only the first {MAX_WORKLOADS} blocked workloads are"
            found[key] = (Relaxation(NOT_SEARCHED, None, text, BLOCKED, ()),)
            continue
        workload = by_key[key]
        signature = alike(workload)
        if signature is not None and signature in searched:
            found[key] = searched[signature]
            continue
        verifier = Verifier(cluster, state, at, policy, pending, currency, floor)
        found[key] = tuple(_for_workload(verifier, workload))
        if signature is not None and not _names_itself(found[key], workload):
            searched[signature] = found[key]
    forget_shared(state)  # what the plans shared on the snapshot's node records
    return found


def alike(workload: Workload) -> str | None:
    """What a lone pod's relaxations depend on: the pod but its name (requests,
    namespace, labels, selectors, priority, ...), and the workload's own fields but its
    key, as its ``repr`` (pods hold mappings: no hash); None for a gang (its members'
    names reach its reasons)."""
    if workload.kind != "pod" or len(workload.pods) != 1:
        return None
    return repr(replace(workload, key="", pods=(replace(workload.pods[0], name=""),)))


def _names_itself(found: Iterable[Relaxation], workload: Workload) -> bool:
    """Whether any relaxation's words name the workload (then they are its own)."""
    names = {workload.key, *(p.name for p in workload.pods)}
    words = [w for r in found for w in (r.text, *r.reasons)]
    return any(name in word for name in names for word in words)


def _for_workload(verifier: Verifier, workload: Workload) -> list[Relaxation]:
    alone = verifier.plan(workload.key)
    if alone is not None and alone.verdict != BLOCKED:
        text = (
            "alone on the snapshot it is not blocked: the workloads planned before it "
            "take what it needs (a higher priority puts it first)"
        )
        return [Relaxation(ORDER, None, text, alone.verdict, alone.reasons)]
    found = []
    for search in (_reservations, _topology, _sharing, _raise_max, _gpu_models, _priority):
        relaxation = search(verifier, workload)
        if relaxation is not None:
            found.append(relaxation)
    if verifier.tries >= MAX_TRIES:  # some candidates were never tried: said, not hidden
        text = f"not all changes tried: the search stops after {MAX_TRIES} plans"
        found.append(Relaxation(NOT_SEARCHED, None, text, BLOCKED, ()))
    return found


def _first_helping(
    verifier: Verifier, workload: Workload, candidates: Iterable[Edit]
) -> Relaxation | None:
    for edit in candidates:
        if verifier.tries >= MAX_TRIES:
            return None
        relaxation = _verified(verifier, workload, edit)
        if relaxation is not None:
            return relaxation
    return None


def _verified(verifier: Verifier, workload: Workload, edit: Edit) -> Relaxation | None:
    plan = verifier.plan(workload.key, edit)
    if plan is None or plan.verdict == BLOCKED:
        return None
    text = edit.text(verifier.cluster, workload.key)
    return Relaxation(edit.kind, edit, text, plan.verdict, plan.reasons)


def _reservations(verifier: Verifier, workload: Workload) -> Relaxation | None:
    cluster = verifier.cluster
    others = sorted(
        r.name
        for r in cluster.reservations
        if r.active_at(verifier.at) and not r.may_use(workload.namespace)
    )
    return _first_helping(verifier, workload, (Edit(edits.RESERVATION, n) for n in others))


def _raise_max(verifier: Verifier, workload: Workload) -> Relaxation | None:
    """The least raise of one group's max size that unblocks it (bisection: a larger
    group never hosts less), over the groups in name order."""
    best: Relaxation | None = None
    for group in sorted(verifier.cluster.node_groups, key=lambda g: g.name):
        if verifier.tries >= MAX_TRIES:
            break
        if not verifier.hosts(group, workload):
            continue
        # a group already past its max (members the autoscaler did not add) needs that
        # much before any raise makes room
        past_max = max(0, group.current_size - group.max_size)
        high = past_max + _most_nodes(workload, group.template.gpu_count)
        found = _verified(verifier, workload, Edit(edits.RAISE_MAX, group.name, high))
        if found is None:
            continue
        low = past_max + 1
        while low < high and verifier.tries < MAX_TRIES:
            middle = (low + high) // 2
            attempt = _verified(verifier, workload, Edit(edits.RAISE_MAX, group.name, middle))
            if attempt is None:
                low = middle + 1
            else:
                high, found = middle, attempt
        if best is None or (found.edit and best.edit and found.edit.amount < best.edit.amount):
            best = found
    return best


def _most_nodes(workload: Workload, gpus_per_node: int) -> int:
    """Nodes the workload could need at most: one per pod, or its GPUs over a node's."""
    milli = sum(p.gpu.total_milli for p in workload.pods if p.gpu is not None)
    by_gpus = -(-milli // (max(1, gpus_per_node) * WHOLE_GPU_MILLI))
    return max(1, len(workload.pods), by_gpus)


def _topology(verifier: Verifier, workload: Workload) -> Relaxation | None:
    """The innermost outer level that helps, else none at all."""
    required = workload.required_topology
    if required is None:
        return None
    levels = verifier.cluster.topology.levels
    index = next((i for i, level in enumerate(levels) if level.key == required), None)
    outer = [levels[i].key for i in range((index or 0) - 1, -1, -1)] if index else []
    candidates = (Edit(edits.TOPOLOGY, key) for key in [*outer, ""])
    return _first_helping(verifier, workload, candidates)


def _sharing(verifier: Verifier, workload: Workload) -> Relaxation | None:
    if not any(p.gpu is not None and p.gpu.is_share for p in workload.pods):
        return None
    groups = sorted(
        g.name
        for g in verifier.cluster.node_groups
        if any(d.gpu is not None and not d.shareable for d in g.template.devices)
    )
    return _first_helping(verifier, workload, (Edit(edits.SHARING, g, 1) for g in groups))


def _gpu_models(verifier: Verifier, workload: Workload) -> Relaxation | None:
    if not any(p.gpu is not None and p.gpu.models for p in workload.pods):
        return None
    candidates = (Edit(edits.GPU_MODEL, m) for m in sorted(_models_with_room(verifier, workload)))
    return _first_helping(verifier, workload, candidates)


def _models_with_room(verifier: Verifier, workload: Workload) -> set[str]:
    """Models a group's new nodes carry, or with at least the workload's GPUs free
    (whole GPUs nothing holds) on existing nodes; the ones it asks for left out."""
    asked = {m for p in workload.pods if p.gpu is not None for m in p.gpu.models}
    cluster, state = verifier.cluster, verifier.state
    models = {g.model for group in cluster.node_groups for g in group.template.gpus if g.model}
    free: dict[str, int] = {}
    for node in cluster.nodes:
        for cell in state.gpu_cells(node.name):
            if cell.model and cell.allocated_milli == 0:
                free[cell.model] = free.get(cell.model, 0) + 1
    needed = -(-workload_gpu_milli(workload) // WHOLE_GPU_MILLI)
    models |= {model for model, count in free.items() if count >= needed}
    return models - asked


def _priority(verifier: Verifier, workload: Workload) -> Relaxation | None:
    """The least priority, one above a running pod's, with which it runs by preemption."""
    if not all(may_preempt(p) for p in workload.pods):
        return None
    above = sorted(
        {p.priority for p in verifier.cluster.bound_pods() if p.priority >= workload.priority}
    )
    candidates = (Edit(edits.PRIORITY, "", value + 1) for value in above)
    return _first_helping(verifier, workload, candidates)


@dataclass(frozen=True, slots=True)
class EditAnswer:
    """One edit's effect on one workload: its joint plan before and after
    (``edit_answer.answer_edit``: in the whole evaluation, as the page's verdict)."""

    workload: str
    edit: Edit
    text: str
    before: WorkloadPlan
    after: WorkloadPlan

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "edit": self.edit.to_json(),
            "text": self.text,
            "before": _plan_json(self.before),
            "after": _plan_json(self.after),
            "changed": _plan_json(self.before) != _plan_json(self.after),
        }


def _plan_json(plan: WorkloadPlan) -> dict[str, Any]:
    return {
        "verdict": plan.verdict,
        "addNodes": dict(sorted(plan.add_nodes.items())),
        "reservations": sorted(plan.reservations),
        "reasons": list(plan.reasons),
    }
