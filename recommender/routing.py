"""WebSocket routes of the recommender app, mounted by capacityweb.asgi."""

from django.urls import URLPattern, URLResolver

websocket_urlpatterns: list[URLPattern | URLResolver] = []
