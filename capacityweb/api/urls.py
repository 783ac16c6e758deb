"""The versioned REST API root, mounted at /api/v1/.

Apps register their viewsets on the shared router from their own api.py,
and this module imports those modules before building ``router.urls``:

    # topology/api.py
    from capacityweb.api.urls import router
    router.register("clusters", ClusterViewSet, basename="cluster")

Views that are not viewsets (the reports, which answer one object, not a
list) append ``path(...)`` entries to ``api_paths`` the same way.

The behaviour every viewset shares is here too: filter + ordering backends,
page-number pagination with a bounded ``page_size``, and the ``writes``
throttle on unsafe methods. ``auth-token/`` exchanges a username and password
for the user's DRF token (``manage.py drf_create_token USER`` makes one too).
"""

import re
from importlib import import_module
from typing import Any

from django.urls import path
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
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
    "reservations.utilisation.api",
    "recommender.api",
    "recommender.whatif.api",
    "recommender.moves.api",
    "capacityweb.dashboard.api",
]


class CollectionOnly:
    """A filter backend that filters collections (a list, a list route's action), never the
    one row a detail route names. DRF's ``GenericAPIView.get_object`` filters the queryset
    too, so the list's filters held on ``/reservations/7/``: ``?name=x`` made it a 404 and
    ``?name=%00`` a 400, on operations whose schema has no such parameter (and no 400)."""

    def filter_queryset(self, request: Any, queryset: Any, view: Any) -> Any:
        if getattr(view, "detail", False):
            return queryset
        return super().filter_queryset(request, queryset, view)  # type: ignore[misc]


class CollectionFilterBackend(CollectionOnly, DjangoFilterBackend):
    pass


class CollectionOrderingFilter(CollectionOnly, OrderingFilter):
    pass


FILTER_BACKENDS = [CollectionFilterBackend, CollectionOrderingFilter]
ASCII_NUMBER = re.compile(r"[0-9]{1,9}")  # a page_size's digits: int() reads them all


class StandardPagination(PageNumberPagination):
    """``?page=N``; ``?page_size=`` from 1 to 500 (default from settings). A page_size
    that is not such a number is a 400 naming it (DRF's ``get_page_size`` would fall back
    to the default silently, as it does for any value ``int()`` refuses). Only ASCII
    digits are a number here: ``str.isdigit()`` holds for "²", which ``int()`` refuses,
    and for other scripts' digits, which the schema's integer is not; and ``int()``
    refuses more than 4,300 digits. Of several page_size values, the last counts
    (``QueryDict.get``, as in DRF)."""

    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Any) -> int | None:
        text = request.query_params.get(self.page_size_query_param)
        number = ASCII_NUMBER.fullmatch(text) if text is not None else None
        if text is not None and not (number and 1 <= int(text) <= self.max_page_size):
            raise ValidationError(
                {"page_size": [f"{text!r}: a whole number from 1 to {self.max_page_size}"]}
            )
        return super().get_page_size(request)


class WriteThrottleMixin:
    """Unsafe methods (create, update, delete, actions) count against the ``writes`` rate,
    unless the action names a scope of its own (``@action(..., throttle_scope=...)``)."""

    write_throttle_scope = "writes"
    throttle_scope: str | None = None  # an action's own scope (as_view accepts class attributes)

    def get_throttles(self) -> list[Any]:
        unsafe = self.request.method not in SAFE_METHODS  # type: ignore[attr-defined]
        if unsafe and getattr(self, "throttle_scope", None) is None:
            self.throttle_scope = self.write_throttle_scope
        return super().get_throttles()  # type: ignore[misc]


class ThrottledObtainAuthToken(ObtainAuthToken):
    """DRF's ObtainAuthToken sets ``throttle_classes = ()`` and its own parsers: put the
    default ones back, so password guesses count against the ``writes`` rate like any
    other write, and its JSON body is depth-limited like any other (capacityweb.api.parsers)."""

    throttle_classes = api_settings.DEFAULT_THROTTLE_CLASSES
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES

    @extend_schema(auth=[])  # it takes a username and password, no session or token
    def post(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return super().post(request, *args, **kwargs)

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
