"""Template context every page shares."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def currency(request: HttpRequest) -> dict[str, Any]:
    """The ``CURRENCY`` setting, shown with every money figure (``{{ currency }}/h``)."""
    return {"currency": settings.CURRENCY}
