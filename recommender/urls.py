"""URL routes of the recommender app, included at the site root before the placeholder home."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
