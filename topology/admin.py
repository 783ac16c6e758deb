"""Admin for clusters, snapshots (read-only: they are what a source saw) and node groups."""

from typing import Any

from django.contrib import admin

from topology import services
from topology.models import Cluster, NodeGroup, Snapshot


class NodeGroupInline(admin.TabularInline):
    model = NodeGroup
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
    list_display = ["name", "cluster", "price_per_node_hour", "min_size", "max_size"]
    list_filter = ["cluster"]
    search_fields = ["name"]
