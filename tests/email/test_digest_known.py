"""What no data covers is "not enough data yet", never $0.00, in the email's text and
HTML and the webhook alike (issue 34: the first digest showed "unknown" idle cost beside
"$0.00" stranded for the same missing data).

The fixture period is conftest.py's [03-09 08:00, 03-10 08:00) UTC. A first digest: no
evaluation and no sample before 03-10 08:00 at all. Only r2's sample (03-09 20:00:
4 reserved, 3 idle, $3/h over 12 h → 36 GPU-h, $36) with its evaluation: the period
before has no sample, so its cost and the change are not known.
"""

from __future__ import annotations

from typing import Any

import pytest
from digest_period import EVALUATIONS, PERIOD_START, _at, make_period, text_and_html

from reservations import digest, webhook

pytestmark = pytest.mark.django_db

NOT_ENOUGH = "not enough data yet"
R2_ONLY = {"r2": [(_at(9, 20), 4, 3, 3.0)]}
R2_EVALUATION = [e for e in EVALUATIONS if e[0] == _at(9, 20)]


def sent_texts(smtp_server: Any, period: Any) -> tuple[str, str]:
    outcome = digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    assert outcome.status == "sent", outcome
    [message] = smtp_server.messages
    return text_and_html(message)


def test_the_first_digest_shows_no_zero_cost_for_missing_data(smtp_server: Any) -> None:
    period = make_period(samples={}, evaluations=[])

    text, html = sent_texts(smtp_server, period)

    assert "$0.00" not in text and "$0.00" not in html
    assert "Stranded by the naive autoscaler: not enough data yet (no evaluation" in text
    assert "Idle reserved cost: not enough data yet (no samples" in text


def test_the_first_digest_says_not_enough_data_for_the_stranded_cost_in_html(
    smtp_server: Any,
) -> None:
    period = make_period(samples={}, evaluations=[])

    _text, html = sent_texts(smtp_server, period)

    stranded_row = html.split("Stranded by the naive autoscaler", 1)[1].split("</tr>", 1)[0]
    assert NOT_ENOUGH in stranded_row


def test_it_says_not_enough_data_for_the_change_without_samples_before(
    smtp_server: Any,
) -> None:
    period = make_period(samples=R2_ONLY, evaluations=R2_EVALUATION)

    text, _html = sent_texts(smtp_server, period)

    assert "Idle reserved cost: $36.00" in text
    assert "Previous period: not enough data yet (no samples in the period before)" in text
    assert "Change: not enough data yet" in text


def test_the_first_webhook_post_shows_no_zero_stranded_cost(receiver: Any) -> None:
    period = make_period(samples={}, evaluations=[])
    period.subscription.webhook_url = receiver.url
    period.subscription.save(update_fields=["webhook_url"])

    webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text = receiver.posts[0]["text"]
    assert "$0.00" not in text
    assert f"Stranded by the naive autoscaler: {NOT_ENOUGH} (no evaluation" in text
