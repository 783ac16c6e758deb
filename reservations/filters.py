"""FilterSets for reservations, subscriptions and the two reports, shared by the
dashboard pages and the API (STYLE.md §4).

Report FilterSets validate the report's parameters (``form.cleaned_data``
through ``report_range``); the report itself is computed by
``reservations.selectors``.
"""

import copy
from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Any

import django_filters
from django.db.models import QuerySet
from django.utils import timezone

from recommender.models import Evaluation
from reservations.models import IdleSample, Reservation, Subscription
from reservations.selectors import GROUP_BY_CHOICES, reservations_for_report
from topology.filters import StrictBooleanFilter, UTCDateTimeFilter, cluster_filter

DEFAULT_REPORT_DAYS = 7


class ReservationFilterSet(django_filters.FilterSet):
    cluster = cluster_filter()
    name = django_filters.CharFilter(lookup_expr="icontains")
    team = django_filters.CharFilter(method="filter_team", label="Owner namespace")

    class Meta:
        model = Reservation
        fields = ["cluster", "name", "team"]

    def filter_team(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(id__in=reservations_for_report(team=value).values("id"))


class SubscriptionFilterSet(django_filters.FilterSet):
    active = StrictBooleanFilter()

    class Meta:
        model = Subscription
        fields = ["cadence", "active", "team"]


class ReportParameters(OrderedDict):
    """A report FilterSet's filters, copied for each request one level deep.

    FilterSet deep-copies its filters per instance (and with them their choices,
    querysets and field arguments): 14 % of a cached report request's CPU in
    bench.http. An instance sets only a filter's own attributes (``parent``,
    ``model``), so a shallow copy of each filter keeps instances apart; a filter
    with a ``method`` is given it again, which binds it to the copy (and so to the
    copy's parent), as the deep copy did.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> OrderedDict[str, Any]:
        copies = OrderedDict()
        for name, one in self.items():
            copies[name] = copied = copy.copy(one)
            if one.method is not None:
                copied.method = one.method
        return copies


class ReportFilterSet(django_filters.FilterSet):
    """A time range [start, end) (default: the last 7 days) and an optional cluster."""

    cluster = cluster_filter(method="filter_nothing")
    start = UTCDateTimeFilter(method="filter_nothing")
    end = UTCDateTimeFilter(method="filter_nothing")

    @classmethod
    def get_filters(cls) -> ReportParameters:
        return ReportParameters(super().get_filters())

    def filter_nothing(self, queryset: QuerySet[Any], name: str, value: Any) -> QuerySet[Any]:
        return queryset  # parameters of the report, not of the rows it starts from

    def get_form_class(self) -> type[Any]:
        """Built once per report FilterSet class, not per request: its fields depend on
        nothing of the request (django-filter builds a new form class on every call, and
        each form instance copies the fields anyway)."""
        form_class = type(self).__dict__.get("_form_class")
        if form_class is None:
            form_class = super().get_form_class()
            type(self)._form_class = form_class
        return form_class

    def clean_range(self, now: datetime) -> None:
        data = self.form.cleaned_data
        end = data.get("end") or now
        start = data.get("start") or end - timedelta(days=DEFAULT_REPORT_DAYS)
        if start >= end:
            self.form.add_error("end", "end must be after start")
        data["start"], data["end"] = start, end

    def is_valid(self) -> bool:
        if not super().is_valid():
            return False
        self.clean_range(timezone.now())
        return not self.form.errors

    def report_arguments(self) -> dict[str, Any]:
        """Keyword arguments for the report selectors (call after ``is_valid``)."""
        data = self.form.cleaned_data
        cluster = data.get("cluster")
        return {
            "start": data["start"],
            "end": data["end"],
            "cluster_ids": None if cluster is None else [cluster.id],
        }


class IdleReportFilterSet(ReportFilterSet):
    group_by = django_filters.ChoiceFilter(
        choices=[(choice, choice) for choice in GROUP_BY_CHOICES],
        method="filter_nothing",
        empty_label=None,
    )
    team = django_filters.CharFilter(method="filter_nothing", label="Owner namespace")

    class Meta:
        model = IdleSample
        fields = ["cluster", "start", "end", "group_by", "team"]

    def report_arguments(self) -> dict[str, Any]:
        data = self.form.cleaned_data
        return {
            **super().report_arguments(),
            "group_by": data.get("group_by") or "reservation",
            "team": data.get("team") or "",
        }


class WasteReportFilterSet(ReportFilterSet):
    class Meta:
        model = Evaluation
        fields = ["cluster", "start", "end"]
