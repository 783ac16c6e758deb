"""WebSocket routes of the recommender app, mounted by capacityweb.asgi; the last one takes
every other path (closed with 4404 rather than an error in the server)."""

from django.urls import URLPattern, URLResolver, path, re_path

from recommender.consumers import ClusterConsumer, ClusterListConsumer, NoRouteConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/clusters/", ClusterListConsumer.as_asgi()),
    path("ws/clusters/<int:cluster_id>/", ClusterConsumer.as_asgi()),
    re_path(r"", NoRouteConsumer.as_asgi()),
]
