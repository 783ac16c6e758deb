"""The digest's figures as text, with one rule: what no data covers is "not enough data
yet", never $0.00 (issue 34: the first digest said "unknown" idle cost beside "$0.00"
stranded, for the same missing data).

Which data each figure needs:

    idle GPU-hours, idle $          samples of reserved GPUs in the period
    previous period, change         samples in the period before (and in this one)
    stranded, naive and joint $     an evaluation covering the period (taken in it,
                                    or the last one before it, carried in)

The email's text and HTML and the webhook's message all read ``shown_figures``, so the
three cannot disagree on what is known.
"""

from __future__ import annotations

from django.conf import settings

from reservations.digest_figures import DigestFigures
from topology.model.money import format_money

NOT_ENOUGH_DATA = "not enough data yet"
NO_SAMPLES = f"{NOT_ENOUGH_DATA} (no samples of reserved GPUs in this period)"
NO_PREVIOUS_SAMPLES = f"{NOT_ENOUGH_DATA} (no samples in the period before)"
NO_EVALUATION = f"{NOT_ENOUGH_DATA} (no evaluation of the clusters covers this period)"


def money(amount: float) -> str:
    return format_money(amount, settings.CURRENCY)


def signed_money(amount: float) -> str:
    return f"{'+' if amount >= 0 else '-'}{money(abs(amount))}"


def shown_figures(figures: DigestFigures) -> dict[str, str]:
    """Each figure as the digest states it: its value when known, else why not."""
    idle = figures.has_samples
    previous = figures.has_previous_samples
    evaluated = figures.has_evaluations
    change = figures.idle_cost_change
    percent = figures.idle_cost_change_percent
    both = idle and previous
    change_text = signed_money(change) + (f" ({percent:+.1f}%)" if percent is not None else "")
    return {
        "idle_gpu_hours": f"{figures.idle_gpu_hours:,.1f}" if idle else NO_SAMPLES,
        "idle_cost": money(figures.idle_cost) if idle else NO_SAMPLES,
        "previous": (
            f"{figures.previous_idle_gpu_hours:,.1f} GPU-h, {money(figures.previous_idle_cost)}"
            if previous
            else NO_PREVIOUS_SAMPLES
        ),
        "previous_cost": money(figures.previous_idle_cost) if previous else NOT_ENOUGH_DATA,
        "change": change_text if both else NOT_ENOUGH_DATA,
        "change_amount": signed_money(change) if both else NOT_ENOUGH_DATA,
        "stranded_cost": money(figures.stranded_cost) if evaluated else NO_EVALUATION,
        "naive_cost": money(figures.naive_cost) if evaluated else NOT_ENOUGH_DATA,
        "joint_cost": money(figures.joint_cost) if evaluated else NOT_ENOUGH_DATA,
    }
