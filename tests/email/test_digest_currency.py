"""Every money figure of the digest in the configured currency (settings.CURRENCY)."""

from email.header import decode_header, make_header

import pytest
from digest_period import PERIOD_START, make_period, text_and_html

from reservations import digest

pytestmark = pytest.mark.django_db


def test_it_states_every_figure_in_the_configured_currency(smtp_server, settings):
    settings.CURRENCY = "EUR"
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    [message] = smtp_server.messages
    text, html = text_and_html(message)
    assert "€156.00 of idle" in str(make_header(decode_header(message["Subject"])))
    assert "Idle reserved cost: €156.00" in text
    assert "Stranded by the naive autoscaler: €168.00" in text
    assert "Change: +€81.00" in text
    assert "$" not in text and "$" not in html


def test_a_currency_without_a_symbol_keeps_its_code(smtp_server, settings):
    settings.CURRENCY = "CHF"
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text, _ = text_and_html(smtp_server.messages[0])
    assert "Idle reserved cost: 156.00 CHF" in text
