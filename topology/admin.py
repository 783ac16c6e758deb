"""Admin for clusters, snapshots (read-only: they are what a source saw) and node groups.

Node groups are validated by ``kube.parse_objects`` on save, like YAML input;
a cluster's page links to a form that loads NodeGroup/Reservation YAML.
"""

import tempfile
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from topology import kube, services
from topology.adapters import node_group_object
from topology.files import read_objects
from topology.hardware import ModelError
from topology.models import Cluster, NodeGroup, Snapshot


class NodeGroupForm(forms.ModelForm):
    class Meta:
        model = NodeGroup
        fields = ["cluster", "name", "spec", "price_per_node_hour", "min_size", "max_size"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        cluster = data.get("cluster") or getattr(self.instance, "cluster", None)
        if cluster is None or not data.get("name") or not isinstance(data.get("spec"), dict):
            return data
        row = NodeGroup(cluster=cluster, **{k: v for k, v in data.items() if k != "cluster"})
        parsed = kube.parse_objects([("admin", node_group_object(row))], cluster_name=cluster.name)
        if parsed.errors:
            raise forms.ValidationError(str(parsed.errors[0]))
        return data


class NodeGroupInline(admin.TabularInline):
    model = NodeGroup
    form = NodeGroupForm
    extra = 0
    fields = ["name", "price_per_node_hour", "min_size", "max_size", "spec"]


class LoadConfigForm(forms.Form):
    document = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "cols": 100}))


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "source_kind", "enabled", "created_at", "load_config_link"]
    list_filter = ["source_kind", "enabled"]
    search_fields = ["name"]
    inlines = [NodeGroupInline]

    def save_model(self, request: Any, obj: Cluster, form: Any, change: bool) -> None:
        """Saving a cluster also creates (or enables/disables) its periodic ingest."""
        super().save_model(request, obj, form, change)
        services.schedule_ingest(cluster=obj)

    @admin.display(description="configuration")
    def load_config_link(self, cluster: Cluster) -> str:
        url = reverse("admin:topology_cluster_load_config", args=[cluster.pk])
        return format_html('<a href="{}">load YAML</a>', url)

    def get_urls(self) -> list[URLPattern]:
        load = path(
            "<int:cluster_id>/load-config/",
            self.admin_site.admin_view(self.load_config_view),
            name="topology_cluster_load_config",
        )
        return [load, *super().get_urls()]

    def load_config_view(self, request: HttpRequest, cluster_id: int) -> HttpResponse:
        cluster = get_object_or_404(Cluster, pk=cluster_id)
        if not self.has_change_permission(request, cluster):
            return HttpResponse(status=403)
        form = LoadConfigForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                counts = services.load_configuration(
                    cluster=cluster, objects=_objects_from_text(form.cleaned_data["document"])
                )
            except ModelError as error:
                form.add_error("document", str(error))
            else:
                self.message_user(
                    request,
                    f"Loaded {counts['nodeGroups']} node groups and "
                    f"{counts['reservations']} reservations.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(
                    reverse("admin:topology_cluster_change", args=[cluster.pk])
                )
        context = {**self.admin_site.each_context(request), "cluster": cluster, "form": form}
        return TemplateResponse(request, "admin/topology/cluster/load_config.html", context)


def _objects_from_text(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Parse pasted YAML/JSON through read_objects, so its size and alias limits apply."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        objects = read_objects(
            handle.name,
            max_bytes=settings.MAX_SNAPSHOT_BYTES,
            max_objects=settings.MAX_SNAPSHOT_OBJECTS,
        )
    return [("admin", obj) for _source, obj in objects]


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["cluster", "taken_at", "content_hash", "object_counts", "error_count"]
    list_filter = ["cluster"]
    date_hierarchy = "taken_at"
    readonly_fields = [f.name for f in Snapshot._meta.fields]

    @admin.display(description="errors")
    def error_count(self, snapshot: Snapshot) -> int:
        return len(snapshot.errors)

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(NodeGroup)
class NodeGroupAdmin(admin.ModelAdmin):
    form = NodeGroupForm
    list_display = ["name", "cluster", "price_per_node_hour", "min_size", "max_size"]
    list_filter = ["cluster"]
    search_fields = ["name"]
