"""The reservations page: idle reserved GPUs, GPU-hours and $ per reservation and team.

The range is ``?range=24h|7d|30d`` (ending now, or at the chosen snapshot when
browsing history) or ``?range=custom&start=…&end=…``. The figures come from the
same report selector and FilterSet as the API's idle-reservations report, whose
CSV the page links to.

Custom start and end come from ``datetime-local`` inputs, which carry no zone:
they are read in the page's time zone (``?tz=``, an IANA name; default the
DASHBOARD_TIME_ZONE setting) and the page says which. A wall time the zone's
clocks skip (a spring-forward hour) is refused with the reason; one they pass
twice (fall back) is its first occurrence. A value with an offset keeps it.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from capacityweb import visibility
from capacityweb.api.throttling import allow_scoped
from recommender.views import cluster_page, page_labels
from reservations import charts, digest, selectors, webhook
from reservations.filters import IdleReportFilterSet
from reservations.models import IdleSample, Subscription

RANGES = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
DEFAULT_RANGE = "7d"


class RangeError(ValueError):
    """A range parameter that cannot be read: the field and the reason."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def requested_zone(request: HttpRequest) -> ZoneInfo:
    name = request.GET.get("tz", "").strip() or settings.DASHBOARD_TIME_ZONE
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise RangeError("tz", f"{name!r} is not an IANA time zone") from error


def local_to_utc(field: str, text: str, zone: ZoneInfo) -> str:
    """A ``datetime-local`` value read in ``zone`` → ISO 8601 in UTC ('' stays '')."""
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text  # the FilterSet names the field and the expected format
    if moment.tzinfo is not None:
        return moment.astimezone(UTC).isoformat()
    local = moment.replace(tzinfo=zone)
    if local.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != moment:
        raise RangeError(field, f"{text} does not exist in {zone.key} (the clocks skip it)")
    return local.astimezone(UTC).isoformat()


def requested_range(
    request: HttpRequest, end: datetime, zone: ZoneInfo
) -> tuple[str, dict[str, str]]:
    """The chosen range's name and the report parameters (start/end, ISO) it stands for."""
    name = request.GET.get("range", DEFAULT_RANGE)
    if name == "custom":
        return name, {
            field: local_to_utc(field, request.GET.get(field, ""), zone)
            for field in ("start", "end")
        }
    if name not in RANGES:
        name = DEFAULT_RANGE
    return name, {"start": (end - RANGES[name]).isoformat(), "end": end.isoformat()}


def idle_series(
    cluster_id: int, start: datetime, end: datetime, viewer: visibility.Viewer
) -> dict[str, list[tuple[datetime, int]]]:
    """Idle GPUs per reservation name, from the samples that cover [start, end); other
    teams' reservations summed into one ``reserved (another team)`` line (each sample of
    an evaluation is taken at its time, so the sums line up)."""
    reservations = selectors.reservations_for_report(cluster_ids=[cluster_id])
    names = {
        pk: name if viewer.sees(owners) else visibility.OTHER_TEAM
        for pk, name, owners in reservations.values_list("id", "name", "owner_namespaces")
    }
    summed: dict[str, dict[datetime, int]] = defaultdict(lambda: defaultdict(int))
    for reservation_id, taken_at, _reserved, idle, _cost in selectors.samples_in_range(
        reservations, start, end
    ):
        summed[names[reservation_id]][taken_at] += idle
    return {name: sorted(points.items()) for name, points in summed.items()}


def reservation_reusers(result: dict[str, Any], labels: Any) -> list[tuple[str, list[str]]]:
    """Reservation → the pending workloads the joint plan runs on it, by name (as the
    viewer may read it)."""
    reusers: dict[str, list[str]] = {}
    for workload in result.get("workloads") or []:
        for name in (workload.get("joint") or {}).get("reservations") or []:
            reusers.setdefault(labels.label(name), []).append(workload["name"])
    return sorted(reusers.items())


@login_required
def reservations_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    page = cluster_page(request, cluster_id)
    range_end = (
        timezone.now() if page.is_latest or page.snapshot is None else page.snapshot.taken_at
    )
    context = page.context("reservations")
    context.update(
        {
            "range_name": request.GET.get("range", DEFAULT_RANGE),
            "range_choices": [*RANGES, "custom"],
            "custom_start": request.GET.get("start", ""),
            "custom_end": request.GET.get("end", ""),
            "tz": request.GET.get("tz", "").strip() or settings.DASHBOARD_TIME_ZONE,
            "range_errors": {},
        }
    )
    try:
        zone = requested_zone(request)
        range_name, parameters = requested_range(request, range_end, zone)
    except RangeError as error:
        context["range_errors"] = {error.field: [error.reason]}
        return render(request, "dashboard/reservations.html", context, status=400)
    data = {"cluster": str(cluster_id), **{k: v for k, v in parameters.items() if v}}
    filterset = IdleReportFilterSet(data, queryset=IdleSample.objects.none())
    context["range_name"] = range_name
    if not filterset.is_valid():
        context["range_errors"] = filterset.errors
        return render(request, "dashboard/reservations.html", context, status=400)
    viewer = visibility.request_viewer(request)
    labels = page_labels(request, page.evaluation)
    arguments = {**filterset.report_arguments(), "viewer": viewer}
    start, end = arguments["start"], arguments["end"]
    by_reservation = selectors.idle_report(**{**arguments, "group_by": "reservation"})
    by_team = selectors.idle_report(**{**arguments, "group_by": "team"})
    series = idle_series(cluster_id, start, end, viewer)
    result: dict[str, Any] = page.evaluation.result if page.evaluation else {}
    idle_now = visibility.idle_reservations(result.get("idleReservations") or [], labels)
    context.update(
        {
            "start": start,
            "end": end,
            # strings: the template would convert a datetime back to the server's zone
            "start_local": f"{start.astimezone(zone):%Y-%m-%d %H:%M}",
            "end_local": f"{end.astimezone(zone):%Y-%m-%d %H:%M}",
            "by_reservation": by_reservation,
            "by_team": by_team,
            "idle_now": idle_now,
            # the $/h the idle reservations the viewer sees cost now, beside the period's total
            "idle_per_hour_now": sum(r["costPerHour"] or 0.0 for r in idle_now),
            "reusers": reservation_reusers(result, labels),
            "subscriptions": Subscription.objects.filter(
                user=request.user, clusters=cluster_id
            ).order_by("id"),
            "chart": charts.idle_over_time_figure(series, start=start, end=end),
            "csv_url": reverse("report-idle-reservations")
            + "?"
            + urlencode(
                {
                    "format": "csv",
                    "cluster": cluster_id,
                    "start": start.isoformat(),
                    "end": end.isoformat(),
                    "group_by": "reservation",
                }
            ),
        }
    )
    return render(request, "dashboard/reservations.html", context)


@login_required
@require_POST
def send_test_email(request: HttpRequest, cluster_id: int, subscription_id: int) -> HttpResponse:
    """The page's "Send test email" button: the same service and rate (``test-sends``, per
    user) as the API's test-email action."""
    subscription = get_object_or_404(Subscription, pk=subscription_id, user=request.user)
    allowed, wait_seconds = allow_scoped(request, "test-sends")
    if not allowed:
        messages.error(
            request, f"Test email not sent: too many test sends; try again in {wait_seconds:.0f} s."
        )
        return redirect("reservations", cluster_id=cluster_id)
    outcome = digest.send_test_email(subscription=subscription, now=timezone.now())
    if outcome.status == "mail_server_unavailable":
        messages.error(request, f"Test email not sent: {outcome.detail}")
    else:
        messages.success(request, f"Test email: {outcome.status} ({outcome.message_id}).")
    return redirect("reservations", cluster_id=cluster_id)


@login_required
@require_POST
def send_test_webhook(request: HttpRequest, cluster_id: int, subscription_id: int) -> HttpResponse:
    """The page's "Send test webhook" button: the API's test-webhook action (same service,
    same address rules, same ``test-sends`` rate per user as the test emails)."""
    subscription = get_object_or_404(Subscription, pk=subscription_id, user=request.user)
    allowed, wait_seconds = allow_scoped(request, "test-sends")
    if not allowed:
        messages.error(
            request,
            f"Test webhook not sent: too many test sends; try again in {wait_seconds:.0f} s.",
        )
        return redirect("reservations", cluster_id=cluster_id)
    outcome = webhook.send_test_webhook(subscription=subscription, now=timezone.now())
    if outcome.status == "sent":
        messages.success(request, f"Test webhook: sent ({outcome.detail}).")
    else:
        messages.error(
            request, f"Test webhook: {outcome.status.replace('_', ' ')}: {outcome.detail}"
        )
    return redirect("reservations", cluster_id=cluster_id)
