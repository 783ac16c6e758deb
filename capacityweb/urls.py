"""Root URLs: admin, login, health, the versioned API and its schema, then the pages —
the dashboard's overview ("/") and heatmap, and each app's own pages."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from capacityweb import metrics
from capacityweb.api import docs as api_docs

handler404 = "capacityweb.api.errors.page_not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("health/", include("capacityweb.health_urls")),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("api/v1/", include("capacityweb.api.urls")),
    path("api/schema/", api_docs.SchemaView.as_view(), name="schema"),
    # the split view serves Swagger UI's init as a script of its own (?script), not inline
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path(
        "api/redoc/",
        SpectacularRedocView.as_view(url_name="schema", template_name="capacityweb/redoc.html"),
        name="redoc",
    ),
    path("api/redoc/redoc.standalone.js", api_docs.redoc_bundle, name="redoc-bundle"),
    path("", include("capacityweb.dashboard.urls")),
    path("", include("reservations.urls")),
    path("", include("recommender.urls")),
]
