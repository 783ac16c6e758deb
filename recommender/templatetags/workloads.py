"""Workload mentions on every page: ``{% workload_link cluster_id "ns/name" %}`` and GPUs.

Every mention of a workload links to its page (``/clusters/<id>/workloads/<ns>/<name>/``),
as of the snapshot shown when that is not the live one. Names come from files and traces
unchecked by an API server, so any text must link: a name the path cannot carry (an empty
part, a line break) links to ``/clusters/<id>/workload/?workload=<ns>/<name>`` instead.
"""

from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse
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
    query: dict[str, object] = {"snapshot": snapshot_id} if snapshot_id else {}
    try:
        url = reverse("workload", args=[cluster_id, namespace, name])
    except NoReverseMatch:
        url = reverse("workload-by-name", args=[cluster_id])
        query = {"workload": f"{namespace}/{name}", **query}
    return f"{url}?{urlencode(query)}" if query else url


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
