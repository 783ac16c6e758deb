"""Dashboard routes of the reservations app (the API's routes live in capacityweb.api.urls)."""

from django.urls import path

from reservations import views
from reservations.utilisation import views as utilisation_views

urlpatterns = [
    path("clusters/<int:cluster_id>/reservations/", views.reservations_page, name="reservations"),
    path(
        "clusters/<int:cluster_id>/utilisation/",
        utilisation_views.utilisation_page,
        name="utilisation",
    ),
    path(
        "clusters/<int:cluster_id>/subscriptions/<int:subscription_id>/test-email/",
        views.send_test_email,
        name="subscription-test-email",
    ),
    path(
        "clusters/<int:cluster_id>/subscriptions/<int:subscription_id>/test-webhook/",
        views.send_test_webhook,
        name="subscription-test-webhook",
    ),
]
