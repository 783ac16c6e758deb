"""The idle-waste digest as a chat message: one Slack-compatible webhook post per period.

::

    Subscription.webhook_url (blank: no post)
        │ due_webhooks(now)        the same latest complete period as the email
        ▼
    digest_figures()               the email's figures (reservations.digest)
        │
    webhook_text()                 one line of plain text, money in settings.CURRENCY
        ▼
    send_webhook()                 CLAIM (WebhookDelivery, UNIQUE subscription+period),
                                   commit, then POST {"text": ...}, record the status

The email's exactly-once rule, applied to its own delivery rows: a period is
claimed before anything is sent, so a second run, a redelivered task or the
beat firing twice finds the claim and posts nothing. At most once: a worker
that dies after the claim leaves a claimed, unsent row (visible in admin)
rather than a duplicate in the channel. A receiver that cannot be reached at
all (connection refused, unknown host) has received nothing, so the claim is
released and the task's next run tries again; a receiver that answered, even
with an error status, may have posted, so that period stays decided.

Slack's incoming webhooks take ``{"text": ...}``; Mattermost, Rocket.Chat,
Microsoft Teams' "incoming webhook" workflows and most chat bridges accept the
same body.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

from django.conf import settings

from reservations.digest import (
    DeliveryOutcome,
    DigestFigures,
    claim_delivery,
    digest_figures,
    due_period,
    local_time,
    period_end_for,
    period_length_days,
)
from reservations.models import Subscription, WebhookDelivery
from reservations.utilisation_digest import webhook_lines
from topology.money import format_money

TIMEOUT_SECONDS = 10
TOP_RESERVATIONS = 3
USER_AGENT = "capacityweb-digest-webhook"


def money(amount: float) -> str:
    return format_money(amount, settings.CURRENCY)


def webhook_text(figures: DigestFigures) -> str:
    """What the period's email says first, in one message."""
    zone = figures.timezone
    period = (
        f"{local_time(figures.period_start, zone)} to {local_time(figures.period_end, zone)} {zone}"
    )
    scope = f"{', '.join(figures.clusters) or 'no cluster'} ({figures.team or 'all teams'})"
    if not figures.has_samples:
        lines = [f"capacityweb: no samples of reserved GPUs from {period} on {scope}."]
    else:
        change = figures.idle_cost_change
        lines = [
            f"capacityweb: {money(figures.idle_cost)} of idle reserved GPUs "
            f"({figures.idle_gpu_hours:,.1f} GPU-h) from {period} on {scope}.",
            f"Change vs the period before: {'+' if change >= 0 else '-'}{money(abs(change))}.",
        ]
        top = [
            f"{r.cluster}/{r.name} ({r.team or 'no team'}) {money(r.idle_cost)}"
            for r in figures.top_reservations[:TOP_RESERVATIONS]
        ]
        if top:
            lines.append("Most idle: " + "; ".join(top) + ".")
    lines.append(f"Stranded by the naive autoscaler: {money(figures.stranded_cost)}.")
    lines += webhook_lines(figures.utilisation)
    if link := figures.links.get("reservations"):
        lines.append(link)
    return "\n".join(lines)


def post_json(url: str, body: dict[str, str]) -> int:
    """POST ``body`` as JSON; the receiver's status (an error status too). Raises
    ``ConnectionError`` when nothing can have reached the receiver."""
    request = urllib.request.Request(  # noqa: S310 - an http(s) URLField, validated on save
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except urllib.error.URLError as error:
        if isinstance(error.reason, ConnectionRefusedError | socket.gaierror):
            raise ConnectionError(f"webhook unreachable: {error.reason}") from error
        raise


def send_webhook(*, subscription_id: int, period_start: datetime) -> DeliveryOutcome:
    """Post one subscription's digest for one period, at most once (module docstring)."""
    subscription = Subscription.objects.get(id=subscription_id)
    if not subscription.active:
        return DeliveryOutcome("inactive")
    if not subscription.webhook_url:
        return DeliveryOutcome("no_webhook")
    if WebhookDelivery.objects.filter(
        subscription=subscription, period_start=period_start
    ).exists():
        return DeliveryOutcome("already_claimed")
    period_end = period_end_for(subscription, period_start)
    figures = digest_figures(subscription, period_start, period_end)
    claim = {
        "subscription_id": subscription.id,
        "period_start": period_start,
        "period_end": period_end,
        "model": WebhookDelivery,
    }
    if figures.idle_cost < subscription.threshold_cost:
        skipped = claim_delivery(**claim)
        if skipped is None:
            return DeliveryOutcome("already_claimed")
        reason = (
            f"below threshold: idle cost {figures.idle_cost:.2f} "
            f"< {subscription.threshold_cost:.2f}"
        )
        WebhookDelivery.objects.filter(id=skipped.id).update(skipped_reason=reason)
        return DeliveryOutcome("below_threshold", detail=reason)
    delivery = claim_delivery(**claim)
    if delivery is None:
        return DeliveryOutcome("already_claimed")
    try:
        status = post_json(subscription.webhook_url, {"text": webhook_text(figures)})
    except ConnectionError:
        delivery.delete()  # nothing can have been posted: free the period for the next run
        raise
    detail = "" if 200 <= status < 300 else f"receiver answered HTTP {status}"
    WebhookDelivery.objects.filter(id=delivery.id).update(
        sent_at=datetime.now(UTC), status_code=status, skipped_reason=detail
    )
    return DeliveryOutcome("sent" if not detail else "receiver_error", detail=detail)


def due_webhooks(*, now: datetime) -> list[tuple[int, datetime]]:
    """(subscription id, period start) of every active webhook whose period is unclaimed."""
    subscriptions = Subscription.objects.filter(active=True).exclude(webhook_url="").order_by("id")
    recent = now - timedelta(days=2 * period_length_days(Subscription.Cadence.WEEKLY))
    claimed = set(
        WebhookDelivery.objects.filter(
            subscription__in=subscriptions, period_start__gte=recent
        ).values_list("subscription_id", "period_start")
    )
    due = []
    for subscription in subscriptions:
        period_start, _ = due_period(subscription, now)
        if (subscription.id, period_start) not in claimed:
            due.append((subscription.id, period_start))
    return due
