"""The Content-Security-Policy header on every response.

A script runs only when it is a file served by this host: no inline ``<script>``,
no ``eval``, no other host (Plotly is served from static/vendor, Swagger UI and
ReDoc from the sidecar package). An injected ``<script>`` in a name that escaped
escaping would not run. Pages open sockets and fetch only from this host: the
WebSocket origin (``ws://`` or ``wss://`` and the request's host) is named
beside ``'self'``, which browsers before CSP level 3 do not match to a socket.
No page may be framed (``frame-ancestors``, with X-Frame-Options for old
browsers), no plugin loaded, no ``<base>`` pointing elsewhere, no form posted
to another host.

Workers may also start from a ``blob:`` URL: ReDoc builds its search worker so.
Only a script already running (so from this host) can make such a URL.

Styles allow ``'unsafe-inline'``: Plotly, Swagger UI and ReDoc inject style
elements and attributes as they draw. A style cannot run script; the cost is
that injected markup could restyle a page (docs/RELIABILITY.md says so).

Django 5.2 has no CSP of its own; this middleware is the one place the policy
lives (``CSP_HEADER``). A response that already carries the header keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

CSP_HEADER = "Content-Security-Policy"
STATIC_DIRECTIVES = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)


def websocket_origin(request: HttpRequest) -> str:
    """``ws://host[:port]`` (``wss://`` behind TLS) of the host the page was served from.

    ``get_host`` is checked against ALLOWED_HOSTS, so no header the client sends can
    widen the policy beyond a host this server answers for."""
    scheme = "wss" if request.is_secure() else "ws"
    return f"{scheme}://{request.get_host()}"


def content_security_policy(request: HttpRequest) -> str:
    try:
        connect = f"connect-src 'self' {websocket_origin(request)}"
    except DisallowedHost:  # the 400 for a host not allowed: nothing beyond 'self'
        connect = "connect-src 'self'"
    return "; ".join((*STATIC_DIRECTIVES, connect))


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if CSP_HEADER not in response:
            response[CSP_HEADER] = content_security_policy(request)
        return response
