"""``{% load money %}``: every amount of money a page shows, in the one format of
topology.model.money (the engine's reasons and the CLI report use the same functions).

``{{ amount|money }}`` → ``$156.00`` (a period's total); ``{{ amount|per_hour }}`` →
``$84.00/h`` (a rate). Both in settings.CURRENCY; ``None`` shows nothing (the page says
"price unknown" where it applies).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings

from topology.model.money import format_money, format_per_hour

register = template.Library()


@register.filter
def money(amount: float | None) -> str:
    return "" if amount is None else format_money(float(amount), settings.CURRENCY)


@register.filter
def per_hour(amount: float | None) -> str:
    return "" if amount is None else format_per_hour(float(amount), settings.CURRENCY)


@register.filter
def per_hour_line(line: Any) -> str:
    """A sparkline's (capacityweb.dashboard.sparklines) first, last and peak $/h."""
    return f"{per_hour(line.first)} → {per_hour(line.last)} (peak {per_hour(line.peak)})"
