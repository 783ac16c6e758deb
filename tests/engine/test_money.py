"""Money formatting: a symbol for the common currencies, the ISO code otherwise."""

from topology.model.money import format_money, format_per_hour


def test_a_dollar_amount_has_the_symbol_and_thousands_separators() -> None:
    assert format_money(1234.5, "USD") == "$1,234.50"


def test_a_negative_amount_puts_the_sign_before_the_symbol() -> None:
    assert format_money(-81, "EUR") == "-€81.00"


def test_a_currency_without_a_symbol_shows_its_code_after_the_figure() -> None:
    assert format_money(156, "CHF") == "156.00 CHF"


def test_a_rate_is_the_amount_with_per_hour() -> None:
    assert format_per_hour(1234.5, "USD") == "$1,234.50/h"


def test_a_rate_in_a_currency_without_a_symbol_keeps_the_code_before_per_hour() -> None:
    assert format_per_hour(84, "CHF") == "84.00 CHF/h"
