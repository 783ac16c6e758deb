"""The workload page's interactive what-if: one edit of the stored snapshot's model, the
workload planned again with it (``edit_answer.answer_edit``) by a worker, never in a web
process.

::

    web (page form, POST /api/v1/what-if/)              worker ("what-if" queue)
    submit(): edit parsed, workload looked up in the    answer(): claim it (queued ─► working;
      stored verdicts (no snapshot read), the user's      the user's other one working? later),
      limit, the queue's bound ─► WhatIfRequest queued    snapshot's model read, engine run in
      ─► on commit: tasks.answer_what_if on "what-if"     what is left of WHAT_IF_SECONDS
    page / GET …/what-if/<id>/ polls its state          ─► done (answer) | failed (field, reason)

The budget (``WHAT_IF_SECONDS``) runs from the request, so time waiting in the queue
counts: a what-if that waited it all fails without running. A user has at most one
running and one waiting (a third: ``WhatIfBusy``, 429); at ``WHAT_IF_QUEUE_MAX`` waiting
or running for everyone the next is refused (``WhatIfQueueFull``, 503), both with the
seconds until the oldest one's budget ends. A request still queued or working past its
budget plus ``LOST_AFTER_SECONDS`` (its worker died) counts for no limit and reads as
failed. Nothing but the request row is stored: never a snapshot or an evaluation. The
answer's texts go through the reader's reservation labels (``capacityweb.visibility``)
as every page's do, and an edit naming another team's reservation is refused as if it
did not exist.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from capacityweb import visibility
from recommender.engine.evaluate.edit_answer import answer_edit
from recommender.engine.evaluate.edits import RESERVATION, EditError, edit_from
from recommender.models import Evaluation, WhatIfRequest, WorkloadVerdict
from recommender.services import engine_inputs
from recommender.timelimit import soft_time_limit
from topology.models import Snapshot

ANSWER_TASK = "recommender.tasks.answer_what_if"  # routed to the "what-if" queue (settings)
LOST_AFTER_SECONDS = 30  # past its budget by this much, a request's worker is gone
ACTIVE = (WhatIfRequest.State.QUEUED, WhatIfRequest.State.WORKING)
State = WhatIfRequest.State


class WhatIfError(ValueError):
    """Bad what-if input: ``field`` names it (the API answers 400, the page says it)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


class WhatIfRefused(Exception):
    """Not now: ``status`` (429 or 503) and the seconds to wait (Retry-After)."""

    status = 503

    def __init__(self, reason: str, retry_after_seconds: int) -> None:
        super().__init__(reason)
        self.retry_after_seconds = retry_after_seconds


class WhatIfBusy(WhatIfRefused):
    """The user has one what-if running and one waiting already."""

    status = 429


class WhatIfQueueFull(WhatIfRefused):
    """``WHAT_IF_QUEUE_MAX`` what-ifs of all users are waiting or running."""


def budget_seconds() -> float:
    return float(settings.WHAT_IF_SECONDS)


def active(now: datetime) -> QuerySet[WhatIfRequest]:
    """Requests waiting or running, their worker not gone."""
    lost_before = now - timedelta(seconds=budget_seconds() + LOST_AFTER_SECONDS)
    return WhatIfRequest.objects.filter(state__in=ACTIVE, created_at__gt=lost_before)


def evaluation_for(cluster_id: int, snapshot_id: int | None) -> Evaluation | None:
    """The snapshot's evaluation (it must be of that cluster), else the cluster's latest:
    one query, reading neither the evaluation's JSON nor the snapshot."""
    evaluations = Evaluation.objects.filter(cluster_id=cluster_id).defer("result")
    if snapshot_id is not None:
        evaluations = evaluations.filter(snapshot_id=snapshot_id)
    return evaluations.order_by("-taken_at", "-id").first()


def submit(
    *, user: Any, evaluation: Evaluation, workload: str, data: Mapping[str, Any], labels: Any
) -> WhatIfRequest:
    """Queue the edit in ``data`` (``kind``, ``target``, ``amount``) of ``evaluation``'s
    snapshot for ``workload``: WhatIfError on bad input, WhatIfRefused when not now."""
    try:
        edit = edit_from(data)
    except EditError as error:
        raise WhatIfError(error.field, error.reason) from None
    if edit.kind == RESERVATION and not labels.shows(edit.target):
        # another team's reservation is as unknown to this viewer as a missing one
        raise WhatIfError("target", f"no reservation {edit.target!r}")
    if not WorkloadVerdict.objects.filter(evaluation=evaluation, workload=workload).exists():
        raise WhatIfError("workload", f"{workload} is not pending in the snapshot")
    with transaction.atomic():
        # one user's requests one at a time (a row lock on Postgres; SQLite writes are serial)
        get_user_model().objects.select_for_update().filter(pk=user.pk).exists()
        now = timezone.now()
        running = active(now)
        mine = list(running.filter(user=user).order_by("created_at").values_list("created_at"))
        if len(mine) >= 2:
            raise WhatIfBusy("one what-if running and one waiting already", _wait(mine[0][0], now))
        if running.count() >= settings.WHAT_IF_QUEUE_MAX:
            oldest = running.order_by("created_at").values_list("created_at", flat=True).first()
            raise WhatIfQueueFull("the what-if queue is full", _wait(oldest or now, now))
        request = WhatIfRequest.objects.create(
            user=user,
            evaluation=evaluation,
            workload=workload,
            edit={"kind": edit.kind, "target": edit.target, "amount": edit.amount},
            created_at=now,
        )
        transaction.on_commit(lambda: current_app.send_task(ANSWER_TASK, args=[request.pk]))
    return request


def _wait(created_at: datetime, now: datetime) -> int:
    """Whole seconds until a request made at ``created_at`` has run out of budget (≥ 1)."""
    left = budget_seconds() - (now - created_at).total_seconds()
    return max(1, math.ceil(left))


class NotYourTurn(Exception):
    """The same user's other what-if is working: this one waits (one running per user)."""


def claim(request_id: int) -> WhatIfRequest | None:
    """Take the request for this worker (queued ─► working) and return it (None: gone);
    NotYourTurn while the user's other one is working. One already taken or answered is
    returned as it is, for ``answer`` to leave alone."""
    with transaction.atomic():
        # its row locked: a redelivered copy of the task waits here, then finds it taken
        request = WhatIfRequest.objects.select_for_update().filter(pk=request_id).first()
        if request is None or request.state != State.QUEUED:
            return request
        now = timezone.now()
        if active(now).filter(user_id=request.user_id, state=State.WORKING).exists():
            raise NotYourTurn(request_id)
        request.state, request.started_at = State.WORKING, now
        request.save(update_fields=["state", "started_at"])
    return request


def answer(request: WhatIfRequest) -> WhatIfRequest:
    """Run the claimed request's edit in what is left of its budget; store the answer or
    the failure (a field and its reason)."""
    if request.state != State.WORKING:
        return request
    left = budget_seconds() - (timezone.now() - request.created_at).total_seconds()
    try:
        with soft_time_limit(left):
            request.answer = _answer_json(request)
    except EditError as error:
        return _finish(request, State.FAILED, error.field, error.reason)
    except SoftTimeLimitExceeded:
        reason = f"the what-if ran past {budget_seconds():g} s (time waiting in the queue counts)"
        return _finish(request, State.FAILED, "workload", reason)
    return _finish(request, State.DONE, "", "")


def _answer_json(request: WhatIfRequest) -> dict[str, Any]:
    """The answer from the evaluation's own engine arguments (the cluster's profiles and
    autoscaler flags, ``recommender.services.engine_inputs``): "as it is" is the page's
    verdict."""
    snapshot = Snapshot.objects.select_related("cluster").get(evaluation=request.evaluation_id)
    edit = edit_from(request.edit)
    model, arguments = engine_inputs(snapshot)
    answered = answer_edit(model, request.workload, edit, at=snapshot.taken_at, **arguments)
    return answered.to_json()


def _finish(request: WhatIfRequest, state: str, field: str, reason: str) -> WhatIfRequest:
    request.state, request.error_field, request.error = state, field, reason
    request.finished_at = timezone.now()
    request.save(update_fields=["state", "answer", "error_field", "error", "finished_at"])
    return request


def request_of(*, user: Any, request_id: Any) -> WhatIfRequest | None:
    """The user's own request ``request_id`` (another user's is as unknown as a missing
    one), with its evaluation's reservation owners but not its JSON."""
    try:
        pk = int(request_id)
    except (TypeError, ValueError):
        return None
    return (
        WhatIfRequest.objects.filter(pk=pk, user=user)
        .select_related("evaluation")
        .only(
            *(f.name for f in WhatIfRequest._meta.concrete_fields),
            "evaluation__cluster_id",
            "evaluation__snapshot_id",
            "evaluation__reservation_owners",
        )
        .first()
    )


def state_of(request: WhatIfRequest, now: datetime | None = None) -> str:
    """Its state as read: queued or working past its budget and then some, failed."""
    now = now or timezone.now()
    lost = (now - request.created_at).total_seconds() >= budget_seconds() + LOST_AFTER_SECONDS
    return State.FAILED if request.state in ACTIVE and lost else request.state


def error_of(request: WhatIfRequest, state: str) -> dict[str, list[str]] | None:
    """A failed request's ``{field: [reason]}`` (as a 400 would name it); None otherwise."""
    if state != State.FAILED:
        return None
    if request.state in ACTIVE:  # lost: its worker stopped before answering
        return {"workload": ["no worker answered within the what-if's time limit"]}
    return {request.error_field or "workload": [request.error]}


def shown_answer(request: WhatIfRequest, labels: Any) -> dict[str, Any] | None:
    """The stored answer as the reader may see it (other teams' reservations relabelled)."""
    if request.answer is None:
        return None
    return visibility.relaxation(request.answer, labels)
