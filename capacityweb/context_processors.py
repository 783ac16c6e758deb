"""Template context every page shares."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def currency(request: HttpRequest) -> dict[str, Any]:
    """The ``CURRENCY`` setting, shown with every money figure (``{{ currency }}/h``)."""
    return {"currency": settings.CURRENCY}


def live_updates(request: HttpRequest) -> dict[str, Any]:
    """``LIVE_POLL_SECONDS``: how long a live page waits for a message before it asks its
    socket whether a newer evaluation exists (``static/js/live.js``)."""
    return {"live_poll_seconds": settings.LIVE_POLL_SECONDS}
