"""/help/: every term the pages use, from the one glossary (recommender.glossary)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from recommender.glossary import TERMS


@login_required
def help_page(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/help.html", {"terms": TERMS.values(), "section": "help"})
