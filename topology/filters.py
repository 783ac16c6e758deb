"""FilterSets for clusters, snapshots and node groups: the page filters and the
API query parameters are these same classes (STYLE.md §4)."""

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django.db.models import Model
from django.http import Http404
from django_filters.fields import IsoDateTimeField, ModelChoiceField

from topology.models import Cluster, NodeGroup, Snapshot


class UTCDateTimeField(IsoDateTimeField):
    """An ISO 8601 time, normalised to UTC, so odd offsets (``-17:06``) never reach SQL."""

    def clean(self, value: Any) -> datetime | None:
        moment = super().clean(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(UTC)
        except OverflowError as error:
            raise forms.ValidationError("out of range") from error


class UTCDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UTCDateTimeField


# A refusal that repeats the value passes it as a param, never inside the message:
# django-filter's DRF backend formats every message with its params
# (``utils.translate_validation``: ``message % (params or ())``), so a value holding
# "%s" in the message itself was a TypeError, a 500.


class StrictBooleanField(forms.Field):
    """``true``/``false`` (or ``1``/``0``, any case); anything else is refused. django-filter's
    BooleanFilter reads an unknown value as "no filter", answering everything instead."""

    VALUES = {"true": True, "1": True, "false": False, "0": False}

    def to_python(self, value: Any) -> bool | None:
        if value in self.empty_values:
            return None
        if isinstance(value, bool):
            return value
        try:
            return self.VALUES[str(value).strip().lower()]
        except KeyError:
            refusal = forms.ValidationError("%(value)r: true or false", params={"value": value})
            raise refusal from None


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class ExistingObjectField(ModelChoiceField):
    """A row's id; an id of no row is Http404 (API and pages answer 404), not the form's
    "select a valid choice" (400): the parameter is well-formed, its object is missing."""

    def to_python(self, value: Any) -> Model | None:
        if value in self.empty_values:
            return None
        try:
            key = int(str(value))
        except ValueError:
            raise forms.ValidationError("%(value)r: not an id", params={"value": value}) from None
        found = self.queryset.filter(pk=key).first()
        if found is None:
            raise Http404(f"{self.queryset.model._meta.verbose_name} {key}: no such object")
        return found


class ExistingObjectFilter(django_filters.ModelChoiceFilter):
    """ModelChoiceFilter answering 404 for an id of no row (ExistingObjectField)."""

    field_class = ExistingObjectField


def cluster_filter(**options: Any) -> ExistingObjectFilter:
    """The ``cluster`` parameter of every FilterSet: a cluster's id, unknown → 404."""
    return ExistingObjectFilter(queryset=Cluster.objects.only("id"), **options)


class TakenAtRangeFilterSet(django_filters.FilterSet):
    """``taken_after`` (inclusive) and ``taken_before`` (exclusive) on ``taken_at``."""

    taken_after = UTCDateTimeFilter(field_name="taken_at", lookup_expr="gte")
    taken_before = UTCDateTimeFilter(field_name="taken_at", lookup_expr="lt")


class ClusterFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    enabled = StrictBooleanFilter()

    class Meta:
        model = Cluster
        fields = ["name", "source_kind", "enabled"]


class SnapshotFilterSet(TakenAtRangeFilterSet):
    cluster = cluster_filter()

    class Meta:
        model = Snapshot
        fields = ["cluster", "taken_after", "taken_before"]


class NodeGroupFilterSet(django_filters.FilterSet):
    cluster = cluster_filter()
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = NodeGroup
        fields = ["cluster", "name", "origin"]
