"""The digest's third section, allocated but idle, in the email (text and HTML) and the webhook.

The fixture period [03-09 08:00, 03-10 08:00) UTC (digest_period.py) plus one utilisation
window [03-10 04:00, 06:00) (tests/utilisation/stored.py): the pod ml/notebook holds a
GPU at 0 % for the whole 2 h = 2 GPU-hours at 10 per GPU-hour = $20; ml/trainer is busy.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from digest_period import PERIOD_START, make_period, text_and_html

from reservations import digest, webhook
from reservations.utilisation.services import store_failure
from tests.utilisation.stored import stored_report

pytestmark = pytest.mark.django_db
WINDOW_END = datetime(2026, 3, 10, 6, tzinfo=UTC)


def text_of(smtp_server: Any) -> str:
    """The text part, with the email's CRLF line ends as plain newlines."""
    return text_and_html(smtp_server.messages[0])[0].replace("\r\n", "\n")


def test_it_states_the_allocated_idle_gpu_hours_and_cost_in_text(smtp_server: Any) -> None:
    period = make_period()
    stored_report(period.cluster, end=WINDOW_END)
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    text = text_of(smtp_server)
    assert (
        "Idle allocated GPU-hours: 2.0\nIdle allocated cost: $20.00\n"
        "Coverage: 2 of 2 GPUs have utilisation data\n"
        "Top idle pods:\n  1. prod-gpu/ml/notebook: 2.0 GPU-h, $20.00\n"
    ) in text


def test_it_puts_the_section_after_stranded_in_html(smtp_server: Any) -> None:
    period = make_period()
    stored_report(period.cluster, end=WINDOW_END)
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    _, html = text_and_html(smtp_server.messages[0])
    assert html.index("Stranded by the naive") < html.index("Allocated but idle GPUs")
    assert "prod-gpu/ml/notebook" in html and "$20.00" in html


def test_it_says_unknown_without_a_measurement(smtp_server: Any) -> None:
    period = make_period()
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    text, html = text_and_html(smtp_server.messages[0])
    assert "Utilisation unknown: no utilisation measured in this period" in text
    assert "Idle allocated cost" not in html


def test_it_says_why_when_every_measurement_failed(smtp_server: Any) -> None:
    period = make_period()
    start = datetime(2026, 3, 10, 4, tzinfo=UTC)
    store_failure(cluster=period.cluster, start=start, end=WINDOW_END, now=WINDOW_END, error="x")
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    text = text_of(smtp_server)
    assert "Utilisation unknown: all 1 measurement(s) of this period failed (see admin)." in text


def test_it_marks_demo_data(smtp_server: Any) -> None:
    period = make_period()
    stored_report(period.cluster, end=WINDOW_END, source="demo")
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    text, html = text_and_html(smtp_server.messages[0])
    assert "— DEMO DATA" in text and "(demo data)" in html


def test_it_counts_only_windows_ending_in_the_period(smtp_server: Any) -> None:
    period = make_period()
    stored_report(period.cluster, end=WINDOW_END)
    stored_report(period.cluster, end=datetime(2026, 3, 10, 10, tzinfo=UTC))  # after the period
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    text = text_of(smtp_server)
    assert "Idle allocated GPU-hours: 2.0\n" in text


def test_it_keeps_the_subscriptions_team(smtp_server: Any) -> None:
    period = make_period()
    period.subscription.team = "web"
    period.subscription.save(update_fields=["team"])
    stored_report(period.cluster, end=WINDOW_END)
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    text = text_of(smtp_server)
    # team web's only pod (ghost) has no data: nothing idle, no ml pod named
    assert "Idle allocated GPU-hours: 0.0" in text and "ml/notebook" not in text


def test_it_posts_the_section_to_the_webhook() -> None:
    period = make_period()
    stored_report(period.cluster, end=WINDOW_END)
    figures = digest.digest_figures(
        period.subscription, PERIOD_START, datetime(2026, 3, 10, 8, tzinfo=UTC)
    )
    lines = webhook.webhook_text(figures).splitlines()
    assert lines[4:6] == [
        "Allocated but idle GPUs: $20.00 (2.0 GPU-h), held by a pod below 5 % activity for "
        "1 h or more; 2 of 2 GPUs have utilisation data.",
        "Most idle pods: prod-gpu/ml/notebook $20.00.",
    ]
