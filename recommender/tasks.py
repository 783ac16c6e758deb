"""Evaluation task (thin): store the critical pass of a snapshot's evaluation, then publish
it live; each deferred part's task (``work_out_part``, ``recommender.parts``); and the
what-if's task (``answer_what_if``, on its own queue: ``recommender.whatif.service``).

::

    evaluate_snapshot(id) ─► already evaluated? ─► publish it (if latest), done
                          ─► a newer snapshot of the cluster waits? ─► mark this one skipped
                          ─► store_critical_pass within the soft time limit ─► publish (if latest)
                                 ├─ database / broker error ─► retry after 2, 4, 8 ... s
                                 └─ time limit or any other error ─► mark it failed, say why
    (on commit, per part in ``missing``) work_out_part(id, stored_at, part)
                          ─► stored into the evaluation ─► publish_part (if latest)

Only the cluster's latest evaluation goes out live: a snapshot from an ingester
whose clock runs behind is stored and evaluated (history keeps it), but pushing
it would roll every open page back to an older state.

Coalescing: when the worker falls behind (snapshots every minute, evaluations
slower), the older waiting snapshots are marked skipped (their pages say so)
and only the newest is evaluated, so the lag never grows past one evaluation.
A snapshot left without an evaluation (its task lost, retries spent on a
database that stayed down) is evaluated by the next ingest of its cluster,
even one that finds nothing new (``receivers.evaluate_unevaluated_latest``).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
    TimeoutError as RedisTimeoutError,
)

from recommender import events, parts, selectors, services
from recommender.models import Evaluation
from recommender.moves import reports as moves
from recommender.timelimit import soft_time_limit
from recommender.whatif import service as whatif
from topology.models import Snapshot

logger = logging.getLogger(__name__)

# Errors of the services around the engine, not of the snapshot: worth a retry.
TRANSIENT_ERRORS = (
    OperationalError,
    InterfaceError,
    BrokerError,
    RedisConnectionError,
    RedisTimeoutError,
)


class EvaluationTask(Task):  # type: ignore[misc]
    """Records a hard time limit's kill (prefork: the worker's parent calls this)."""

    def on_failure(self, exc: Any, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        if not isinstance(exc, TimeLimitExceeded) or not args:
            return
        snapshot = Snapshot.objects.filter(pk=args[0]).first()
        if snapshot is not None:
            reason = (
                f"killed: still running after EVALUATION_TIME_LIMIT_SECONDS="
                f"{settings.EVALUATION_TIME_LIMIT_SECONDS:g} s"
            )
            services.fail_evaluation(snapshot=snapshot, reason=reason)
            events.publish_evaluation_failed(snapshot)


@shared_task(
    bind=True,
    base=EvaluationTask,
    name="recommender.tasks.evaluate_snapshot",
    acks_late=True,
    time_limit=settings.EVALUATION_TIME_LIMIT_SECONDS,
)
def evaluate_snapshot(self: Task, snapshot_id: int) -> int | None:
    """The id of the snapshot's evaluation; None when skipped, failed or gone."""
    snapshot = Snapshot.objects.select_related("cluster").filter(pk=snapshot_id).first()
    if snapshot is None:
        return None
    try:
        evaluation = selectors.evaluation_of_snapshot(snapshot_id=snapshot.pk)
        if evaluation is not None:  # a redelivered or repeated task: the work is done
            events.publish_if_latest(evaluation)
        else:  # stored, and once committed published (services.store_critical_pass)
            evaluation = _evaluate(snapshot)
    except TRANSIENT_ERRORS as error:
        retries = self.request.retries or 0
        countdown = min(settings.EVALUATION_RETRY_MAX_SECONDS, 2 ** (retries + 1))
        logger.warning("evaluating snapshot %s: %s; retry in %s s", snapshot_id, error, countdown)
        raise self.retry(
            exc=error, countdown=countdown, max_retries=settings.EVALUATION_MAX_RETRIES
        ) from error
    return evaluation.pk if evaluation is not None else None


def _evaluate(snapshot: Snapshot) -> Evaluation | None:
    """The evaluation of ``snapshot`` stored now; None if skipped or failed."""
    newer = selectors.newer_waiting_snapshot(snapshot)
    if newer is not None:
        services.skip_evaluation(snapshot=snapshot, newer=newer)
        return None
    limit = settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS
    try:
        with soft_time_limit(limit):
            evaluation, critical = services.store_critical_pass(snapshot=snapshot)
    except SoftTimeLimitExceeded:
        reason = f"timed out: still running after EVALUATION_SOFT_TIME_LIMIT_SECONDS={limit:g} s"
        logger.error("evaluation of snapshot %s %s", snapshot.pk, reason)
        _fail(snapshot, reason)
        return None
    except TRANSIENT_ERRORS:
        raise
    except Exception as error:
        _fail(snapshot, f"{type(error).__name__}: {error}")
        raise
    parts.keep(evaluation, critical)  # for the part tasks this worker runs next
    return evaluation


def _fail(snapshot: Snapshot, reason: str) -> None:
    services.fail_evaluation(snapshot=snapshot, reason=reason)
    events.publish_evaluation_failed(snapshot)


@shared_task(name="recommender.tasks.keep_workload_breakdowns", acks_late=True)
def keep_workload_breakdowns(evaluation_id: int) -> int:
    """Cache every pending workload's breakdown summary of a stored evaluation, so its
    workload pages open without a scheduler pass; the number kept (0: it is gone).

    A task of its own, after the evaluation's live update: at 10,000 nodes the pass
    and the summaries take seconds (docs/BENCHMARKS.md) that open pages should not wait.
    """
    evaluation = Evaluation.objects.select_related("snapshot").filter(pk=evaluation_id).first()
    if evaluation is None:
        return 0
    return selectors.keep_breakdowns(evaluation=evaluation)


@shared_task(
    bind=True,
    name=whatif.ANSWER_TASK,  # on the "what-if" queue (settings.CELERY_TASK_ROUTES)
    acks_late=True,
    time_limit=settings.WHAT_IF_SECONDS + whatif.LOST_AFTER_SECONDS,
)
def answer_what_if(self: Task, request_id: int) -> str | None:
    """Answer a stored what-if request (``recommender.whatif.service``); its state when done, None
    when gone. While the same user's other what-if runs on another worker, it waits its
    turn (a retry in 0.5 s): one running per user; its budget keeps running meanwhile."""
    try:
        request = whatif.claim(request_id)
    except whatif.NotYourTurn as turn:
        raise self.retry(countdown=0.5, max_retries=None) from turn
    return whatif.answer(request).state if request is not None else None


@shared_task(
    name="recommender.tasks.find_moves",
    acks_late=True,
    time_limit=settings.EVALUATION_TIME_LIMIT_SECONDS,
)
def find_moves(evaluation_id: int) -> int | None:
    """Work out and store a stored evaluation's "move instead of buy" report
    (``recommender.moves.reports``): a deferred answer, after the evaluation's live update. The
    report's id; None when the evaluation is gone or was re-stored meanwhile.

    Held to the evaluation's soft time limit: past it, or on any error of the search,
    the report records the failure and why, so pages stop saying "being worked out".
    """
    evaluation = Evaluation.objects.select_related("snapshot").filter(pk=evaluation_id).first()
    if evaluation is None:
        return None
    limit = settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS
    try:
        with soft_time_limit(limit):
            row = moves.store_moves(evaluation=evaluation)
    except SoftTimeLimitExceeded:
        reason = f"timed out: still running after EVALUATION_SOFT_TIME_LIMIT_SECONDS={limit:g} s"
        row = moves.fail_moves(evaluation=evaluation, reason=reason)
    except TRANSIENT_ERRORS:
        raise
    except Exception as error:
        logger.exception("moves of evaluation %s", evaluation_id)
        row = moves.fail_moves(evaluation=evaluation, reason=f"{type(error).__name__}: {error}")
    return row.pk if row is not None else None


@shared_task(
    name="recommender.tasks.work_out_part",
    acks_late=True,
    time_limit=settings.EVALUATION_TIME_LIMIT_SECONDS,
)
def work_out_part(evaluation_id: int, stored_at: str, part: str) -> str:
    """Work out and store one deferred part of a stored evaluation (``recommender.parts``);
    what became of it: "stored", "failed", "superseded" (a newer snapshot's evaluation is
    the cluster's latest: not worked out, it says so), "discarded" (the evaluation was
    re-stored: that write's own tasks answer it) or "gone".

    Held to the evaluation's soft time limit: past it, or on any error, the part records
    why it was not worked out, so pages stop saying "being worked out".
    """
    evaluation = (
        Evaluation.objects.select_related("snapshot__cluster").filter(pk=evaluation_id).first()
    )
    if evaluation is None:
        return "gone"
    if evaluation.stored_at.isoformat() != stored_at or part not in (evaluation.missing or ()):
        return "discarded"
    latest = selectors.latest_evaluation_id(cluster_id=evaluation.cluster_id)
    limit = settings.EVALUATION_SOFT_TIME_LIMIT_SECONDS
    outcome = "stored"
    try:
        if latest is not None and latest != evaluation.pk:
            reason = f"evaluation #{latest} of a newer snapshot replaced it first"
            parts.fail_part(evaluation=evaluation, part=part, reason=reason)
            return "superseded"
        with soft_time_limit(limit):
            evaluation = parts.store_part(evaluation=evaluation, part=part)
    except parts.Replaced:
        return "discarded"
    except SoftTimeLimitExceeded:
        reason = f"timed out: still running after EVALUATION_SOFT_TIME_LIMIT_SECONDS={limit:g} s"
        evaluation, outcome = _fail_part(evaluation, part, reason), "failed"
    except TRANSIENT_ERRORS:
        raise
    except Exception as error:
        logger.exception("part %s of evaluation %s", part, evaluation_id)
        reason = f"{type(error).__name__}: {error}"
        evaluation, outcome = _fail_part(evaluation, part, reason), "failed"
    _publish_part_if_latest(evaluation, part)
    return outcome


def _fail_part(evaluation: Evaluation, part: str, reason: str) -> Evaluation:
    try:
        return parts.fail_part(evaluation=evaluation, part=part, reason=reason)
    except parts.Replaced:
        return evaluation


def _publish_part_if_latest(evaluation: Evaluation, part: str) -> None:
    if selectors.latest_evaluation_id(cluster_id=evaluation.cluster_id) == evaluation.pk:
        events.publish_part(evaluation, part)
