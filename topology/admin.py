"""Admin for clusters, snapshots (read-only: they are what a source saw) and node groups.

Node groups are validated by ``kube.parse_objects`` on save, like YAML input.
The reservations app extends ClusterAdmin with the form that loads
NodeGroup/Reservation YAML (it stores both).
"""

from typing import Any

from django import forms
from django.contrib import admin

from topology import services
from topology.adapters import node_group_object
from topology.kube import parse as kube
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


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "source_kind", "enabled", "created_at"]
    list_filter = ["source_kind", "enabled"]
    search_fields = ["name"]
    inlines = [NodeGroupInline]

    def save_model(self, request: Any, obj: Cluster, form: Any, change: bool) -> None:
        """Saving a cluster also creates (or enables/disables) its periodic ingest."""
        super().save_model(request, obj, form, change)
        services.schedule_ingest(cluster=obj)


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
