"""Writes of the recommender: one stored Evaluation per snapshot, with its rows.

``store_evaluation`` stores the whole answer (the CLI, the demo, the follower);
``store_critical_pass`` what a verdict needs, its deferred parts named in ``missing``
and worked out after by the worker (``recommender.parts``, the evaluation task).

``store_evaluation`` is idempotent: it locks the snapshot row, replaces the
evaluation's child rows in one transaction, so running it twice for the same
snapshot (a redelivered task) leaves exactly the rows one run leaves. The rows
other apps derive from it (idle samples) are written by the receivers of
``signals.evaluation_stored``, in that same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from recommender import adapters, events, selectors, signals
from recommender.actions.report import report_json
from recommender.engine.autoscaler.caflags import read_flags
from recommender.engine.evaluate.evaluation import (
    CriticalPass,
    Evaluation as EngineEvaluation,
    critical_pass,
    evaluate,
)
from recommender.engine.scheduler.profiles import profile_named
from recommender.models import EvaluatedNode, Evaluation, Recommendation, WorkloadVerdict
from topology.adapters import cluster_from_snapshot
from topology.model.hardware import Cluster
from topology.model.serialize import JsonCache
from topology.models import Snapshot


def overview_figures(result: Mapping[str, Any]) -> dict[str, Any]:
    """The overview's per-cluster figures that are sums over the result's lists, stored as
    columns so the overview reads a few numbers instead of the whole result JSON."""
    return {
        "stranded_gpus": sum(
            int((workload.get("naive") or {}).get("strandedGpus") or 0)
            for workload in result.get("workloads") or []
        ),
        "idle_reserved_cost_per_hour": sum(
            float(reservation.get("costPerHour") or 0)
            for reservation in result.get("idleReservations") or []
        ),
        "model_gaps": int(result.get("modelGaps") or 0),
        "what_if_extra_gpus": (result.get("whatIf") or {}).get("extraGpusPlaced"),
    }


def engine_inputs(
    snapshot: Snapshot, json_cache: JsonCache | None = None
) -> tuple[Cluster, dict[str, Any]]:
    """The snapshot's model and the engine's arguments besides ``at``: the cluster's own
    profiles, else the settings (an unknown name: a ValueError naming the valid ones),
    and its cluster-autoscaler command line, else the setting (a bad flag: a ValueError
    naming it), and the CURRENCY setting (the reasons' money). ``json_cache``: as
    ``store_evaluation``'s."""
    model = cluster_from_snapshot(snapshot, json_cache)
    autoscaler = snapshot.cluster.autoscaler_profile or settings.AUTOSCALER_PROFILE
    profile = profile_named(snapshot.cluster.scheduler_profile or settings.SCHEDULER_PROFILE)
    ca_flags = read_flags(
        snapshot.cluster.autoscaler_args or settings.CLUSTER_AUTOSCALER_ARGS,
        snapshot.cluster.autoscaler_priorities,
    )
    arguments = {
        "policy": profile,
        "autoscaler": autoscaler,
        "ca_flags": ca_flags,
        "currency": settings.CURRENCY,
    }
    return model, arguments


def store_evaluation(*, snapshot: Snapshot, json_cache: JsonCache | None = None) -> Evaluation:
    """Run the engine on the snapshot and store its whole result (critical pass and every
    deferred part), replacing any earlier one. ``json_cache``: the nodes and pods an
    earlier snapshot of the cluster loaded as (a follower's,
    ``topology.services.json_cache``), so only the changed ones load again."""
    model, arguments = engine_inputs(snapshot, json_cache)
    evaluated = evaluate(model, at=snapshot.taken_at, **arguments)
    return _store(snapshot, model, evaluated)


def store_critical_pass(
    *, snapshot: Snapshot, json_cache: JsonCache | None = None
) -> tuple[Evaluation, CriticalPass]:
    """Run the engine's critical pass on the snapshot and store it, replacing any earlier
    evaluation: every verdict, reason, plan, recommendation and total, the deferred
    parts named in ``missing`` (``recommender.parts`` works each out after).
    ``json_cache`` as for ``store_evaluation``."""
    model, arguments = engine_inputs(snapshot, json_cache)
    critical = critical_pass(model, at=snapshot.taken_at, **arguments)
    return _store(snapshot, model, critical.evaluation, announce=True), critical


def _store(
    snapshot: Snapshot, model: Cluster, evaluated: EngineEvaluation, *, announce: bool = False
) -> Evaluation:
    """``announce``: once committed, the cluster's open pages get the evaluation (when it
    is still the latest) before any task the stored signal enqueues runs, so a deferred
    part never reaches a page ahead of the verdicts it completes."""
    # the CLI's JSON: to_json() plus currency, nodeGroups and actions (recommender.actions.report)
    result = report_json(evaluated, model, (), settings.CURRENCY)
    missing = sorted(evaluated.missing)
    if missing:  # the deferred parts not there yet: pages and the API say so
        result["missing"] = missing
    owners = {r.name: sorted(r.owner_namespaces) for r in model.reservations}
    with transaction.atomic():
        # the row locked, not read: its model_json is megabytes of JSON to decode
        Snapshot.objects.select_for_update().filter(pk=snapshot.pk).values_list("pk").first()
        evaluation, _created = Evaluation.objects.update_or_create(
            snapshot=snapshot,
            defaults={
                "cluster_id": snapshot.cluster_id,
                "taken_at": snapshot.taken_at,
                "result": result,
                **adapters.evaluation_figures(result),
                **overview_figures(result),
                "reservation_owners": owners,
                "missing": missing,
                "parts_failed": {},
                "stored_at": timezone.now(),
            },
        )
        Recommendation.objects.filter(evaluation=evaluation).delete()
        WorkloadVerdict.objects.filter(evaluation=evaluation).delete()
        EvaluatedNode.objects.filter(evaluation=evaluation).delete()
        Recommendation.objects.bulk_create(adapters.recommendations(evaluation, evaluated, model))
        WorkloadVerdict.objects.bulk_create(
            adapters.verdicts(evaluation, result, selectors.pending_since_before(evaluation)),
            batch_size=1000,
        )
        EvaluatedNode.objects.bulk_create(
            adapters.evaluated_nodes(
                evaluation,
                result.get("heatmap") or [],
                owners,
            ),
            batch_size=1000,
        )
        if announce:  # registered first: on_commit runs its callbacks in order
            transaction.on_commit(partial(events.publish_if_latest, evaluation))
        signals.send_evaluation_stored(evaluation=evaluation, model=model, result=result)
        if snapshot.evaluation_state:  # an earlier failure or skip: evaluated after all
            record_evaluation_state(snapshot=snapshot, state=Snapshot.EvaluationState.NONE)
    return evaluation


def record_evaluation_state(*, snapshot: Snapshot, state: str, note: str = "") -> None:
    """Say why ``snapshot`` has no evaluation (skipped, failed), or clear it (NONE)."""
    Snapshot.objects.filter(pk=snapshot.pk).update(evaluation_state=state, evaluation_note=note)
    snapshot.evaluation_state = state
    snapshot.evaluation_note = note


def skip_evaluation(*, snapshot: Snapshot, newer: Snapshot) -> None:
    """Leave ``snapshot`` unevaluated: ``newer`` of the same cluster waits and goes first."""
    note = f"skipped: newer snapshot #{newer.pk} was waiting, and only the newest is evaluated"
    record_evaluation_state(snapshot=snapshot, state=Snapshot.EvaluationState.SKIPPED, note=note)


def fail_evaluation(*, snapshot: Snapshot, reason: str) -> None:
    """Record that the evaluation of ``snapshot`` failed, and why (shown on its pages)."""
    record_evaluation_state(
        snapshot=snapshot, state=Snapshot.EvaluationState.FAILED, note=reason[:2000]
    )
