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

The URL is checked when it is saved and again at every send: the host is
resolved, every address must be public (or in WEBHOOK_ALLOWED_NETWORKS), and
the post connects to one of those checked addresses, redirects not followed
(``webhook_guard``). A refused address decides the period, its reason recorded.
The text is escaped as Slack's message formatting requires (``&``, ``<``, ``>``),
so names cannot mention ``<!channel>`` or hide a link.

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

import http.client
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings

from reservations import webhook_guard
from reservations.digest import (
    DeliveryOutcome,
    DigestFigures,
    below_threshold_reason,
    claim_delivery,
    dashboard_base_url,
    digest_figures,
    due_period,
    local_time,
    period_end_for,
    period_length_days,
)
from reservations.digest_known import shown_figures
from reservations.models import Subscription, WebhookDelivery
from reservations.utilisation.digest import webhook_lines
from topology.model.money import format_money

PATH_LINK_NOTE = (
    "(DASHBOARD_BASE_URL is not configured: the link is a path on the capacityweb server.)"
)
TIMEOUT_SECONDS = 10
TOP_RESERVATIONS = 3
USER_AGENT = "capacityweb-digest-webhook"


def money(amount: float) -> str:
    return format_money(amount, settings.CURRENCY)


SLACK_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def slack_escaped(text: str) -> str:
    """``text`` as Slack shows it literally: its message formatting reads ``<...>`` as a
    mention or link and wants exactly ``&``, ``<`` and ``>`` escaped as HTML entities."""
    return text.translate(SLACK_ESCAPES)


def webhook_text(figures: DigestFigures) -> str:
    """What the period's email says first, in one message, escaped for Slack."""
    return slack_escaped(plain_text(figures))


def plain_text(figures: DigestFigures) -> str:
    """The message's lines before escaping (names as stored)."""
    zone = figures.timezone
    period = (
        f"{local_time(figures.period_start, zone)} to {local_time(figures.period_end, zone)} {zone}"
    )
    scope = f"{', '.join(figures.clusters) or 'no cluster'} ({figures.team or 'all teams'})"
    shown = shown_figures(figures)
    if not figures.has_samples:
        lines = [f"capacityweb: no samples of reserved GPUs from {period} on {scope}."]
    else:
        lines = [
            f"capacityweb: {money(figures.idle_cost)} of idle reserved GPUs "
            f"({figures.idle_gpu_hours:,.1f} GPU-h) from {period} on {scope}.",
            f"Change vs the period before: {shown['change_amount']}.",
        ]
        top = [
            f"{r.cluster}/{r.name} ({r.team or 'no team'}) {money(r.idle_cost)}"
            for r in figures.top_reservations[:TOP_RESERVATIONS]
        ]
        if top:
            lines.append("Most idle: " + "; ".join(top) + ".")
    lines.append(f"Stranded by the naive autoscaler: {shown['stranded_cost']}.")
    lines += webhook_lines(figures.utilisation)
    if link := figures.links.get("reservations"):
        lines.append(link)
        if not dashboard_base_url():  # as the email's foot says it
            lines.append(PATH_LINK_NOTE)
    return "\n".join(lines)


class WebhookPostError(Exception):
    """The connection broke after the request may have reached the receiver."""


def request_target(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def post_json(url: str, body: dict[str, str]) -> int:
    """POST ``body`` as JSON to a checked address of ``url``'s host (webhook_guard); the
    receiver's status, an error or a redirect status too (redirects are not followed).

    Raises ``UnsafeWebhookURL`` when the host resolves to an internal address, and
    ``ConnectionError`` when nothing can have reached the receiver.
    """
    try:
        connection = webhook_guard.pinned_connection(url, timeout=TIMEOUT_SECONDS)
    except webhook_guard.UnresolvedWebhookHost as error:
        raise ConnectionError(f"webhook unreachable: {error}") from error
    try:
        try:
            connection.connect()
        except OSError as error:
            raise ConnectionError(f"webhook unreachable: {error}") from error
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        try:
            connection.request("POST", request_target(url), body=payload, headers=headers)
            return int(connection.getresponse().status)
        except (OSError, http.client.HTTPException) as error:
            raise WebhookPostError(f"webhook post failed: {error}") from error
    finally:
        connection.close()


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
        reason = below_threshold_reason(figures.idle_cost, subscription.threshold_cost)
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
    except webhook_guard.UnsafeWebhookURL as error:
        reason = f"refused: {error}"[:255]
        WebhookDelivery.objects.filter(id=delivery.id).update(skipped_reason=reason)
        return DeliveryOutcome("refused_address", detail=reason)
    detail = "" if 200 <= status < 300 else f"receiver answered HTTP {status}"
    WebhookDelivery.objects.filter(id=delivery.id).update(
        sent_at=datetime.now(UTC), status_code=status, skipped_reason=detail
    )
    return DeliveryOutcome("sent" if not detail else "receiver_error", detail=detail)


TEST_PREFIX = "[test — not a scheduled digest] "


def send_test_webhook(*, subscription: Subscription, now: datetime) -> DeliveryOutcome:
    """Post the latest complete period's message now, marked as a test: no claim, no
    threshold, but the same address rules as a real post (``webhook_guard``: resolved,
    checked, connected to the checked address, no redirect followed).

    Outcomes: ``sent`` (2xx), ``receiver_error`` (any other status), ``no_webhook``,
    ``refused_address``, ``unreachable`` (nothing can have reached the receiver) and
    ``post_failed`` (the connection broke after the request may have been sent).
    """
    if not subscription.webhook_url:
        return DeliveryOutcome("no_webhook", detail="this subscription has no webhook_url")
    period_start, period_end = due_period(subscription, now)
    figures = digest_figures(subscription, period_start, period_end)
    body = {"text": TEST_PREFIX + webhook_text(figures)}
    try:
        status = post_json(subscription.webhook_url, body)
    except webhook_guard.UnsafeWebhookURL as error:
        return DeliveryOutcome("refused_address", detail=f"refused: {error}")
    except ConnectionError as error:
        return DeliveryOutcome("unreachable", detail=str(error))
    except WebhookPostError as error:
        return DeliveryOutcome("post_failed", detail=str(error))
    if 200 <= status < 300:
        return DeliveryOutcome("sent", detail=f"receiver answered HTTP {status}")
    return DeliveryOutcome("receiver_error", detail=f"receiver answered HTTP {status}")


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
