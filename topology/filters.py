"""FilterSets for clusters, snapshots and node groups: the page filters and the
API query parameters are these same classes (STYLE.md §4)."""

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django_filters.fields import IsoDateTimeField

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


class TakenAtRangeFilterSet(django_filters.FilterSet):
    """``taken_after`` (inclusive) and ``taken_before`` (exclusive) on ``taken_at``."""

    taken_after = UTCDateTimeFilter(field_name="taken_at", lookup_expr="gte")
    taken_before = UTCDateTimeFilter(field_name="taken_at", lookup_expr="lt")


class ClusterFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Cluster
        fields = ["name", "source_kind", "enabled"]


class SnapshotFilterSet(TakenAtRangeFilterSet):
    class Meta:
        model = Snapshot
        fields = ["cluster", "taken_after", "taken_before"]


class NodeGroupFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = NodeGroup
        fields = ["cluster", "name", "origin"]
