"""Workload mentions on every page: ``{% workload_link cluster_id "ns/name" %}`` and GPUs.

Every mention of a workload links to its page (``/clusters/<id>/workloads/<ns>/<name>/``),
as of the snapshot shown when that is not the live one.
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

register = template.Library()


@register.simple_tag
def workload_url(cluster_id: int, workload: str, snapshot_id: int | None = None) -> str:
    """The workload page's URL; a name without a namespace is in ``default``."""
    namespace, _, name = workload.partition("/")
    if not name:
        namespace, name = "default", namespace
    url = reverse("workload", args=[cluster_id, namespace, name])
    return f"{url}?{urlencode({'snapshot': snapshot_id})}" if snapshot_id else url


@register.simple_tag
def workload_link(cluster_id: int, workload: str, snapshot_id: int | None = None) -> SafeString:
    return format_html(
        '<a class="workload-link" href="{}">{}</a>',
        workload_url(cluster_id, workload, snapshot_id),
        workload,
    )


@register.filter
def gpus(value: float | int | None) -> str:
    """1 → "1", 0.5 → "0.5", 0.333 → "0.33": a share is never shown as 0 GPUs."""
    if value is None:
        return "—"
    number = float(value)
    if number.is_integer():
        return str(int(number))
    return f"{number:.2f}".rstrip("0").rstrip(".")
