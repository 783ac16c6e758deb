"""Project-level pages: the placeholder home page, replaced by an app's "" route."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Show a minimal signed-in page until the dashboard app provides "/"."""
    return render(request, "capacityweb/home.html")
