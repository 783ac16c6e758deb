"""Django's 404 for a URL no route matches, in the API's format under /api/.

DRF answers its own 404s as JSON, but a path that matches no route at all (an id
the router's pattern refuses, ``/api/v1/reservations/1/2/``) never reaches DRF:
Django's HTML page answered it, which an API client cannot read and the schema
does not promise. Pages keep Django's page. Django uses ``handler404`` when DEBUG
is off (with DEBUG on it shows its technical page).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)
