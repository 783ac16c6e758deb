"""Move instead of buy, as a deferred answer: worked out by a worker after the evaluation
is stored, kept as one ``MoveReport`` row per evaluation, read by the pages, the API,
``/metrics`` and the digest.

::

    store_evaluation ─► evaluation_stored ─► receivers.find_moves_later
        │   (same transaction: the evaluation's earlier MoveReport, if any, deleted)
        └─► on commit: tasks.find_moves(evaluation id)
              └─► store_moves: the snapshot's model, the stored verdicts (``StoredEvaluation``)
                  ─► engine ``moves_for`` (its thread's CPU time measured)
                  ─► MoveReport row, only if the evaluation is still as it was read

A page asks ``moves_of(evaluation)``: None while the worker has not stored it ("being
worked out"), never another evaluation's report: the row belongs to one evaluation and
to one write of it (``evaluation_stored_at``).

Per team (namespace), the $/h moving would save: a plan recommended over buying saves
its workload's namespace the buy plan's $/h; a reconciliation saves the emptied node's
price, shared among the namespaces of the pods moved by their GPUs (by their number of
pods when none holds a GPU).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from capacityweb import visibility
from recommender import selectors
from recommender.engine.autoscaler.caflags import CaFlags, parse_flags
from recommender.engine.moves.report import MOVE, moves_for
from recommender.models import Evaluation, MoveReport
from topology.adapters import cluster_from_snapshot

BEING_WORKED_OUT = "being worked out"
# what another team reads instead of a reconciliation's commands into a reservation it
# may not see (the patches select its nodes)
WITHHELD = "the commands select another team's reservation: shown to that team"
# one row per plan and per reconciliation in the CSV, under these columns
CSV_COLUMNS = (
    "cluster",
    "evaluation",
    "kind",
    "workload",
    "namespace",
    "gpus",
    "recommend",
    "pods_moved",
    "gpus_disrupted",
    "gpu_hours_at_risk",
    "buy_add_nodes",
    "buy_per_hour",
    "buy_startup_seconds",
    "avoided_per_hour",
    "saved_per_hour",
    "node",
    "reservations",
    "moves",
    "owner_patches",
    "note",
)
# what each column holds, for the API's description (OpenAPI) and docs/MOVES.md
CSV_COLUMN_NOTES = {
    "moves": "pod:from>to, one per moved pod (;-separated)",
    "owner_patches": (
        "reconcile rows: what the reconciliation patches, one per owner (;-separated), "
        "Kind/namespace/name=the pod-template spec fields set as JSON, e.g. Deployment/"
        'team-a/web={"nodeSelector":{"pool":"reserved"}}; (withheld) for another team\'s '
        "reservation; empty on unblock rows (their pods are evicted, no owner is patched)"
    ),
}


# --- the stored evaluation as the engine reads it ----------------------------------------


@dataclass(frozen=True)
class StoredPlan:
    verdict: str
    add_nodes: Mapping[str, int]
    cost_per_hour: float


@dataclass(frozen=True)
class StoredWorkload:
    key: str
    joint: StoredPlan


@dataclass(frozen=True)
class StoredEvaluation:
    """What ``moves_for`` reads of an evaluation (``report.EvaluationView``), from the
    stored result: no second scheduler and autoscaler pass in the worker."""

    at: datetime
    scheduler_profile: str
    workloads: tuple[StoredWorkload, ...]
    # the cluster-autoscaler command line it ran with (``autoscalerFlags.args``, parsed
    # as the evaluation parsed it); None when its profile reads none
    autoscaler_flags: CaFlags | None = None

    @classmethod
    def of(cls, evaluation: Evaluation) -> StoredEvaluation:
        result = evaluation.result or {}
        workloads = tuple(
            StoredWorkload(
                key=str(item["name"]),
                joint=StoredPlan(
                    verdict=str(item.get("verdict")),
                    add_nodes=dict((item.get("joint") or {}).get("addNodes") or {}),
                    cost_per_hour=float(item.get("jointCostPerHour") or 0.0),
                ),
            )
            for item in result.get("workloads") or []
        )
        profile = str(result.get("schedulerProfile") or "default")
        stored_flags = result.get("autoscalerFlags")
        flags = (
            parse_flags([str(a) for a in stored_flags.get("args") or []])
            if isinstance(stored_flags, dict)
            else None
        )
        return cls(
            at=evaluation.taken_at,
            scheduler_profile=profile,
            workloads=workloads,
            autoscaler_flags=flags,
        )


# --- writes ------------------------------------------------------------------------------


def store_moves(*, evaluation: Evaluation) -> MoveReport | None:
    """Work out and store the evaluation's move report; None when the evaluation was
    re-stored meanwhile (that write's own task answers it)."""
    read_at = evaluation.stored_at
    model = cluster_from_snapshot(evaluation.snapshot)
    started = time.thread_time()
    report = moves_for(model, StoredEvaluation.of(evaluation))
    cpu_seconds = time.thread_time() - started
    data = report.to_json()
    figures = report_figures(data)
    return _keep(evaluation, read_at, data=data, cpu_seconds=round(cpu_seconds, 3), **figures)


def fail_moves(*, evaluation: Evaluation, reason: str) -> MoveReport | None:
    """Record that the search failed for the evaluation as stored, and why."""
    return _keep(evaluation, evaluation.stored_at, data=None, error=reason[:2000])


def _keep(
    evaluation: Evaluation, read_at: datetime, *, data: Any, **columns: Any
) -> MoveReport | None:
    with transaction.atomic():
        stored_at = (
            Evaluation.objects.select_for_update()
            .filter(pk=evaluation.pk)
            .values_list("stored_at", flat=True)
            .first()
        )
        if stored_at != read_at:
            return None
        row, _created = MoveReport.objects.update_or_create(
            evaluation=evaluation,
            defaults={
                "cluster_id": evaluation.cluster_id,
                "evaluation_stored_at": read_at,
                "stored_at": timezone.now(),
                "result": data,
                **columns,
            },
        )
    return row


def forget_moves(*, evaluation: Evaluation) -> None:
    """Drop the evaluation's report (it is being re-stored: the report answered the old
    write)."""
    MoveReport.objects.filter(evaluation=evaluation).delete()


def report_figures(data: Mapping[str, Any]) -> dict[str, Any]:
    """The columns copied out of a report's JSON."""
    plans = data.get("plans") or []
    recommended = [p for p in plans if p.get("move") and p.get("recommend") == MOVE]
    return {
        "workloads_searched": len(plans),
        "workloads_unblocked": sum(1 for p in plans if p.get("move")),
        "avoided_per_hour": round(sum(float(p["buy"]["costPerHour"]) for p in recommended), 2),
        "saved_per_hour": float(data.get("reconciliationSavedPerHour") or 0.0),
        "team_savings": team_savings(data),
    }


def team_savings(data: Mapping[str, Any]) -> dict[str, float]:
    """Namespace → $/h moving would save it (the module docstring says how it is shared)."""
    saved: dict[str, float] = {}
    for plan in data.get("plans") or []:
        if plan.get("move") and plan.get("recommend") == MOVE:
            namespace = str(plan["workload"]).split("/", 1)[0]
            saved[namespace] = saved.get(namespace, 0.0) + float(plan["buy"]["costPerHour"])
    for found in data.get("reconciliations") or []:
        moves = found.get("moves") or []
        weights = [float(m.get("gpus") or 0) for m in moves]
        if not any(weights):
            weights = [1.0] * len(moves)
        total = sum(weights) or 1.0
        for move, weight in zip(moves, weights, strict=True):
            namespace = str(move["pod"]).split("/", 1)[0]
            share = float(found.get("savedPerHour") or 0.0) * weight / total
            saved[namespace] = saved.get(namespace, 0.0) + share
    return {namespace: round(amount, 2) for namespace, amount in sorted(saved.items())}


# --- reads -------------------------------------------------------------------------------


def moves_of(evaluation: Evaluation | None) -> MoveReport | None:
    """The evaluation's report as stored for its current write; None: being worked out."""
    if evaluation is None:
        return None
    return MoveReport.objects.filter(
        evaluation_id=evaluation.pk, evaluation_stored_at=evaluation.stored_at
    ).first()


def latest_moves(cluster_ids: Sequence[int]) -> dict[int, MoveReport | None]:
    """Cluster id → the report of its latest evaluation (None: being worked out, or no
    evaluation); two queries."""
    latest = selectors.latest_evaluation_columns(cluster_ids)
    reports = {
        row.evaluation_id: row
        for row in MoveReport.objects.filter(evaluation_id__in=[e.pk for e in latest.values()])
    }
    shown: dict[int, MoveReport | None] = {}
    for cluster_id in cluster_ids:
        evaluation = latest.get(cluster_id)
        row = reports.get(evaluation.pk) if evaluation is not None else None
        current = row is not None and row.evaluation_stored_at == evaluation.stored_at
        shown[cluster_id] = row if current else None
    return shown


def shown_result(row: MoveReport, labels: visibility.ReservationLabels) -> dict[str, Any]:
    """The report's JSON as the viewer may read it: other teams' reservations relabelled."""
    data = dict(row.result or {})
    data["reconciliations"] = [
        _shown_reconciliation(found, labels) for found in data.get("reconciliations") or []
    ]
    data["reconciliationRefusals"] = [
        _shown_refusal(refusal, labels) for refusal in data.get("reconciliationRefusals") or []
    ]
    return data


def _shown_refusal(refusal: dict[str, Any], labels: visibility.ReservationLabels) -> dict[str, Any]:
    """Relabelled; the CronJob patches for the next runs withheld when they select
    another team's reservation."""
    names = refusal.get("reservations") or []
    shown = {
        **refusal,
        "reason": labels.text(str(refusal.get("reason") or "")),
        "reservations": labels.names(names),
    }
    if labels.hidden(names):
        shown["nextRuns"] = [
            {
                "cronJob": r.get("cronJob"),
                "job": r.get("job"),
                "pods": r.get("pods"),
                "note": WITHHELD,
            }
            for r in refusal.get("nextRuns") or []
        ]
    return shown


def _shown_reconciliation(
    found: dict[str, Any], labels: visibility.ReservationLabels
) -> dict[str, Any]:
    """Relabelled; its owner patches and commands withheld when they select another
    team's reservation (its nodeSelector may be the reservation's cloud id)."""
    names = found.get("reservations") or []
    shown = {**found, "reservations": labels.names(names)}
    if not labels.hidden(names):
        return shown
    shown["ownerPatches"] = [
        {"owner": s.get("owner"), "pods": s.get("pods"), "how": s.get("how"), "note": WITHHELD}
        for s in found.get("ownerPatches") or []
    ]
    shown["actions"] = [f"# {WITHHELD}"]
    return shown


def csv_rows(row: MoveReport, labels: visibility.ReservationLabels) -> list[dict[str, Any]]:
    """One row per workload searched and per reconciliation (``CSV_COLUMNS``)."""
    data = shown_result(row, labels)
    common = {"cluster": row.cluster_id, "evaluation": row.evaluation_id}
    rows = []
    for plan in data.get("plans") or []:
        move = plan.get("move") or {}
        buy = plan.get("buy") or {}
        rows.append(
            {
                **common,
                "kind": "unblock",
                "workload": plan["workload"],
                "namespace": str(plan["workload"]).split("/", 1)[0],
                "gpus": plan.get("gpus"),
                "recommend": plan.get("recommend"),
                "pods_moved": move.get("podsRestarted"),
                "gpus_disrupted": move.get("gpusDisrupted"),
                "gpu_hours_at_risk": move.get("gpuHoursAtRisk"),
                "buy_add_nodes": [f"{g}={n}" for g, n in (buy.get("addNodes") or {}).items()],
                "buy_per_hour": buy.get("costPerHour"),
                "buy_startup_seconds": buy.get("startupSeconds"),
                "avoided_per_hour": move.get("avoidedPerHour"),
                "moves": [f"{m['pod']}:{m['from']}>{m['to']}" for m in move.get("moves") or []],
                "note": plan.get("note") or "",
            }
        )
    for found in data.get("reconciliations") or []:
        rows.append(
            {
                **common,
                "kind": "reconcile",
                "recommend": MOVE,
                "pods_moved": len(found.get("moves") or []),
                "gpus_disrupted": sum(float(m.get("gpus") or 0) for m in found.get("moves") or []),
                "saved_per_hour": found.get("savedPerHour"),
                "node": found.get("node"),
                "reservations": found.get("reservations"),
                "moves": [f"{m['pod']}:{m['from']}>{m['to']}" for m in found.get("moves") or []],
                "owner_patches": [_owner_cell(step) for step in found.get("ownerPatches") or []],
            }
        )
    return rows


def _owner_cell(step: Mapping[str, Any]) -> str:
    """``Kind/ns/name={fields}``: the owner and the pod-template fields its patch sets
    (compact JSON); ``(withheld)`` when the viewer may not see the reservation."""
    fields = step.get("fields")
    if fields is None:
        return f"{step.get('owner')}=(withheld)"
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return f"{step.get('owner')}={text}"
