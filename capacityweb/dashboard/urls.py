"""Routes of the dashboard pages that join the apps: the overview ("/") and the topology
heatmap."""

from django.urls import path

from capacityweb.dashboard import views

urlpatterns = [
    path("", views.overview, name="overview"),
    path("clusters/<int:cluster_id>/topology/", views.topology_page, name="topology"),
    path(
        "clusters/<int:cluster_id>/topology/data.json",
        views.topology_data,
        name="topology-data",
    ),
]
