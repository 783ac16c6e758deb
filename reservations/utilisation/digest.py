"""The digest's third section: allocated-but-idle GPUs, beside idle reserved and stranded.

The email (HTML and text: ``templates/email/digest_utilisation.*``, included by the
digest templates) and the webhook post (``webhook_lines``) say the same: GPU-hours
and cost of GPUs held by pods below the idle threshold for the idle time, summed over
the measurements whose windows end in the period (``period_utilisation``), the
coverage of the latest one, the pods that wasted most, and "demo data" when the
figures are the demo's. Without a measurement in the period: "utilisation unknown"
and why, never zero.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from reservations.utilisation.selectors import PeriodUtilisation
from topology.model.money import format_money


def rule_text() -> str:
    hours = settings.UTILISATION_IDLE_FOR_SECONDS / 3600
    return (
        f"held by a pod below {settings.UTILISATION_IDLE_BELOW_PERCENT:g} % activity "
        f"for {hours:g} h or more"
    )


def unknown_reason(period: PeriodUtilisation | None) -> str:
    if period is None or period.reports == 0:
        return "no utilisation measured in this period (no Prometheus source configured?)"
    return f"all {period.failed} measurement(s) of this period failed (see admin)"


def utilisation_context(period: PeriodUtilisation | None) -> dict[str, Any]:
    return {
        "utilisation": period,
        "utilisation_known": period is not None and period.known,
        "utilisation_rule": rule_text(),
        "utilisation_unknown_reason": unknown_reason(period),
    }


def webhook_lines(period: PeriodUtilisation | None) -> list[str]:
    """The section in the webhook's text: one or two lines."""
    if period is None or not period.known:
        return [f"Allocated but idle GPUs: utilisation unknown, {unknown_reason(period)}."]
    demo = " (demo data)" if period.demo else ""
    money = format_money(period.idle_cost, settings.CURRENCY)
    lines = [
        f"Allocated but idle GPUs{demo}: {money} ({period.idle_gpu_hours:,.1f} GPU-h), "
        f"{rule_text()}; {period.coverage}."
    ]
    top = [
        f"{p['cluster']}/{p['pod']} {format_money(p['idle_cost'], settings.CURRENCY)}"
        for p in period.top_pods
    ]
    if top:
        lines.append("Most idle pods: " + "; ".join(top) + ".")
    return lines
