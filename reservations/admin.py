"""Admin for reservations (editable), idle samples (read-only), subscriptions and deliveries."""

from typing import Any

from django import forms
from django.contrib import admin

from reservations.adapters import reservation_object
from reservations.models import DigestDelivery, IdleSample, Reservation, Subscription
from topology import kube


class ReservationForm(forms.ModelForm):
    """Validated by kube.parse_objects, as a Reservation object in YAML would be."""

    class Meta:
        model = Reservation
        fields = ["cluster", "name", "owner_namespaces", "spec", "price_per_gpu_hour"]
        fields += ["start", "end"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        cluster = data.get("cluster")
        if cluster is None or not data.get("name") or not isinstance(data.get("spec"), dict):
            return data
        row = Reservation(**data)
        parsed = kube.parse_objects([("admin", reservation_object(row))], cluster_name=cluster.name)
        if parsed.errors:
            raise forms.ValidationError(str(parsed.errors[0]))
        return data


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    form = ReservationForm
    list_display = ["name", "cluster", "owner_namespaces", "price_per_gpu_hour", "start", "end"]
    list_filter = ["cluster"]
    search_fields = ["name"]


@admin.register(IdleSample)
class IdleSampleAdmin(admin.ModelAdmin):
    list_display = ["reservation", "taken_at", "reserved_gpus", "idle_gpus", "cost_per_hour"]
    list_filter = ["reservation__cluster", "reservation"]
    date_hierarchy = "taken_at"

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["user", "cadence", "team", "hour", "threshold_cost", "active"]
    list_filter = ["cadence", "active"]
    filter_horizontal = ["clusters"]


@admin.register(DigestDelivery)
class DigestDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "subscription",
        "period_start",
        "period_end",
        "sent_at",
        "message_id",
        "skipped_reason",
    ]
    list_filter = ["subscription"]
