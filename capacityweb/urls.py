"""Root URLs. App URLconfs are included at "" BEFORE the placeholder home page,
so an app that defines "" (the dashboard) wins over capacityweb.views.home."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from capacityweb import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("health/", include("capacityweb.health_urls")),
    path("api/v1/", include("capacityweb.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("", include("capacityweb.dashboard.urls")),
    path("", include("reservations.urls")),
    path("", include("recommender.urls")),
    path("", views.home, name="home"),
]
