"""The HTTP handler behind the ASGI server: Django's, run as a threaded WSGI server runs it.

Every view of capacityweb is synchronous and Django's middleware have synchronous
hooks. Django's own ``ASGIHandler`` builds an async middleware chain and calls
each hook through ``sync_to_async`` (``MiddlewareMixin.__acall__``), about a
dozen thread hops per request, each on a thread created for that request
(``ThreadSensitiveContext``), with its own database wrapper and cache client:
2.9 ms of CPU for ``/health/live`` in bench.http. Here, per request:

    event loop: read the body ─► one hop to a pool thread ─────────────► send
    pool thread:      request_started ► request ► middleware + view ► close()
                      (request_finished: stale connections closed, as under WSGI)

- the middleware chain is built synchronously, as under WSGI;
- it runs on a fixed pool of ``WEB_THREADS`` threads that live as long as the
  process, so each thread's database wrapper and connections are reused;
- Django's request_started and request_finished signals run on that thread too
  (Django's handler sends each from the event loop, one more hop each, to a
  thread that is not the request's), so their handlers close the stale or
  broken database connections of the thread that used them;
- a response with its content in memory is closed (request_finished) before
  it is sent, in the same hop, and sent as one message; a streaming one is
  closed after its last chunk, as Django's handler does, and a synchronous
  stream (a static file) is read chunk by chunk on the pool, not whole;
- a body that fits in FILE_UPLOAD_MAX_MEMORY_SIZE is kept in memory, not in a
  SpooledTemporaryFile.

WebSockets do not pass here (capacityweb.asgi routes them to Channels).
"""

from __future__ import annotations

import gc
import io
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

import django
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse, HttpResponseBase
from django.urls import set_script_prefix


class ThreadPoolASGIHandler(ASGIHandler):
    """ASGIHandler whose request, middleware chain and view run on a thread pool."""

    def __init__(self) -> None:
        super().__init__()
        self.executor = ThreadPoolExecutor(
            max_workers=settings.WEB_THREADS, thread_name_prefix="django-http"
        )

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    def on_pool(self, function: Any) -> Any:
        # sync_to_async, not loop.run_in_executor: async_to_sync in a view (health
        # checks, publishing) then runs on this event loop instead of a new one.
        return sync_to_async(function, thread_sensitive=False, executor=self.executor)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # Django's opens a ThreadSensitiveContext (a new thread per request) here.
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        try:
            response = await self.on_pool(self.respond)(scope, body_file)
            try:
                await self.send_response(response, send)
            finally:
                if response.streaming:
                    await self.on_pool(response.close)()
        finally:
            body_file.close()

    def respond(self, scope: dict[str, Any], body_file: IO[bytes]) -> HttpResponseBase:
        """On a pool thread: the whole request but sending the response."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        if not response.streaming:
            response.close()  # sends request_finished
        return response

    async def read_body(self, receive: Any) -> IO[bytes]:
        """As Django's, but a body within FILE_UPLOAD_MAX_MEMORY_SIZE stays a BytesIO."""
        limit = settings.FILE_UPLOAD_MAX_MEMORY_SIZE
        body_file: IO[bytes] = io.BytesIO()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                body_file.close()
                raise RequestAborted()
            body_file.write(message.get("body", b""))
            if isinstance(body_file, io.BytesIO) and body_file.tell() > limit:
                spooled = tempfile.SpooledTemporaryFile(max_size=limit, mode="w+b")  # noqa: SIM115
                spooled.write(body_file.getvalue())  # over max_size: now a file on disk
                body_file = spooled
            if not message.get("more_body", False):
                break
        body_file.seek(0)
        return body_file

    async def send_response(self, response: HttpResponseBase, send: Any) -> None:
        if response.streaming and response.is_async:
            await super().send_response(response, send)
            return
        headers = [
            (
                name.encode("ascii") if isinstance(name, str) else bytes(name),
                value.encode("latin1") if isinstance(value, str) else bytes(value),
            )
            for name, value in response.items()
        ]
        headers += [
            (b"Set-Cookie", cookie.output(header="").encode("ascii").strip())
            for cookie in response.cookies.values()
        ]
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        if not response.streaming:
            await send({"type": "http.response.body", "body": response.content})
            return
        # A synchronous iterator (WhiteNoise's files): each chunk read on a pool thread as
        # it is sent. Django's handler reads it whole into a list first.
        chunks = iter(response.streaming_content)
        read = self.on_pool(next)
        while (chunk := await read(chunks, None)) is not None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body"})


def get_asgi_application() -> ThreadPoolASGIHandler:
    """As django.core.asgi.get_asgi_application, with the thread-pool handler."""
    django.setup(set_prefix=False)
    handler = ThreadPoolASGIHandler()
    # Everything loaded so far (Django, the apps, the URL and template machinery) lives as
    # long as the process: keep it out of the garbage collector's full passes.
    gc.freeze()
    return handler
