"""Dashboard routes of the recommender app: pending workloads and recommendations."""

from django.urls import path

from recommender import views

urlpatterns = [
    path("clusters/<int:cluster_id>/pending/", views.pending_page, name="pending"),
    path(
        "clusters/<int:cluster_id>/recommendations/",
        views.recommendations_page,
        name="recommendations",
    ),
]
