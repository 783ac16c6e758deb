"""Admin for reservations (editable), idle samples (read-only), subscriptions and deliveries.

The cluster admin (topology's) is re-registered here with a link to a form that
loads NodeGroup/Reservation YAML into the cluster (``services.load_configuration``).
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

from reservations import services, subscription_rules
from reservations.adapters import reservation_object
from reservations.models import (
    DigestDelivery,
    IdleSample,
    Reservation,
    Subscription,
    WebhookDelivery,
)
from topology.admin import ClusterAdmin
from topology.ingest.files import read_objects
from topology.kube import parse as kube
from topology.model.hardware import ModelError
from topology.models import Cluster


class ReservationForm(forms.ModelForm):
    """Validated by kube.parse_objects, as a Reservation object in YAML would be."""

    class Meta:
        model = Reservation
        fields = ["cluster", "name", "owner_namespaces", "spec", "price_per_gpu_hour"]
        fields += ["start", "end"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        fixed = (
            {"cluster": self.instance.cluster, "name": self.instance.name}
            if self.instance.pk
            else {}
        )
        row = Reservation(**{**data, **fixed})
        if row.cluster_id is None or not row.name or not isinstance(data.get("spec"), dict):
            return data
        cluster = row.cluster
        obj = reservation_object(row)
        parsed = kube.parse_objects([("admin", obj)], cluster_name=cluster.name)
        if parsed.errors:
            raise forms.ValidationError(str(parsed.errors[0]))
        try:
            services.check_reservation(cluster=cluster, name=row.name, spec=obj["spec"])
        except ModelError as error:
            raise forms.ValidationError(str(error)) from error
        return data


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    form = ReservationForm
    list_display = ["name", "cluster", "owner_namespaces", "price_per_gpu_hour", "start", "end"]
    list_filter = ["cluster"]
    search_fields = ["name"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        """Cluster and name are the reservation's identity: fixed once created (as in the API)."""
        return ["cluster", "name"] if obj is not None else []

    def save_model(self, request: HttpRequest, obj: Reservation, form: Any, change: bool) -> None:
        """Through ``services.save_reservation``, as the API and YAML paths: checked again
        under the cluster's lock, columns derived from the spec."""
        saved = services.save_reservation(
            cluster=obj.cluster,
            name=obj.name,
            spec=reservation_object(obj)["spec"],
            instance=Reservation.objects.get(pk=obj.pk) if change else None,
        )
        obj.pk = saved.pk


@admin.register(IdleSample)
class IdleSampleAdmin(admin.ModelAdmin):
    list_display = ["reservation", "taken_at", "reserved_gpus", "idle_gpus", "cost_per_hour"]
    list_filter = ["reservation__cluster", "reservation"]
    date_hierarchy = "taken_at"

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


class SubscriptionForm(forms.ModelForm):
    """The API's rules for recipients and the webhook URL (reservations.subscription_rules)."""

    class Meta:
        model = Subscription
        fields = [
            "user",
            "recipients",
            "clusters",
            "team",
            "cadence",
            "timezone",
            "hour",
            "weekday",
            "threshold_cost",
            "active",
            "webhook_url",
        ]

    def clean_recipients(self) -> str:
        return subscription_rules.clean_recipients(self.cleaned_data["recipients"])

    def clean_webhook_url(self) -> str:
        return subscription_rules.clean_webhook_url(self.cleaned_data["webhook_url"])


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
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


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "subscription",
        "period_start",
        "period_end",
        "sent_at",
        "status_code",
        "skipped_reason",
    ]
    list_filter = ["subscription"]


class LoadConfigForm(forms.Form):
    document = forms.CharField(widget=forms.Textarea(attrs={"rows": 24, "cols": 100}))


class ClusterConfigurationAdmin(ClusterAdmin):
    """ClusterAdmin with a "load YAML" link per cluster (node groups and reservations)."""

    list_display = [*ClusterAdmin.list_display, "load_config_link"]

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


admin.site.unregister(Cluster)
admin.site.register(Cluster, ClusterConfigurationAdmin)
