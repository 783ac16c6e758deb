"""The deferred parts of an evaluation (issue #41): stored after the critical pass, each
by a task of its own, each pushed to open pages when done.

::

    tasks.evaluate_snapshot ─► services.store_critical_pass: verdicts, reasons, plans,
        │   recommendations, totals, heatmap; ``missing`` = the engine's DEFERRED;
        │   the CriticalPass kept in this process (``keep``)
        └─► evaluation_stored ─► receivers.work_out_parts_later
              └─► on commit, per part: tasks.work_out_part(id, stored_at, part)
                    ├─ the evaluation re-stored meanwhile ─► discarded (the new write's
                    │   own tasks answer it); a newer snapshot's evaluation ─► not worked
                    │   out, ``parts_failed`` says why
                    └─ store_part: the critical pass (kept, else run again on the snapshot)
                       ─► the engine's part ─► ``combined`` ─► its own keys into ``result``
                       (and the verdict rows' reasons or relaxations), under the row's lock,
                       only if the evaluation is still as it was read ─► events.publish_part

The engine's parts cannot take a subset of the workloads (``relaxation_part`` works out
every blocked workload, its alike ones once), so a part is one task: the bound is the
evaluation's soft time limit, past which the part is recorded as not worked out and why.

What a part owns of the evaluate() JSON (``PART_KEYS``): ``relaxations`` the workloads'
``relaxations``, ``score-ties`` the workloads' ``reasons`` (a tie adds a line), ``what-if``
``whatIf``, ``naive-range`` ``naiveRange`` (cluster-autoscaler's other outcomes),
``fragmentation`` ``fragmentation``. With every part in, ``result`` is what
``services.store_evaluation`` stores for the snapshot (evaluate() whole), byte for byte;
until then it carries ``missing`` (sorted part names).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import transaction

from recommender import services
from recommender.engine.evaluate.evaluation import (
    DEFERRED,
    FRAGMENTATION,
    NAIVE_RANGE,
    RELAXATIONS,
    SCORE_TIES,
    WHAT_IF,
    CriticalPass,
    Evaluation as EngineEvaluation,
    combined,
    critical_pass,
    fragmentation_part,
    naive_range_part,
    relaxation_part,
    score_tie_part,
    what_if_part,
)
from recommender.models import Evaluation, WorkloadVerdict

BEING_WORKED_OUT = "being worked out"
PARTS = DEFERRED
# what each part fills in: top-level keys, and keys of each workload entry
PART_KEYS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    FRAGMENTATION: (("fragmentation",), ()),
    SCORE_TIES: ((), ("reasons",)),
    WHAT_IF: (("whatIf",), ()),
    NAIVE_RANGE: (("naiveRange",), ()),
    RELAXATIONS: ((), ("relaxations",)),
}
# the verdict rows' column each workload key is copied to
ROW_COLUMNS = {"reasons": "reasons", "relaxations": "relaxations"}

# the last critical pass this process stored, for the part tasks that follow it on the
# same worker: (evaluation id, stored_at) → CriticalPass. One entry: it holds the cluster
# and the scheduler state (hundreds of MB at 10,000 nodes), dropped when every part is in.
_kept: dict[tuple[int, datetime], CriticalPass] = {}
_kept_lock = threading.Lock()


class Replaced(Exception):
    """The evaluation was re-stored while the part was worked out: the part is dropped."""


def keep(evaluation: Evaluation, critical: CriticalPass) -> None:
    with _kept_lock:
        _kept.clear()
        _kept[(evaluation.pk, evaluation.stored_at)] = critical


def _forget(evaluation: Evaluation) -> None:
    with _kept_lock:
        _kept.pop((evaluation.pk, evaluation.stored_at), None)


def critical_of(evaluation: Evaluation) -> CriticalPass:
    """The critical pass of the evaluation as stored: the one this process kept, else the
    critical pass run again on its snapshot (deterministic: the same answer), refused when
    it no longer gives the stored verdicts (the cluster's profiles changed since)."""
    with _kept_lock:
        kept = _kept.get((evaluation.pk, evaluation.stored_at))
    if kept is not None:
        return kept
    model, arguments = services.engine_inputs(evaluation.snapshot)
    critical = critical_pass(model, at=evaluation.snapshot.taken_at, **arguments)
    if _verdicts(critical.evaluation.to_json()) != _verdicts(evaluation.result or {}):
        raise ValueError("the cluster's profiles or flags changed since it was evaluated")
    return critical


def _verdicts(result: Mapping[str, Any]) -> list[Any]:
    workloads = [(w.get("name"), w.get("verdict")) for w in result.get("workloads") or []]
    profiles = [result.get(k) for k in ("schedulerProfile", "autoscalerProfile", "autoscalerFlags")]
    return [*profiles, workloads]


def worked_out(critical: CriticalPass, part: str) -> EngineEvaluation:
    """The critical pass combined with ``part`` alone."""
    if part == FRAGMENTATION:
        return combined(critical, fragmentation=fragmentation_part(critical))
    if part == SCORE_TIES:
        return combined(critical, score_ties=score_tie_part(critical))
    if part == WHAT_IF:
        return combined(critical, what_if=what_if_part(critical))
    if part == NAIVE_RANGE:
        return combined(critical, naive_range=naive_range_part(critical))
    if part == RELAXATIONS:
        return combined(critical, relaxations=relaxation_part(critical))
    raise ValueError(f"unknown deferred part {part!r}; known: {', '.join(PARTS)}")


def store_part(*, evaluation: Evaluation, part: str) -> Evaluation:
    """Work ``part`` out and store it into the evaluation as read; Replaced when it was
    re-stored meanwhile."""
    read_at = evaluation.stored_at
    found = worked_out(critical_of(evaluation), part).to_json()
    with transaction.atomic():
        row = _locked(evaluation, read_at)
        result = dict(row.result or {})
        changed = merge(result, found, part)
        _mark(row, result, part, failed=None)
        _update_verdicts(row, changed)
    _forget_when_settled(row)
    return row


def fail_part(*, evaluation: Evaluation, part: str, reason: str) -> Evaluation:
    """Record that ``part`` was not worked out for the evaluation as read, and why."""
    with transaction.atomic():
        row = _locked(evaluation, evaluation.stored_at)
        _mark(row, dict(row.result or {}), part, failed=reason[:2000])
    _forget_when_settled(row)
    return row


def _forget_when_settled(row: Evaluation) -> None:
    """Drop the kept critical pass once no part of it is left to work out."""
    if set(row.missing or ()) <= set(row.parts_failed or {}):
        _forget(row)


def _locked(evaluation: Evaluation, read_at: datetime) -> Evaluation:
    row = Evaluation.objects.select_for_update().filter(pk=evaluation.pk).first()
    if row is None or row.stored_at != read_at:
        raise Replaced(f"evaluation {evaluation.pk} was re-stored")
    return row


def _mark(row: Evaluation, result: dict[str, Any], part: str, *, failed: str | None) -> None:
    """``part`` stored (``failed`` None: out of ``missing``) or not worked out (it stays
    in ``missing``, ``parts_failed`` says why)."""
    missing = sorted(set(row.missing or ()) - ({part} if failed is None else set()))
    if missing:
        result["missing"] = missing
    else:
        result.pop("missing", None)
    row.result, row.missing = result, missing
    columns = ["result", "missing"]
    if failed is not None:
        row.parts_failed = {**(row.parts_failed or {}), part: failed}
        columns.append("parts_failed")
    if part == WHAT_IF:
        row.what_if_extra_gpus = services.overview_figures(result)["what_if_extra_gpus"]
        columns.append("what_if_extra_gpus")
    row.save(update_fields=columns)


def merge(result: dict[str, Any], found: Mapping[str, Any], part: str) -> dict[str, dict[str, Any]]:
    """Copy ``part``'s keys from ``found`` (the critical pass combined with it) into
    ``result``; the workload entries that changed: "kind name" → their new keys."""
    top, per_workload = PART_KEYS[part]
    for key in top:
        result[key] = found.get(key)
    if not per_workload:
        return {}
    by_name = {_name(w): w for w in found.get("workloads") or []}
    changed: dict[str, dict[str, Any]] = {}
    workloads = []
    for item in result.get("workloads") or []:
        new = by_name.get(_name(item), {})
        values = {key: new.get(key, item.get(key)) for key in per_workload}
        if any(values[key] != item.get(key) for key in per_workload):
            changed[_name(item)] = values
            item = {**item, **values}
        workloads.append(item)
    result["workloads"] = workloads
    return changed


def _name(item: Mapping[str, Any]) -> str:
    return f"{item.get('kind') or 'pod'} {item.get('name')}"


def _update_verdicts(evaluation: Evaluation, changed: Mapping[str, Mapping[str, Any]]) -> None:
    if not changed:
        return
    names = {key.split(" ", 1)[1] for key in changed}
    rows = list(WorkloadVerdict.objects.filter(evaluation=evaluation, workload__in=names))
    columns: set[str] = set()
    for row in rows:
        values = changed.get(f"{row.kind} {row.workload}")
        for key, value in (values or {}).items():
            setattr(row, ROW_COLUMNS[key], list(value or []))
            columns.add(ROW_COLUMNS[key])
    if columns:
        WorkloadVerdict.objects.bulk_update(rows, sorted(columns), batch_size=1000)


def state_of(evaluation: Evaluation | None, part: str) -> str | None:
    """How a page speaks of ``part`` of the evaluation: None when it is there, else
    "being worked out" or why it was not worked out."""
    if evaluation is None or part not in (evaluation.missing or ()):
        return None
    failed = (evaluation.parts_failed or {}).get(part)
    return f"not worked out: {failed}" if failed else BEING_WORKED_OUT
