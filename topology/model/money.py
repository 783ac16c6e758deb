"""Money as every page, email, API text, CLI report and engine reason shows it: one
format per currency.

``format_money(156, "USD")`` → ``"$156.00"``; a currency without a common
symbol keeps its ISO 4217 code: ``"156.00 CHF"``. A rate is the same with ``/h``:
``format_per_hour(84, "USD")`` → ``"$84.00/h"``, ``"1,234.50 CHF/h"``. Pure: the
caller passes the currency (settings.CURRENCY; the engine's evaluation inputs carry
it, ``DEFAULT_CURRENCY`` when none is given).
"""

from __future__ import annotations

SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}
# the currency of the built-in price table (topology/data/prices.yaml) and of the
# CURRENCY setting's default
DEFAULT_CURRENCY = "USD"


def format_money(amount: float, currency: str) -> str:
    sign = "-" if amount < 0 else ""
    figure = f"{abs(amount):,.2f}"
    symbol = SYMBOLS.get(currency.upper())
    return f"{sign}{symbol}{figure}" if symbol else f"{sign}{figure} {currency}"


def format_per_hour(amount: float, currency: str) -> str:
    """An amount per hour: ``$84.00/h``."""
    return f"{format_money(amount, currency)}/h"
