"""What a locked-out sign-in sees (django-axes' ``AXES_LOCKOUT_CALLABLE``): the sign-in page
again, answered 429, saying that too many sign-ins failed for this account or from this
address and when to try again; no password is checked meanwhile (settings, ``AXES_*``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

LOCKED_OUT_STATUS = 429


def lockout_text() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (
        f"Too many failed sign-ins for this account or from this address: signing in is "
        f"locked for {minutes} minutes after the last attempt."
    )


def locked_out(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    response = render(
        request,
        "registration/login.html",
        {
            "form": AuthenticationForm(request),
            "locked_out": lockout_text(),
            "next": request.POST.get("next") or request.GET.get("next") or "",
        },
        status=LOCKED_OUT_STATUS,
    )
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response
