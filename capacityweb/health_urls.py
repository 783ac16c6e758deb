"""Health endpoints: /health/live and /health/ready."""

from django.urls import path

from capacityweb import health

urlpatterns = [
    path("live", health.live, name="health-live"),
    path("ready", health.ready, name="health-ready"),
]
