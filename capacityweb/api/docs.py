"""The API's documents as a browser reads them: the schema, and ReDoc's bundle.

**The schema** (``/api/schema/``): drf-spectacular's SpectacularAPIView answers an
``Accept`` of ``*/*`` with its first renderer, YAML as ``application/vnd.oai.openapi``,
a type no browser shows, so opening the link downloaded a file. ``SchemaView`` answers
a browser's navigation (an ``Accept`` naming ``text/html``, no ``?format=``) with the
same YAML as ``text/plain``, which the browser shows; every other client negotiates as
before (``?format=json``, ``Accept: application/vnd.oai.openapi+json``, ...).

**ReDoc's bundle** as drf-spectacular-sidecar ships it, minus its one request to another host.

The sidecar serves Swagger UI and ReDoc from this server, but ReDoc's bundle
still draws the Redocly logo in its sidebar from Redocly's CDN (an ``<img>``
whose ``onError`` hides the logo). This view serves the same bundle with that
URL replaced by an empty ``data:`` image, so the logo is hidden at once and no
page of the dashboard requests anything beyond its own host
(tests/browser/test_offline.py checks every page).
"""

from __future__ import annotations

from functools import cache

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe
from drf_spectacular.renderers import OpenApiYamlRenderer
from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

REDOC_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
REDOCLY_LOGO_URL = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_IMAGE = b"data:,"
BUNDLE_MAX_AGE_SECONDS = 24 * 3600


@cache
def local_redoc_bundle() -> bytes:
    """The sidecar's ReDoc bundle with the Redocly logo's CDN URL replaced (read once)."""
    path = finders.find(REDOC_BUNDLE)
    if not isinstance(path, str):
        raise LookupError(f"{REDOC_BUNDLE} not found: is drf_spectacular_sidecar installed?")
    with open(path, "rb") as bundle:
        return bundle.read().replace(REDOCLY_LOGO_URL, EMPTY_IMAGE)


@require_safe
@cache_control(public=True, max_age=BUNDLE_MAX_AGE_SECONDS)
def redoc_bundle(request: HttpRequest) -> HttpResponse:
    return HttpResponse(local_redoc_bundle(), content_type="text/javascript; charset=utf-8")


class OpenApiYamlTextRenderer(OpenApiYamlRenderer):
    """The schema's YAML as plain text, which a browser shows instead of saving."""

    media_type = "text/plain"


class SchemaView(SpectacularAPIView):
    renderer_classes = [*SpectacularAPIView.renderer_classes, OpenApiYamlTextRenderer]

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        browsing = "text/html" in request.META.get("HTTP_ACCEPT", "")
        if browsing and not request.query_params.get("format"):
            return OpenApiYamlTextRenderer(), OpenApiYamlTextRenderer.media_type
        return super().perform_content_negotiation(request, force)
