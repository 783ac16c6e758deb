"""Whose pod it is to schedule: ``spec.schedulerName`` and ``metadata.deletionTimestamp``.

Pure: no Django, no I/O. Read by ``topology.kube.core.pods`` for every Pod.

- kube-scheduler only takes pods whose ``spec.schedulerName`` names one of its
  profiles (upstream ``pkg/scheduler/scheduler.go`` ``frameworkForPod`` and
  ``pkg/scheduler/eventhandlers.go`` ``responsibleForPod``); the API server
  defaults an empty name to ``default-scheduler`` (``pkg/apis/core/v1/defaults.go``).
  A pending pod of another scheduler is "not ours": the evaluation lists it as
  such and never says it runs. Volcano's and KAI's pods are the exception: the
  model reads their gangs (``topology.kube.core.controllers``) and places them by
  kube-scheduler's rules, which is said on each such pod (not blocking).
- A pod with ``metadata.deletionTimestamp`` is being deleted: a pending one will
  never run (kube-scheduler's ``skipPodSchedule`` skips it), and a bound one is
  left out of PodTopologySpread counting (``podtopologyspread/common.go``
  ``countPodsMatchSelector``: "Bypass terminating Pod"). Inter-pod affinity still
  counts it (``interpodaffinity`` has no such check), and it still holds its node's
  resources until it is gone.
"""

from __future__ import annotations

from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.hardware import UnsupportedField

DEFAULT_SCHEDULER = "default-scheduler"
# gang schedulers whose pods the model reads (topology.kube.core.controllers) and places by
# kube-scheduler's rules: said on the pod, not refused
APPROXIMATED_SCHEDULERS = ("volcano", "kai-scheduler")
# a controller's pods under one of these are one gang: Volcano's and KAI's controllers
# (the training operator's --gang-scheduler-name, LWS's gang scheduler provider, KAI's
# podgrouper) make a PodGroup of them; under kube-scheduler they are separate pods
GANG_SCHEDULERS = APPROXIMATED_SCHEDULERS


def scheduler_name(ctx: ObjectContext, spec: dict[str, Any]) -> str:
    """``spec.schedulerName`` as the API server defaults it."""
    return ctx.text(spec.get("schedulerName"), "spec.schedulerName") or DEFAULT_SCHEDULER


def terminating(meta: dict[str, Any]) -> bool:
    return bool(meta.get("deletionTimestamp"))


def not_ours(
    ctx: ObjectContext, meta: dict[str, Any], spec: dict[str, Any], *, bound: bool
) -> str | None:
    """Why kube-scheduler never places this pending pod, or None (ours, or bound)."""
    if bound:
        return None
    if terminating(meta):
        return "terminating: metadata.deletionTimestamp is set, the pod is being deleted"
    name = scheduler_name(ctx, spec)
    if name == DEFAULT_SCHEDULER or name in APPROXIMATED_SCHEDULERS:
        return None
    return f"other scheduler's pod, not ours: spec.schedulerName is {name}"


def approximated(ctx: ObjectContext, spec: dict[str, Any]) -> list[UnsupportedField]:
    """A Volcano or KAI pod: placed by kube-scheduler's rules, said on the pod."""
    name = scheduler_name(ctx, spec)
    if name not in APPROXIMATED_SCHEDULERS:
        return []
    reason = f"scheduled by {name}: placed by kube-scheduler's rules (its own plugins not modelled)"
    return [UnsupportedField(ctx.object, "spec.schedulerName", reason, blocking=False)]
