"""``{% load money %}{{ amount|money }}``: an amount in settings.CURRENCY (topology.model.money)."""

from __future__ import annotations

from django import template
from django.conf import settings

from topology.model.money import format_money

register = template.Library()


@register.filter
def money(amount: float | None) -> str:
    return "" if amount is None else format_money(float(amount), settings.CURRENCY)
