"""``{% moves_section %}``: the "Move instead of buy" section of a cluster page.

Placed by the workload page (``{% moves_section workload %}``: that workload's plan) and
the recommendations page (every plan and the reservation reconciliations). It reads the
shown evaluation's stored report (``recommender.moves.reports.moves_of``, one query): until the
worker has stored it, the section says "being worked out" and static/js/moves.js polls
``/api/v1/moves/?evaluation=<id>``, then re-renders the section from the page. Never
another evaluation's report. Other teams' reservations are relabelled.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from capacityweb import visibility
from recommender.moves import reports as moves

register = template.Library()

WORKING = "working"
DONE = "done"
FAILED = "failed"


@register.inclusion_tag("dashboard/_moves.html", takes_context=True)
def moves_section(context: template.Context, workload: str | None = None) -> dict[str, Any]:
    evaluation = context.get("evaluation")
    shown: dict[str, Any] = {
        "cluster": context.get("cluster"),
        "currency": context.get("currency"),
        "pinned_snapshot": context.get("pinned_snapshot"),
        "workload": workload,
        "evaluation": evaluation,
        "being_worked_out": moves.BEING_WORKED_OUT,
    }
    if evaluation is None:
        return {**shown, "state": None}
    row = moves.moves_of(evaluation)
    if row is None:
        url = reverse("move-report-list") + f"?evaluation={evaluation.pk}"
        return {**shown, "state": WORKING, "poll_url": url}
    if row.result is None:
        return {**shown, "state": FAILED, "error": row.error}
    request = context.get("request")
    # no request (a template rendered outside one): fail closed, name no reservation
    viewer = visibility.request_viewer(request) if request is not None else visibility.Viewer(False)
    data = moves.shown_result(row, viewer.labels(evaluation.reservation_owners))
    plans = data.get("plans") or []
    if workload is not None:
        plans = [p for p in plans if p["workload"] == workload]
    return {
        **shown,
        "state": DONE,
        "row": row,
        "plans": plans,
        "not_searched": data.get("notSearched") or [],
        "reconciliations": data.get("reconciliations") or [] if workload is None else [],
        "refusals": data.get("reconciliationRefusals") or [] if workload is None else [],
        "scale_down": data.get("scaleDown"),
        "unmovable": data.get("unmovablePods") or {},
    }
