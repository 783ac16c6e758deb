"""Admin for stored evaluations: read-only, they are derived from snapshots."""

from django.contrib import admin

from recommender.models import Evaluation, Recommendation, WorkloadVerdict


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Evaluation)
class EvaluationAdmin(ReadOnlyAdmin):
    list_display = [
        "cluster",
        "taken_at",
        "gpus",
        "gpus_allocated",
        "gpus_idle_reserved",
        "pending_count",
        "naive_cost_per_hour",
        "joint_cost_per_hour",
        "stranded_cost_per_hour",
    ]
    list_filter = ["cluster"]
    date_hierarchy = "taken_at"


@admin.register(Recommendation)
class RecommendationAdmin(ReadOnlyAdmin):
    list_display = ["evaluation", "node_group", "count", "cost_per_hour"]
    list_filter = ["evaluation__cluster", "node_group"]


@admin.register(WorkloadVerdict)
class WorkloadVerdictAdmin(ReadOnlyAdmin):
    list_display = ["workload", "kind", "verdict", "gpus", "evaluation"]
    list_filter = ["verdict", "kind", "evaluation__cluster"]
    search_fields = ["workload", "namespace"]
