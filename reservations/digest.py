"""The idle-GPU-waste digest: which period is due, its figures, the email, and sending it once.

::

    Subscription (cadence, time zone, hour, weekday)
        │ due_period(now)         the latest complete period: [previous due, last due)
        ▼
    digest_figures()              idle GPU-hours and $ (IdleSample), change vs the
        │                         period before, stranded $ of the naive autoscaler
        ▼
    build_message()               text + HTML (inline CSS, tables) + inline PNG chart
        │
    send_digest()                 CLAIM, then send (at most once per period):
        1. one transaction: lock the subscription row, insert the DigestDelivery
           (UNIQUE subscription, period_start) — a second run finds the row and stops
        2. commit; only then talk to SMTP
        3. record sent_at and the Message-ID
       A period below the subscription's threshold is claimed too, with the
       reason in ``skipped_reason``: it is decided once, and admin shows why
       no email went out.

At-most-once, deliberately: a worker that dies between the commit and the
SMTP exchange leaves a claimed delivery with ``sent_at`` empty and no email —
a missed digest, visible in admin — rather than a second copy in every inbox
each time a redelivered task runs. If the SMTP server cannot even be reached
the claim is released, because then nothing can have been sent.
"""

from __future__ import annotations

import logging
import re
import smtplib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from email.mime.image import MIMEImage
from typing import Any, TypeVar
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse

from capacityweb import visibility
from capacityweb.browser import chromium_path, missing_chromium_message
from reservations.digest_figures import DigestFigures
from reservations.digest_known import shown_figures
from reservations.models import DigestDelivery, Subscription, WebhookDelivery
from reservations.moves_digest import moves_context, period_move_savings
from reservations.selectors import (
    evaluations_in_range,
    reservation_idle,
    reservations_for_report,
    waste_report,
)
from reservations.utilisation.digest import utilisation_context
from reservations.utilisation.selectors import period_utilisation
from topology.model.money import format_money

logger = logging.getLogger(__name__)
Delivery = TypeVar("Delivery", DigestDelivery, WebhookDelivery)
CHART_ATTEMPTS = 2

TOP_RESERVATIONS = 5
CHART_CONTENT_ID = "idle-chart"
MESSAGE_ID_DOMAIN = "capacityweb"
RECIPIENT_SEPARATORS = re.compile(r"[\s,;]+")


# --- periods -------------------------------------------------------------------------


def period_length_days(cadence: str) -> int:
    return 7 if cadence == Subscription.Cadence.WEEKLY else 1


def zone_name(subscription: Subscription) -> str:
    """The subscription's IANA time zone; UTC when it has none (and the email says UTC)."""
    return subscription.timezone or "UTC"


def _local_due(day: date, hour: int, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(hour=hour), tzinfo=zone)


def due_period(subscription: Subscription, now: datetime) -> tuple[datetime, datetime]:
    """The latest complete period at ``now``, in UTC: it ends at the last due moment.

    Due moments are ``hour`` o'clock local time every day (daily) or on
    ``weekday`` (weekly, 0 = Monday). Periods are counted in local calendar
    days, so a daily period across a DST change is 23 or 25 hours long.
    """
    zone = ZoneInfo(zone_name(subscription))
    local_now = now.astimezone(zone)
    days = period_length_days(subscription.cadence)
    day = local_now.date()
    if days == 7:
        day -= timedelta(days=(day.weekday() - subscription.weekday) % 7)
    end = _local_due(day, subscription.hour, zone)
    if end > local_now:
        end = _local_due(day - timedelta(days=days), subscription.hour, zone)
    start = _local_due(end.date() - timedelta(days=days), subscription.hour, zone)
    return start.astimezone(UTC), end.astimezone(UTC)


def period_end_for(subscription: Subscription, period_start: datetime) -> datetime:
    """The end of the period that starts at ``period_start`` (same local hour, days later)."""
    zone = ZoneInfo(zone_name(subscription))
    local_start = period_start.astimezone(zone)
    days = period_length_days(subscription.cadence)
    end = _local_due(local_start.date() + timedelta(days=days), local_start.hour, zone)
    return end.astimezone(UTC)


# --- figures ---------------------------------------------------------------------------


def digest_figures(
    subscription: Subscription, period_start: datetime, period_end: datetime
) -> DigestFigures:
    """Figures for one subscription and period, and for the same length of time before it."""
    clusters = list(subscription.clusters.order_by("name").values_list("id", "name"))
    cluster_ids = [cluster_id for cluster_id, _ in clusters]
    reservations = reservations_for_report(cluster_ids=cluster_ids, team=subscription.team)
    current = reservation_idle(reservations, period_start, period_end)
    previous_start = period_start - (period_end - period_start)
    previous = reservation_idle(reservations, previous_start, period_start)
    waste = waste_report(start=period_start, end=period_end, cluster_ids=cluster_ids)["totals"]
    # the subscriber's view (capacityweb.visibility), as in the idle report: every
    # GPU-hour counts, other teams' reservations are not named and their $ not told
    viewer = visibility.viewer_of(subscription.user)
    seen_now = [row for row in current if viewer.sees(row.owners)]
    seen_before = [row for row in previous if viewer.sees(row.owners)]
    top = sorted(
        (row for row in seen_now if row.idle_gpu_hours > 0),
        key=lambda row: (-row.idle_cost, row.cluster, row.name),
    )[:TOP_RESERVATIONS]
    return DigestFigures(
        period_start=period_start,
        period_end=period_end,
        timezone=zone_name(subscription),
        clusters=tuple(name for _, name in clusters),
        team=subscription.team,
        sampled_reserved_gpu_hours=round(sum(row.reserved_gpu_hours for row in current), 6),
        idle_gpu_hours=round(sum(row.idle_gpu_hours for row in current), 6),
        idle_cost=round(sum(row.idle_cost for row in seen_now), 6),
        previous_idle_gpu_hours=round(sum(row.idle_gpu_hours for row in previous), 6),
        previous_idle_cost=round(sum(row.idle_cost for row in seen_before), 6),
        previous_sampled_reserved_gpu_hours=round(
            sum(row.reserved_gpu_hours for row in previous), 6
        ),
        has_evaluations=evaluations_in_range(cluster_ids, period_start, period_end).exists(),
        stranded_cost=waste["stranded_cost"],
        naive_cost=waste["naive_cost"],
        joint_cost=waste["joint_cost"],
        top_reservations=tuple(top),
        links=dashboard_links(cluster_ids, period_start, period_end),
        utilisation=period_utilisation(
            cluster_ids=cluster_ids, start=period_start, end=period_end, team=subscription.team
        ),
        moves=period_move_savings(cluster_ids=cluster_ids, end=period_end, team=subscription.team),
    )


def dashboard_links(
    cluster_ids: list[int], period_start: datetime, period_end: datetime
) -> dict[str, str]:
    """Links back to the dashboard for this period: absolute under DASHBOARD_BASE_URL.

    A scheduled digest has no request to take the server's address from, so
    without DASHBOARD_BASE_URL the links are paths, and the email says so
    (``links_are_paths``) rather than guessing a host and port.

    The pages are per cluster; a digest over several clusters links to the
    overview, which lists them all.
    """
    base = dashboard_base_url()
    overview = f"{base}{reverse('overview')}"
    if len(cluster_ids) != 1:
        return {"overview": overview, "reservations": overview, "recommendations": overview}
    query = urlencode(
        {"range": "custom", "start": period_start.isoformat(), "end": period_end.isoformat()}
    )
    cluster_id = cluster_ids[0]
    return {
        "overview": overview,
        "reservations": f"{base}{reverse('reservations', args=[cluster_id])}?{query}",
        "recommendations": f"{base}{reverse('recommendations', args=[cluster_id])}",
    }


def dashboard_base_url() -> str:
    """DASHBOARD_BASE_URL without its trailing slash; empty when it is not configured."""
    return str(settings.DASHBOARD_BASE_URL).strip().rstrip("/")


# --- rendering --------------------------------------------------------------------------


def idle_cost_figure(figures: DigestFigures) -> dict[str, Any]:
    """A Plotly figure dict: idle $ per top reservation, one horizontal bar each."""
    rows = list(reversed(figures.top_reservations))
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "x": [round(row.idle_cost, 2) for row in rows],
                "y": [f"{row.cluster}/{row.name}" for row in rows],
                "marker": {"color": "#c0392b"},
                "name": "idle $",
            }
        ],
        "layout": {
            "title": {"text": "Idle reserved GPU cost in the period ($)"},
            "margin": {"l": 160, "r": 20, "t": 40, "b": 30},
            "showlegend": False,
            "plot_bgcolor": "#ffffff",
            "paper_bgcolor": "#ffffff",
        },
    }


def render_chart_png(figures: DigestFigures) -> bytes | None:
    """The chart as PNG via kaleido in capacityweb.browser's Chromium; None when it cannot.

    Kaleido is given the browser path itself (on its own it looks only on PATH
    and in its download folder), so it draws in the Chromium CHROMIUM_PATH names.
    With no Chromium at all, no render is tried and the log says so. Kaleido can
    run its script before its page has loaded it ("kaleido_scopes is not
    defined") on a busy machine, so a failed render is tried once more.

    The HTML part always carries the same figures as a table, so a digest
    without the image loses nothing but the picture.
    """
    if not figures.top_reservations:
        return None
    browser = chromium_path()
    if browser is None:
        message = missing_chromium_message()
        logger.warning("digest chart not rendered (%s): sending the table only", message)
        return None
    options = {"format": "png", "width": 560, "height": 120 + 40 * len(figures.top_reservations)}
    for attempt in range(1, CHART_ATTEMPTS + 1):
        try:
            import kaleido

            figure = idle_cost_figure(figures)
            return bytes(kaleido.calc_fig_sync(figure, opts=options, kopts={"path": browser}))
        except Exception:  # noqa: BLE001 — a browser that fails must not stop the email
            logger.warning("digest chart attempt %d failed", attempt, exc_info=True)
    logger.warning("digest chart not rendered; sending the table only")
    return None


def local_time(moment: datetime, zone: str) -> str:
    """``moment`` on the wall clock of the IANA zone ``zone``, as the email shows it.

    Formatted here, not with the template's ``date`` filter: Django converts an
    aware datetime to the current time zone (UTC) before a filter formats it,
    which showed UTC times labelled with the subscriber's zone.
    """
    return f"{moment.astimezone(ZoneInfo(zone)):%Y-%m-%d %H:%M}"


def digest_context(figures: DigestFigures, *, has_chart: bool, test: bool) -> dict[str, Any]:
    return {
        "figures": figures,
        "local_start": local_time(figures.period_start, figures.timezone),
        "local_end": local_time(figures.period_end, figures.timezone),
        "links_are_paths": not dashboard_base_url(),
        "clusters": ", ".join(figures.clusters) or "no clusters",
        "team": figures.team or "all teams",
        "change": figures.idle_cost_change,
        "change_percent": figures.idle_cost_change_percent,
        "shown": shown_figures(figures),
        "has_chart": has_chart,
        "chart_cid": CHART_CONTENT_ID,
        "test": test,
        **utilisation_context(figures.utilisation),
        **moves_context(figures.moves),
    }


def digest_subject(figures: DigestFigures, *, test: bool) -> str:
    prefix = "[test] " if test else ""
    since = f"since {local_time(figures.period_start, figures.timezone)} {figures.timezone}"
    if not figures.has_samples:
        return f"{prefix}capacityweb: no samples of reserved GPUs {since}"
    return (
        f"{prefix}capacityweb: {format_money(figures.idle_cost, settings.CURRENCY)} of idle "
        "reserved GPUs "
        f"({figures.idle_gpu_hours:,.1f} GPU-h) {since}"
    )


def parse_recipients(text: str) -> list[str]:
    return [address for address in RECIPIENT_SEPARATORS.split(text or "") if address]


def message_id_for(subscription_id: int, period_start: datetime, *, test: bool) -> str:
    """A Message-ID fixed by (subscription, period): a duplicate, if ever, is recognisable."""
    stamp = period_start.astimezone(UTC).strftime("%Y%m%dT%H%MZ")
    kind = "test" if test else "digest"
    suffix = f".{datetime.now(UTC):%Y%m%dT%H%M%S%f}" if test else ""
    return f"<{kind}.{subscription_id}.{stamp}{suffix}@{MESSAGE_ID_DOMAIN}>"


def build_message(
    subscription: Subscription, figures: DigestFigures, *, test: bool = False
) -> EmailMultiAlternatives:
    """The email: plain text, HTML alternative, and the chart inline (multipart/related)."""
    chart = render_chart_png(figures)
    context = digest_context(figures, has_chart=chart is not None, test=test)
    message = EmailMultiAlternatives(
        subject=digest_subject(figures, test=test),
        body=render_to_string("email/digest.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=parse_recipients(subscription.recipients),
        headers={"Message-ID": message_id_for(subscription.id, figures.period_start, test=test)},
    )
    message.attach_alternative(render_to_string("email/digest.html", context), "text/html")
    if chart is not None:
        message.mixed_subtype = "related"
        image = MIMEImage(chart, "png")
        image.add_header("Content-ID", f"<{CHART_CONTENT_ID}>")
        image.add_header("Content-Disposition", "inline", filename="idle-chart.png")
        message.attach(image)
    return message


# --- sending ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryOutcome:
    status: str  # "sent" | "already_claimed" | "below_threshold" | "inactive" | "no_recipients"
    #              | "mail_server_unavailable" (test emails only: the digest task retries)
    message_id: str = ""
    detail: str = ""


def send_digest(*, subscription_id: int, period_start: datetime) -> DeliveryOutcome:
    """Send one subscription's digest for one period, at most once (see the module docstring)."""
    subscription = Subscription.objects.get(id=subscription_id)
    if not subscription.active:
        return DeliveryOutcome("inactive")
    if not parse_recipients(subscription.recipients):
        return DeliveryOutcome("no_recipients")
    period_end = period_end_for(subscription, period_start)
    if DigestDelivery.objects.filter(subscription=subscription, period_start=period_start).exists():
        return DeliveryOutcome("already_claimed")
    figures = digest_figures(subscription, period_start, period_end)
    if figures.idle_cost < subscription.threshold_cost:
        return record_skip(subscription, period_start, period_end, figures)
    message = build_message(subscription, figures)
    delivery = claim_delivery(
        subscription_id=subscription.id, period_start=period_start, period_end=period_end
    )
    if delivery is None:
        return DeliveryOutcome("already_claimed")
    connection = get_connection()
    try:
        connection.open()
    except OSError:
        delivery.delete()  # nothing can have been sent: free the period for the next run
        raise
    try:
        connection.send_messages([message])
    finally:
        connection.close()
    message_id = message.extra_headers["Message-ID"]
    DigestDelivery.objects.filter(id=delivery.id).update(
        sent_at=datetime.now(UTC), message_id=message_id
    )
    return DeliveryOutcome("sent", message_id)


def record_skip(
    subscription: Subscription, period_start: datetime, period_end: datetime, figures: DigestFigures
) -> DeliveryOutcome:
    """Claim a below-threshold period with the reason, so it is decided once and shown in admin."""
    delivery = claim_delivery(
        subscription_id=subscription.id, period_start=period_start, period_end=period_end
    )
    if delivery is None:
        return DeliveryOutcome("already_claimed")
    reason = below_threshold_reason(figures.idle_cost, subscription.threshold_cost)
    DigestDelivery.objects.filter(id=delivery.id).update(skipped_reason=reason)
    return DeliveryOutcome("below_threshold", detail=reason)


def below_threshold_reason(idle_cost: float, threshold_cost: float) -> str:
    """Why a period was not sent (stored on the delivery, shown in admin), money in the
    house format: ``below threshold: idle cost $156.00 < $156.01``."""
    idle, threshold = (format_money(a, settings.CURRENCY) for a in (idle_cost, threshold_cost))
    return f"below threshold: idle cost {idle} < {threshold}"


def claim_delivery(
    *,
    subscription_id: int,
    period_start: datetime,
    period_end: datetime,
    model: type[Delivery] = DigestDelivery,  # type: ignore[assignment]
) -> Delivery | None:
    """Insert the delivery row (``model``: the email's, or the webhook's) and commit, or
    None when another run already has it.

    The subscription row is locked first, so two workers racing for the same
    period queue on the lock and the second sees the first one's row.
    """
    with transaction.atomic():
        Subscription.objects.select_for_update().filter(id=subscription_id).exists()
        try:
            with transaction.atomic():
                delivery, created = model.objects.get_or_create(
                    subscription_id=subscription_id,
                    period_start=period_start,
                    defaults={"period_end": period_end},
                )
        except IntegrityError:
            return None
    return delivery if created else None


def send_test_email(*, subscription: Subscription, now: datetime) -> DeliveryOutcome:
    """Send the digest of the latest complete period now: no claim, no threshold, "[test]"."""
    recipients = parse_recipients(subscription.recipients)
    if not recipients:
        return DeliveryOutcome("no_recipients")
    period_start, period_end = due_period(subscription, now)
    figures = digest_figures(subscription, period_start, period_end)
    message = build_message(subscription, figures, test=True)
    try:
        message.send(fail_silently=False)
    except (smtplib.SMTPException, OSError) as error:  # the user asked now: say why, do not raise
        return DeliveryOutcome(
            "mail_server_unavailable", detail=f"mail server unavailable: {error}"
        )
    return DeliveryOutcome("sent", message.extra_headers["Message-ID"])


def due_subscriptions(*, now: datetime) -> list[tuple[int, datetime]]:
    """(subscription id, period start) for every active subscription whose period is unsent."""
    due = []
    subscriptions = Subscription.objects.filter(active=True).order_by("id")
    recent = now - timedelta(days=2 * period_length_days(Subscription.Cadence.WEEKLY))
    claimed = set(
        DigestDelivery.objects.filter(
            subscription__in=subscriptions, period_start__gte=recent
        ).values_list("subscription_id", "period_start")
    )
    for subscription in subscriptions:
        period_start, _ = due_period(subscription, now)
        if (subscription.id, period_start) not in claimed:
            due.append((subscription.id, period_start))
    return due
