"""The workload page's interactive what-if: one edit of the stored snapshot's model, the
workload planned again with it (``relaxations.answer_edit``), nothing stored.

The stored model is read once (the snapshot's model JSON), the edit applied to a copy
in memory, and the engine run under a soft time limit (``WHAT_IF_SECONDS``): a what-if
never writes a snapshot or an evaluation. The answer's texts go through the viewer's
reservation labels (``capacityweb.visibility``) as every page's do, and an edit naming
another team's reservation is refused as if it did not exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from capacityweb import visibility
from recommender.engine.autoscaler.template import with_member_capacity
from recommender.engine.evaluate.edits import RESERVATION, EditError, edit_from
from recommender.engine.evaluate.relaxations import answer_edit
from recommender.engine.scheduler.profiles import profile_named
from recommender.engine.scheduler.scores import policy_named
from recommender.models import Evaluation
from recommender.timelimit import soft_time_limit
from topology.adapters import cluster_from_snapshot
from topology.models import Snapshot

WHAT_IF_SECONDS = 20


class WhatIfError(ValueError):
    """Bad what-if input: ``field`` names it (the API answers 400, the page says it)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


class WhatIfTimeout(WhatIfError):
    """The engine ran past ``WHAT_IF_SECONDS``: not bad input (the API answers 503)."""


def run_what_if(
    *, evaluation: Evaluation, workload: str, data: Mapping[str, Any], labels: Any
) -> dict[str, Any]:
    """The edit in ``data`` (``kind``, ``target``, ``amount``) made on ``evaluation``'s
    snapshot, its answer as JSON for the viewer (WhatIfError on bad input)."""
    try:
        edit = edit_from(data)
    except EditError as error:
        raise WhatIfError(error.field, error.reason) from None
    if edit.kind == RESERVATION and not labels.shows(edit.target):
        # another team's reservation is as unknown to this viewer as a missing one
        raise WhatIfError("target", f"no reservation {edit.target!r}")
    snapshot = Snapshot.objects.select_related("cluster").get(pk=evaluation.snapshot_id)
    cluster = with_member_capacity(cluster_from_snapshot(snapshot))
    profile = profile_named(snapshot.cluster.scheduler_profile or settings.SCHEDULER_PROFILE)
    policy = policy_named(profile).name
    try:
        with soft_time_limit(WHAT_IF_SECONDS):
            answer = answer_edit(cluster, workload, edit, at=snapshot.taken_at, policy=policy)
    except EditError as error:
        raise WhatIfError(error.field, error.reason) from None
    except SoftTimeLimitExceeded:
        raise WhatIfTimeout("workload", f"the what-if ran past {WHAT_IF_SECONDS} s") from None
    return visibility.relaxation(answer.to_json(), labels)
