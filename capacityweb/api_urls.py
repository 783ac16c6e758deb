"""The versioned REST API root, mounted at /api/v1/.

Apps register their viewsets on the shared router from their own api.py,
and this module imports those modules before building ``router.urls``:

    # topology/api.py
    from capacityweb.api_urls import router
    router.register("clusters", ClusterViewSet, basename="cluster")

Views that are not viewsets (the reports, which answer one object, not a
list) append ``path(...)`` entries to ``api_paths`` the same way.

The behaviour every viewset shares is here too: filter + ordering backends,
page-number pagination with a bounded ``page_size``, and the ``writes``
throttle on unsafe methods. ``auth-token/`` exchanges a username and password
for the user's DRF token (``manage.py drf_create_token USER`` makes one too).
"""

from importlib import import_module
from typing import Any

from django.urls import path
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import SAFE_METHODS
from rest_framework.routers import DefaultRouter
from rest_framework.settings import api_settings

router = DefaultRouter()
api_paths: list[Any] = []  # views that are not viewsets (the reports): apps append paths

API_MODULES = [
    "topology.api",
    "reservations.api",
    "reservations.utilisation_api",
    "recommender.api",
    "capacityweb.dashboard.api",
]
FILTER_BACKENDS = [DjangoFilterBackend, OrderingFilter]


class StandardPagination(PageNumberPagination):
    """``?page=N``; ``?page_size=`` up to 500 (default from settings)."""

    page_size_query_param = "page_size"
    max_page_size = 500


class WriteThrottleMixin:
    """Unsafe methods (create, update, delete, actions) count against the ``writes`` rate."""

    write_throttle_scope = "writes"

    def get_throttles(self) -> list[Any]:
        if self.request.method not in SAFE_METHODS:  # type: ignore[attr-defined]
            self.throttle_scope = self.write_throttle_scope
        return super().get_throttles()  # type: ignore[misc]


class ThrottledObtainAuthToken(ObtainAuthToken):
    """DRF's ObtainAuthToken sets ``throttle_classes = ()``: put the default ones back, so
    password guesses count against the ``writes`` rate like any other write."""

    throttle_classes = api_settings.DEFAULT_THROTTLE_CLASSES
    throttle_scope = "writes"


def register_app_viewsets() -> None:
    """Import each app's api module, so its router.register calls run."""
    for module_name in API_MODULES:
        import_module(module_name)


register_app_viewsets()
urlpatterns = [
    path("auth-token/", ThrottledObtainAuthToken.as_view(), name="api-auth-token"),
    *api_paths,
    *router.urls,
]
