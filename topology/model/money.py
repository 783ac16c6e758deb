"""Money as every page, email and message shows it: one format per currency.

``format_money(156, "USD")`` → ``"$156.00"``; a currency without a common
symbol keeps its ISO 4217 code: ``"156.00 CHF"``. Pure: the caller passes the
currency (settings.CURRENCY).
"""

from __future__ import annotations

SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def format_money(amount: float, currency: str) -> str:
    sign = "-" if amount < 0 else ""
    figure = f"{abs(amount):,.2f}"
    symbol = SYMBOLS.get(currency.upper())
    return f"{sign}{symbol}{figure}" if symbol else f"{sign}{figure} {currency}"
