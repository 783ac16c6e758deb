"""A database that cannot be reached answers 503 Service Unavailable, fast.

With Postgres stopped, restarting or unreachable, every view that reads a row
raised OperationalError after the connection pool's 30 s wait: an anonymous
500 (a traceback page with DEBUG on) after half a minute. Now the wait is
DATABASE_CONNECT_TIMEOUT_SECONDS (libpq's ``connect_timeout`` and the pool's
``timeout``, set in settings) and this middleware turns the error into a 503
with ``Retry-After``: JSON ``{"detail": ...}`` under /api/, a short page
elsewhere. The page stands alone (no base template: its context processors
would query the database again). One log line per request names the error.

Only errors of connecting and of the connection itself (OperationalError,
InterfaceError) are mapped; a failed query (IntegrityError, ProgrammingError)
is a bug and stays a 500.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 10
DETAIL = "database unavailable; try again shortly"
PAGE = (
    "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
    "<title>Unavailable · capacityweb</title></head><body>"
    "<h1>Temporarily unavailable</h1><p>The database cannot be reached. "
    "Try again in a few seconds.</p></body></html>"
)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.error("database unavailable: %s %s: %s", request.method, request.path, exception)
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse({"detail": DETAIL}, status=503)
        else:
            response = HttpResponse(PAGE, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
