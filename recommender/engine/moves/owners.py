"""A reconciliation's owner patches: what sends an evicted pod's replacement to the
reservation instead of wherever the scheduler puts it.

A controller recreates an evicted pod from its pod template, so the template must
select the reservation's nodes first (the cordon only keeps the replacement off the
node being emptied). The fields are ``reservation_pods.pod_template_fields`` (the one
function a reservation card's owner fields come from too): the reservation's
``nodeSelector``; a reservation of named nodes, or two reservations, need a required
node affinity instead (``nodeSelectorTerms`` are ORed; ``matchFields`` on
``metadata.name``, one name per term, is the one field a node selector term may
match). No toleration is added: ``reconcile`` binds each replacement with the pod's own
tolerations.

Per owner (``Pod.template_owner``, else ``Pod.controller``), as upstream treats a
change to its template:

- Deployment (owning the pods' ReplicaSet): patch it; the change rolls out a new
  ReplicaSet that replaces every pod of the Deployment (``pkg/controller/deployment``
  ``rolloutRolling``). Its pods are not evicted: the old ReplicaSet would recreate an
  evicted one from the old template. Undo: ``kubectl rollout undo``.
- StatefulSet: patch it, then evict; a recreated pod takes the update revision under
  both strategies (``pkg/controller/statefulset/stateful_set_utils.go``
  ``newVersionedStatefulSetPod``); RollingUpdate also replaces the others. Undo:
  ``kubectl rollout undo``.
- ReplicaSet with no Deployment, ReplicationController: patch it, then evict (the
  template is read only for new pods). Undo: the patch with the fields set to null.
- Job: its template is immutable once it started (``pkg/apis/batch/validation``
  ``ValidateJobSpecUpdate``; only a suspended Job that never started may change its
  scheduling directives): not patched, not evicted (its replacement would land as
  before, and the pod's work is lost); the fields go into the manifest of its next run.
  Its pod keeps the node: ``reconcile`` refuses the node. A Job a CronJob made
  (``Pod.cron_job``; ``pkg/controller/cronjob/utils.go`` ``getJobFromTemplate2`` copies
  ``spec.jobTemplate.spec`` into each run's Job): the strategic merge patch of the
  CronJob's ``spec.jobTemplate.spec.template.spec`` that sends its next runs to the
  reservation (``next_runs_command``), and its undo (the keys set to null).
- A ReplicaSet not read (its owner unknown), any other controller: not patched, not
  evicted; said why.

A bare pod has no owner and is never moved (``drainability``: rule ``bare``).

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recommender.engine.autoscaler.reservation_pods import pod_template_fields
from topology.model.hardware import Cluster, Pod, Reservation

ROLLOUT = "rollout"  # the patch replaces the pods itself: wait for it
EVICT = "evict"  # the patch changes new pods only: evict the node's pods
INSTEAD = "instead"  # the template cannot (or need not) be patched: said what to do
PATCHED_KINDS = {
    "Deployment": ("deployment", ROLLOUT),
    "StatefulSet": ("statefulset", EVICT),
    "ReplicaSet": ("replicaset", EVICT),
    "ReplicationController": ("replicationcontroller", EVICT),
}
NAME_FIELD = "metadata.name"


@dataclass(frozen=True, slots=True)
class OwnerStep:
    """One owner of a reconciliation's moved pods and what to do with it."""

    owner: str  # "Kind/<ns>/<name>"
    pods: tuple[str, ...]  # the moved pods it recreates ("ns/name")
    how: str  # ROLLOUT, EVICT or INSTEAD
    fields: dict[str, Any]  # the pod-template fields that target the reservation
    note: str = ""  # why INSTEAD, and what the user does instead
    # its other running pods (not on the emptied node): a Deployment's rollout (a
    # StatefulSet's under RollingUpdate) replaces them too; ``reconcile`` verifies that
    # they fit in the reservations (``Reconciliation.rolled``)
    others: int = 0
    # INSTEAD: why its pods stay where they are, in a few words (no fields: it is shown
    # to teams that may not see the reservation)
    kept: str = ""
    # a Job's: "CronJob/<ns>/<name>" whose jobTemplate makes its next runs ("": none read)
    next_runs: str = ""

    @property
    def kind(self) -> str:
        return self.owner.split("/", 1)[0]

    @property
    def resource(self) -> str:
        """kubectl's name of the owner's resource ("deployment"), "" when not patched."""
        kind = self.owner.split("/", 1)[0]
        return PATCHED_KINDS[kind][0] if self.how != INSTEAD else ""

    @property
    def namespace(self) -> str:
        return self.owner.split("/")[1]

    @property
    def name(self) -> str:
        return self.owner.split("/", 2)[2]

    def patch(self) -> dict[str, Any]:
        return {"spec": {"template": {"spec": self.fields}}}

    def undo(self) -> dict[str, Any] | None:
        """The strategic merge patch that removes the fields again (null deletes a
        key); None for a kind ``kubectl rollout undo`` reverts."""
        if self.owner.startswith(("Deployment/", "StatefulSet/")):
            return None
        return {"spec": {"template": {"spec": self._removed()}}}

    def next_runs_patch(self) -> dict[str, Any]:
        """The CronJob's patch: the fields in the pod template of its jobTemplate."""
        return {"spec": {"jobTemplate": {"spec": {"template": {"spec": self.fields}}}}}

    def next_runs_undo(self) -> dict[str, Any]:
        return {"spec": {"jobTemplate": {"spec": {"template": {"spec": self._removed()}}}}}

    def _removed(self) -> dict[str, Any]:
        """The fields set to null (a strategic merge patch's null deletes the key)."""
        spec: dict[str, Any] = {}
        if "nodeSelector" in self.fields:
            spec["nodeSelector"] = {k: None for k in self.fields["nodeSelector"]}
        if "affinity" in self.fields:
            required = {"requiredDuringSchedulingIgnoredDuringExecution": None}
            spec["affinity"] = {"nodeAffinity": required}
        return spec


def owner_steps(
    cluster: Cluster, pods: Sequence[Pod], reservations: Sequence[Reservation]
) -> tuple[OwnerStep, ...]:
    """Each owner of ``pods`` (in name order) with the fields that send its pods to
    ``reservations`` (the active ones their teams may use)."""
    by_owner: dict[str, list[Pod]] = {}
    for pod in pods:
        owner = pod.template_owner or pod.controller
        assert owner is not None, f"{pod.key}: a bare pod is never moved"
        by_owner.setdefault(owner, []).append(pod)
    return tuple(_step(cluster, owner, by_owner[owner], reservations) for owner in sorted(by_owner))


def _step(
    cluster: Cluster, owner: str, pods: list[Pod], reservations: Sequence[Reservation]
) -> OwnerStep:
    keys = tuple(sorted(p.key for p in pods))
    usable = [r for r in reservations if all(r.may_use(p.namespace) for p in pods)]
    fields, why = _fields(cluster, pods, usable)
    kind = owner.split("/", 1)[0]
    kept = why
    next_runs = ""
    if not why and kind == "Job":
        kept, why = JOB_KEPT, _job_note(owner)
        next_runs = pods[0].cron_job or ""  # one Job: one CronJob
    elif not why and kind == "ReplicaSet" and pods[0].template_owner is None:
        why = (
            f"{owner} was not read: whether a Deployment owns it (then the Deployment's "
            "template is the one to patch) is not known; read the ReplicaSets too"
        )
    elif not why and kind not in PATCHED_KINDS:
        why = (
            f"{kind} is not a template kubectl patches here: add the fields to the pod "
            "template it creates its pods from, then evict them"
        )
    if why:
        body = json.dumps({"spec": {"template": {"spec": fields}}}, sort_keys=True)
        note = f"{why}: {body}" if fields else why
        return OwnerStep(owner, keys, INSTEAD, fields, note, kept=kept or why, next_runs=next_runs)
    others = sum(
        1
        for p in cluster.bound_pods()
        if (p.template_owner or p.controller) == owner and p.key not in keys
    )
    return OwnerStep(owner, keys, PATCHED_KINDS[kind][1], fields, others=others)


def _fields(
    cluster: Cluster, pods: list[Pod], reservations: list[Reservation]
) -> tuple[dict[str, Any], str]:
    """The template fields, and why they cannot be given as a patch ("" when they can)."""
    if not reservations:
        return {}, "no active reservation all of its moved pods' teams may use"
    reserved = [n for n in cluster.nodes if any(r.holds(n.name, n.labels) for r in reservations)]
    taints = [t for n in reserved for t in n.taints]
    if len(reservations) == 1 and reservations[0].node_selector:
        # the keys every pod selects already are left as they are (the undo keeps them)
        selector = {
            k: v
            for k, v in reservations[0].node_selector.items()
            if any(p.node_selector.get(k) != v for p in pods)
        }
        fields = pod_template_fields(selector, taints, pods)
    else:
        fields = pod_template_fields({}, taints, pods)
        if any(p.affinity for p in pods):
            return fields | {"affinity": _affinity(reservations)}, (
                "its pod template has a required node affinity already: add these terms' "
                "requirements to each of its nodeSelectorTerms (a patch would replace them)"
            )
        fields |= {"affinity": _affinity(reservations)}
    if "tolerations" in fields:  # reconcile binds no pod that lacks one: never here
        return fields, "its pods lack tolerations of the reserved nodes' taints"
    return fields, ""


def _affinity(reservations: list[Reservation]) -> dict[str, Any]:
    """Node selector terms (ORed): one per reservation of labels, one per named node
    (``pkg/apis/core/validation`` ``validateNodeFieldSelectorRequirement``: a
    ``matchFields`` requirement on ``metadata.name`` takes exactly one value)."""
    terms = []
    for reservation in reservations:
        if reservation.node_selector:
            expressions = [
                {"key": k, "operator": "In", "values": [v]}
                for k, v in sorted(reservation.node_selector.items())
            ]
            terms.append({"matchExpressions": expressions})
        else:  # a node field selector takes one value (validateNodeFieldSelectorRequirement)
            terms += [
                {"matchFields": [{"key": NAME_FIELD, "operator": "In", "values": [name]}]}
                for name in sorted(reservation.node_names)
            ]
    required = {"nodeSelectorTerms": terms}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


JOB_KEPT = (
    "a Job's pod is never moved (its pod template cannot change once it started, and "
    "a pod evicted loses the work it has done)"
)


def _job_note(owner: str) -> str:
    return (
        f"{owner}: a Job's pod template cannot change once it started (batch/v1), and an "
        "evicted pod comes back from the same template, wherever the scheduler puts it: "
        "not evicted. Add the fields to the manifest its next run is created from (or "
        "to its CronJob's jobTemplate); to move this run now, delete the Job and create "
        "it again with them (the work since it started is lost)"
    )


# --- kubectl ---------------------------------------------------------------------------------


def patch_command(step: OwnerStep) -> str:
    body = json.dumps(step.patch(), sort_keys=True)
    return (
        f"kubectl patch {step.resource} {step.name} -n {step.namespace} "
        f"--type=strategic -p '{body}'"
    )


def rollout_command(step: OwnerStep) -> str:
    return f"kubectl rollout status {step.resource}/{step.name} -n {step.namespace} --timeout=15m"


def next_runs_command(step: OwnerStep, undo: bool = False) -> str:
    """``kubectl patch cronjob`` (a strategic merge patch: batch/v1 CronJob is a
    built-in type) of the CronJob that makes the step's Job: its next runs land in the
    reservation; ``undo``: the fields removed again."""
    assert step.next_runs, step.owner
    _, namespace, name = step.next_runs.split("/", 2)
    body = json.dumps(step.next_runs_undo() if undo else step.next_runs_patch(), sort_keys=True)
    return f"kubectl patch cronjob {name} -n {namespace} --type=strategic -p '{body}'"


def undo_command(step: OwnerStep) -> str:
    undo = step.undo()
    if undo is None:
        return f"kubectl rollout undo {step.resource}/{step.name} -n {step.namespace}"
    body = json.dumps(undo, sort_keys=True)
    return (
        f"kubectl patch {step.resource} {step.name} -n {step.namespace} "
        f"--type=strategic -p '{body}'"
    )
