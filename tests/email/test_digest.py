"""The idle-waste digest as a recipient gets it, through a real SMTP server.

Figures of the fixture period [03-09 08:00, 03-10 08:00) UTC, by hand:
  r1: the 06:00 sample (4 idle, $10/h) carries in: 08:00→14:00 6 h → 24 GPU-h, $60;
      14:00 (2, $5/h) → 02:00 12 h → 24 GPU-h, $60; 02:00 (0) → 08:00: 0.
      = 48 GPU-h, $120
  r2: nothing known before 20:00; 20:00 (3, $3/h) → 08:00 12 h → 36 GPU-h, $36
  total 84 GPU-h, $156
  previous period [03-08 08:00, 03-09 08:00): r1 08:00 (1, $2.5/h) → 06:00 22 h → 22 GPU-h,
      $55; 06:00 (4, $10/h) → 08:00 2 h → 8 GPU-h, $20 = 30 GPU-h, $75
  change +$81 = 81 / 75 = +108.0 %
  evaluations: 08:00→20:00 12 h at (30, 20, 10) $/h, 20:00→08:00 12 h at (12, 8, 4)
      naive 360 + 144 = $504, joint 240 + 96 = $336, stranded 120 + 48 = $168
"""

import logging
from datetime import UTC, datetime

import pytest
from digest_period import NOW, PERIOD_START, make_period, text_and_html

from reservations import digest, tasks
from reservations.models import DigestDelivery, Subscription

pytestmark = pytest.mark.django_db


def test_it_delivers_a_digest_with_a_text_and_an_html_part(smtp_server):
    period = make_period()

    outcome = digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert outcome.status == "sent"
    assert len(smtp_server.messages) == 1
    text, html = text_and_html(smtp_server.messages[0])
    assert "Idle reserved GPU-hours: 84.0" in text
    assert "<html" in html and "$156.00" in html


def test_it_states_the_period_totals_and_the_change_versus_the_period_before(smtp_server):
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text, _ = text_and_html(smtp_server.messages[0])
    assert "Idle reserved cost: $156.00" in text
    assert "Previous period: 30.0 GPU-h, $75.00" in text
    assert "Change: +$81.00 (+108.0%)" in text


def test_it_ranks_the_top_idle_reservations_by_cost(smtp_server):
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text, html = text_and_html(smtp_server.messages[0])
    assert "1. prod-gpu/r1 (team-a): 48.0 GPU-h, $120.00" in text
    assert "2. prod-gpu/r2 (team-b): 36.0 GPU-h, $36.00" in text
    assert html.index("prod-gpu/r1") < html.index("prod-gpu/r2")


def test_it_reports_the_naive_autoscalers_stranded_cost(smtp_server):
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text, _ = text_and_html(smtp_server.messages[0])
    assert "Stranded by the naive autoscaler: $168.00" in text
    assert "Naive autoscaler spend: $504.00" in text
    assert "Joint (capacityweb) spend: $336.00" in text


def test_it_links_back_to_the_dashboard(smtp_server, client):
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    text, html = text_and_html(smtp_server.messages[0])
    path = f"/clusters/{period.cluster.id}/reservations/"
    link = (
        f"https://capacity.example.test{path}?range=custom&start=2026-03-09T08%3A00%3A00%2B00%3A00"
    )
    assert link in text
    assert f'href="https://capacity.example.test{path}?' in html
    client.force_login(period.user)
    query = link.split("?", 1)[1]
    assert client.get(f"{path}?{query}").status_code == 200


@pytest.mark.browser
def test_it_inlines_the_chart_as_a_png_the_html_references(smtp_server):
    period = make_period()

    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    message = smtp_server.messages[0]
    images = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert message.get_content_type() == "multipart/related"
    assert len(images) == 1 and images[0]["Content-ID"] == "<idle-chart>"
    assert images[0].get_payload(decode=True).startswith(b"\x89PNG")
    assert 'src="cid:idle-chart"' in text_and_html(message)[1]


def test_it_sends_the_table_without_a_chart_and_logs_why_when_there_is_no_chromium(
    smtp_server, monkeypatch, caplog
):
    period = make_period()
    monkeypatch.setenv("CHROMIUM_PATH", "/nonexistent/chromium")

    with caplog.at_level(logging.WARNING, logger="reservations.digest"):
        outcome = digest.send_digest(
            subscription_id=period.subscription.id, period_start=PERIOD_START
        )

    message = smtp_server.messages[0]
    html = text_and_html(message)[1]
    assert outcome.status == "sent"
    assert [part for part in message.walk() if part.get_content_type() == "image/png"] == []
    assert "cid:idle-chart" not in html
    assert html.index("prod-gpu/r1") < html.index("prod-gpu/r2")  # the figures, as a table
    assert "digest chart not rendered (CHROMIUM_PATH=/nonexistent/chromium" in caplog.text


def test_it_sends_once_when_the_task_runs_twice_for_the_same_period(smtp_server):
    period = make_period()

    first = tasks.send_digest(period.subscription.id, PERIOD_START.isoformat())
    second = tasks.send_digest(period.subscription.id, PERIOD_START.isoformat())

    assert (first, second) == ("sent", "already_claimed")
    assert len(smtp_server.messages) == 1
    delivery = DigestDelivery.objects.get(subscription=period.subscription)
    assert delivery.sent_at is not None
    assert delivery.message_id == smtp_server.messages[0]["Message-ID"]


def test_it_sends_once_when_the_beat_task_runs_twice(smtp_server):
    from capacityweb.celery import app

    make_period()
    app.conf.task_always_eager = True
    try:
        tasks.send_due_digests()
        tasks.send_due_digests()
    finally:
        app.conf.task_always_eager = False

    assert len(smtp_server.messages) == 1


def test_it_sends_nothing_when_idle_cost_is_below_the_threshold(smtp_server):
    period = make_period(threshold_cost=156.01)  # the period's idle cost is $156.00

    outcome = digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert outcome.status == "below_threshold"
    assert smtp_server.messages == []
    [delivery] = DigestDelivery.objects.all()
    assert (delivery.sent_at, delivery.message_id) == (None, "")
    assert delivery.skipped_reason == "below threshold: idle cost $156.00 < $156.01"


def test_it_decides_a_period_below_the_threshold_once(smtp_server):
    period = make_period(threshold_cost=156.01)
    digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    again = digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert again.status == "already_claimed"
    assert DigestDelivery.objects.count() == 1


def test_it_releases_the_claim_when_the_mail_server_is_unreachable(smtp_server, settings):
    period = make_period()
    settings.EMAIL_PORT = 1  # nothing listens there: refused before any byte is sent

    with pytest.raises(OSError):
        digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)

    assert not DigestDelivery.objects.exists()


def test_it_sends_a_test_email_from_the_api(smtp_server, client):
    period = make_period()
    client.force_login(period.user)

    response = client.post(f"/api/v1/subscriptions/{period.subscription.id}/test-email/")

    assert response.status_code == 200, response.content
    assert smtp_server.messages[0]["Subject"].startswith("[test] capacityweb:")
    assert not DigestDelivery.objects.exists()


def test_it_picks_the_last_complete_daily_period_in_the_subscribers_time_zone():
    subscription = Subscription(cadence="daily", timezone="Europe/Berlin", hour=8)

    start, end = digest.due_period(subscription, datetime(2026, 3, 10, 6, 30, tzinfo=UTC))

    # 06:30 UTC = 07:30 Berlin (UTC+1), before today's 08:00: the period ends yesterday 08:00
    assert (start, end) == (
        datetime(2026, 3, 8, 7, tzinfo=UTC),
        datetime(2026, 3, 9, 7, tzinfo=UTC),
    )


def test_it_picks_the_last_complete_weekly_period_ending_on_the_weekday():
    subscription = Subscription(cadence="weekly", timezone="UTC", hour=8, weekday=0)

    start, end = digest.due_period(subscription, NOW)  # Tuesday 2026-03-10

    monday_before, monday = datetime(2026, 3, 2, 8, tzinfo=UTC), datetime(2026, 3, 9, 8, tzinfo=UTC)
    assert (start, end) == (monday_before, monday)


def test_it_schedules_the_due_digests_every_15_minutes():
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(task="reservations.tasks.send_due_digests")

    assert (task.interval.every, task.interval.period, task.enabled) == (15, "minutes", True)


def test_it_sends_a_test_email_from_the_reservations_page(smtp_server, client):
    period = make_period()
    client.force_login(period.user)
    page = client.get(f"/clusters/{period.cluster.id}/reservations/")
    button = f"/clusters/{period.cluster.id}/subscriptions/{period.subscription.id}/test-email/"
    assert button in page.content.decode()

    response = client.post(button, follow=True)

    assert response.status_code == 200
    assert "Test email: sent" in response.content.decode()
    assert smtp_server.messages[0]["Subject"].startswith("[test] capacityweb:")
    assert not DigestDelivery.objects.exists()


def test_it_refuses_a_test_email_for_another_users_subscription(smtp_server, client):
    from django.contrib.auth.models import User

    period = make_period()
    client.force_login(User.objects.create_user("intruder"))

    url = f"/clusters/{period.cluster.id}/subscriptions/{period.subscription.id}/test-email/"

    assert client.post(url).status_code == 404
    assert smtp_server.messages == []


def test_it_answers_503_when_the_mail_server_refuses_a_test_email_from_the_api(settings, client):
    period = make_period()
    client.force_login(period.user)
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 1  # nothing listens there

    response = client.post(f"/api/v1/subscriptions/{period.subscription.id}/test-email/")

    assert response.status_code == 503
    assert response.json()["detail"].startswith("mail server unavailable: ")


def test_it_says_the_test_email_was_not_sent_when_the_mail_server_refuses(settings, client):
    period = make_period()
    client.force_login(period.user)
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 1
    button = f"/clusters/{period.cluster.id}/subscriptions/{period.subscription.id}/test-email/"

    response = client.post(button, follow=True)

    assert response.status_code == 200
    assert "Test email not sent: mail server unavailable: " in response.content.decode()
