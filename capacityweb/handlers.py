"""The HTTP handler behind the ASGI server: Django's, with the request run in one thread hop.

Every view of capacityweb is synchronous and Django's middleware have synchronous
hooks. Django's own ``ASGIHandler`` builds an async middleware chain and calls
each hook through ``sync_to_async`` (``MiddlewareMixin.__acall__``): about a dozen
thread hops per request, 2.9 ms of CPU for ``/health/live`` in bench.http. Here the
chain is built synchronously, as under WSGI, and the ASGI side calls it once
through ``sync_to_async``, in the request's own thread (Django's
``ThreadSensitiveContext``), where the request_started and request_finished
signals also run, so a request's database connection stays on one thread.

WebSockets do not pass here (capacityweb.asgi routes them to Channels).
"""

from __future__ import annotations

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase


class OneHopASGIHandler(ASGIHandler):
    """ASGIHandler whose middleware chain and view run synchronously, in one hop."""

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


def get_asgi_application() -> OneHopASGIHandler:
    """As django.core.asgi.get_asgi_application, with the one-hop handler."""
    django.setup(set_prefix=False)
    return OneHopASGIHandler()
