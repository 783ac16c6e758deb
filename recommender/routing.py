"""WebSocket routes of the recommender app, mounted by capacityweb.asgi."""

from django.urls import URLPattern, URLResolver, path

from recommender.consumers import ClusterConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/clusters/<int:cluster_id>/", ClusterConsumer.as_asgi()),
]
