"""The HTTP handler behind the ASGI server: Django's, run as a threaded WSGI server runs it.

Every view of capacityweb is synchronous and Django's middleware have synchronous
hooks. Django's own ``ASGIHandler`` builds an async middleware chain and calls
each hook through ``sync_to_async`` (``MiddlewareMixin.__acall__``), about a
dozen thread hops per request, each on a thread created for that request
(``ThreadSensitiveContext``), with its own database wrapper and cache client:
2.9 ms of CPU for ``/health/live`` in bench.http. Here:

- the middleware chain is built synchronously, as under WSGI;
- the ASGI side calls it once per request, on a fixed pool of ``WEB_THREADS``
  threads that live as long as the process, so each thread's database wrapper
  and connections are reused;
- as Django's request_started/request_finished handlers do, stale or broken
  database connections are closed before and after each request, on the
  request's thread (the signals themselves run on asgiref's shared thread).

WebSockets do not pass here (capacityweb.asgi routes them to Channels).
"""

from __future__ import annotations

import gc
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import django
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponseBase


class ThreadPoolASGIHandler(ASGIHandler):
    """ASGIHandler whose middleware chain and view run synchronously on a thread pool."""

    def __init__(self) -> None:
        super().__init__()
        self.executor = ThreadPoolExecutor(
            max_workers=settings.WEB_THREADS, thread_name_prefix="django-http"
        )

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # Django's opens a ThreadSensitiveContext (a new thread per request) here.
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        respond = sync_to_async(self.respond, thread_sensitive=False, executor=self.executor)
        return await respond(request)

    def respond(self, request: HttpRequest) -> HttpResponseBase:
        close_old_connections()
        try:
            return self.get_response(request)
        finally:
            close_old_connections()


def get_asgi_application() -> ThreadPoolASGIHandler:
    """As django.core.asgi.get_asgi_application, with the thread-pool handler."""
    django.setup(set_prefix=False)
    handler = ThreadPoolASGIHandler()
    # Everything loaded so far (Django, the apps, the URL and template machinery) lives as
    # long as the process: keep it out of the garbage collector's full passes.
    gc.freeze()
    return handler
