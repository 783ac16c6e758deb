"""URL routes of the topology app, included at the site root before the placeholder home."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
