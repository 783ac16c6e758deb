"""The digest as a Slack-compatible webhook post, to a real HTTP receiver on 127.0.0.1
(admitted by WEBHOOK_ALLOWED_NETWORKS: webhooks post only to public addresses otherwise).

Figures of the fixture period [03-09 08:00, 03-10 08:00) UTC, worked out by hand in
test_digest.py's docstring: idle 84 GPU-h, $156; the period before $75 (change +$81);
r1 $120, r2 $36; stranded by the naive autoscaler $168.
"""

from __future__ import annotations

from typing import Any

import pytest
from digest_period import PERIOD_START, make_period

from reservations import tasks, webhook
from reservations.models import WebhookDelivery
from tests.servers import free_port

pytestmark = pytest.mark.django_db


def with_webhook(url: str, **options: Any) -> Any:
    period = make_period(**options)
    period.subscription.webhook_url = url
    period.subscription.save(update_fields=["webhook_url"])
    return period


def test_it_posts_the_periods_figures_as_slack_text(receiver: Any) -> None:
    period = with_webhook(receiver.url)

    outcome = webhook.send_webhook(
        subscription_id=period.subscription.id, period_start=PERIOD_START
    )

    assert outcome.status == "sent"
    [post] = receiver.posts
    assert list(post) == ["text"]
    lines = post["text"].splitlines()
    assert lines[0] == (
        "capacityweb: $156.00 of idle reserved GPUs (84.0 GPU-h) from 2026-03-09 08:00 "
        "to 2026-03-10 08:00 UTC on prod-gpu (all teams)."
    )
    assert lines[1] == "Change vs the period before: +$81.00."
    assert lines[2] == "Most idle: prod-gpu/r1 (team-a) $120.00; prod-gpu/r2 (team-b) $36.00."
    assert lines[3] == "Stranded by the naive autoscaler: $168.00."
    assert lines[4] == (
        "Allocated but idle GPUs: utilisation unknown, no utilisation measured in this "
        "period (no Prometheus source configured?)."
    )
    assert lines[5].startswith("https://capacity.example.test/")
    assert receiver.headers[0]["Content-Type"] == "application/json"


def test_it_names_the_periods_local_times_in_the_subscribers_zone(receiver: Any) -> None:
    # 08:00 UTC is 09:00 in Berlin (CET, winter); the period there is 09:00 → 09:00.
    period = with_webhook(receiver.url, timezone="Europe/Berlin", hour=9)

    webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert "from 2026-03-09 09:00 to 2026-03-10 09:00 Europe/Berlin" in receiver.posts[0]["text"]


def test_it_posts_once_when_the_task_runs_twice_for_the_same_period(receiver: Any) -> None:
    period = with_webhook(receiver.url)

    first = tasks.send_webhook(period.subscription.id, PERIOD_START.isoformat())
    second = tasks.send_webhook(period.subscription.id, PERIOD_START.isoformat())

    assert (first, second) == ("sent", "already_claimed")
    assert len(receiver.posts) == 1
    delivery = WebhookDelivery.objects.get(subscription=period.subscription)
    assert delivery.sent_at is not None and delivery.status_code == 200


def test_it_posts_once_when_the_beat_task_runs_twice(receiver: Any) -> None:
    from capacityweb.celery import app

    with_webhook(receiver.url)
    app.conf.task_always_eager = True
    try:
        tasks.send_due_digests()
        tasks.send_due_digests()
    finally:
        app.conf.task_always_eager = False

    assert len(receiver.posts) == 1


def test_it_posts_nothing_below_the_threshold_and_decides_that_once(receiver: Any) -> None:
    period = with_webhook(receiver.url, threshold_cost=156.01)  # idle cost is $156.00

    first = webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)
    again = webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert (first.status, again.status) == ("below_threshold", "already_claimed")
    assert receiver.posts == []
    [delivery] = WebhookDelivery.objects.all()
    assert delivery.skipped_reason == "below threshold: idle cost $156.00 < $156.01"


def test_it_releases_the_claim_when_the_receiver_is_unreachable(receiver: Any) -> None:
    period = with_webhook(f"http://127.0.0.1:{free_port()}/hooks/digest")  # nothing listens

    with pytest.raises(ConnectionError):
        webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert not WebhookDelivery.objects.exists()
    period.subscription.webhook_url = receiver.url
    period.subscription.save(update_fields=["webhook_url"])
    retried = webhook.send_webhook(
        subscription_id=period.subscription.id, period_start=PERIOD_START
    )
    assert retried.status == "sent" and len(receiver.posts) == 1


def test_it_keeps_the_period_decided_when_the_receiver_answers_an_error(
    receiver: Any,
) -> None:
    receiver.status = 500
    period = with_webhook(receiver.url)

    first = webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)
    again = webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert (first.status, again.status) == ("receiver_error", "already_claimed")
    assert len(receiver.posts) == 1  # it may have posted: never twice
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status_code, delivery.skipped_reason) == (500, "receiver answered HTTP 500")


def test_a_subscription_without_a_webhook_is_not_due(receiver: Any) -> None:
    from datetime import UTC, datetime

    make_period()

    assert webhook.due_webhooks(now=datetime(2026, 3, 10, 9, 30, tzinfo=UTC)) == []


def test_it_escapes_slack_control_sequences_in_names(receiver: Any) -> None:
    """Slack reads ``<!channel>`` as a mention and ``<url|text>`` as a link; escaped
    (``&``, ``<``, ``>`` as HTML entities, as its formatting docs require) they show as text."""
    period = with_webhook(receiver.url)
    period.cluster.name = "<https://evil.example|prod>"
    period.cluster.save(update_fields=["name"])
    period.reservations["r1"].name = "<!channel> & co"
    period.reservations["r1"].save(update_fields=["name"])

    webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text = receiver.posts[0]["text"]
    assert "<" not in text and ">" not in text
    assert "&lt;https://evil.example|prod&gt;/&lt;!channel&gt; &amp; co (team-a) $120.00" in text


def test_it_refuses_at_send_time_a_stored_url_that_resolves_to_loopback(
    receiver: Any, settings: Any
) -> None:
    """A URL saved before the check existed (or by a path that skips it) is checked again."""
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    period = with_webhook(receiver.url)

    outcome = webhook.send_webhook(
        subscription_id=period.subscription.id, period_start=PERIOD_START
    )

    assert outcome.status == "refused_address"
    assert receiver.posts == []
    delivery = WebhookDelivery.objects.get()
    assert delivery.sent_at is None
    assert delivery.skipped_reason.startswith(
        "refused: 127.0.0.1 resolves to 127.0.0.1, a loopback address"
    )


def test_it_does_not_follow_a_redirect(receiver: Any) -> None:
    """A 302 to an internal page must not turn into a request to it: the 302 is the answer."""
    receiver.status = 302
    receiver.location = "/admin/?delete=all"
    period = with_webhook(receiver.url)

    outcome = webhook.send_webhook(
        subscription_id=period.subscription.id, period_start=PERIOD_START
    )

    assert (outcome.status, outcome.detail) == ("receiver_error", "receiver answered HTTP 302")
    assert len(receiver.posts) == 1
    assert receiver.gets == []


def test_it_connects_to_the_address_it_checked_not_a_second_resolution(
    receiver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the host answers the allowed 127.0.0.1 once, then 127.0.0.2 (not
    allowed). The post reaches the receiver on 127.0.0.1, so the connection went to the
    checked address; a check followed by a connect by name would go to 127.0.0.2
    (nothing listens there: connection refused)."""
    import socket

    real_getaddrinfo = socket.getaddrinfo
    answers = iter(["127.0.0.1"])

    def rebinding_getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.rebind.test":
            host = next(answers, "127.0.0.2")
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_getaddrinfo)
    port = receiver.url.split(":")[2].split("/")[0]
    period = with_webhook(f"http://hooks.rebind.test:{port}/hooks/digest")

    outcome = webhook.send_webhook(
        subscription_id=period.subscription.id, period_start=PERIOD_START
    )

    assert outcome.status == "sent"
    assert len(receiver.posts) == 1
    assert receiver.headers[0]["Host"] == f"hooks.rebind.test:{port}"


def test_it_says_the_link_is_a_path_without_dashboard_base_url(
    receiver: Any, settings: Any
) -> None:
    period = with_webhook(receiver.url)
    settings.DASHBOARD_BASE_URL = ""

    webhook.send_webhook(subscription_id=period.subscription.id, period_start=PERIOD_START)

    lines = receiver.posts[0]["text"].splitlines()
    assert lines[-2].startswith("/clusters/")
    assert lines[-1] == (
        "(DASHBOARD_BASE_URL is not configured: the link is a path on the capacityweb server.)"
    )
