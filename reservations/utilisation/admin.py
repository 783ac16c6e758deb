"""Admin of utilisation: a cluster's Prometheus source (editable; the token and the basic
auth password never shown back) and the stored measurements (read-only). Imported by
``reservations.admin``."""

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from reservations.models import PrometheusSource, UtilisationReport


class PrometheusSourceForm(forms.ModelForm):
    bearer_token = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="sent as Authorization: Bearer; left empty keeps the stored one",
    )
    clear_bearer_token = forms.BooleanField(required=False, help_text="remove the stored token")
    basic_auth_password = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="HTTP basic auth password; left empty keeps the stored one",
    )
    clear_basic_auth = forms.BooleanField(
        required=False, help_text="remove the stored basic auth user and password"
    )

    class Meta:
        model = PrometheusSource
        fields = [
            "cluster",
            "url",
            "bearer_token",
            "basic_auth_username",
            "basic_auth_password",
            "verify_tls",
            "query_timeout_seconds",
            "enabled",
        ]

    def clean_bearer_token(self) -> str:
        token = self.cleaned_data.get("bearer_token") or ""
        if self.data.get("clear_bearer_token"):
            return ""
        return token or (self.instance.bearer_token if self.instance.pk else "")

    def clean_basic_auth_username(self) -> str:
        if self.data.get("clear_basic_auth"):
            return ""
        return self.cleaned_data.get("basic_auth_username") or ""

    def clean_basic_auth_password(self) -> str:
        password = self.cleaned_data.get("basic_auth_password") or ""
        if self.data.get("clear_basic_auth"):
            return ""
        return password or (self.instance.basic_auth_password if self.instance.pk else "")


@admin.register(PrometheusSource)
class PrometheusSourceAdmin(admin.ModelAdmin):
    form = PrometheusSourceForm
    list_display = ["cluster", "url", "verify_tls", "query_timeout_seconds", "enabled"]
    list_filter = ["enabled"]


@admin.register(UtilisationReport)
class UtilisationReportAdmin(admin.ModelAdmin):
    list_display = [
        "cluster",
        "window_start",
        "window_end",
        "source",
        "gpus_measured",
        "gpus_total",
        "idle_gpu_hours",
        "idle_cost",
        "error",
    ]
    list_filter = ["cluster", "source"]
    # the per-GPU detail (megabytes on a large cluster) stays out of the page: use the API
    exclude = ["result"]
    readonly_fields = [f.name for f in UtilisationReport._meta.fields if f.name != "result"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
