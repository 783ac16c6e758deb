"""The versioned REST API root, mounted at /api/v1/.

Apps register their viewsets on the shared router from their own api.py,
and capacityweb.urls imports those modules before including ``router.urls``:

    # topology/api.py
    from capacityweb.api_urls import router
    router.register("clusters", ClusterViewSet, basename="cluster")

then add the module to API_MODULES below so it is imported at URL load time.
"""

from importlib import import_module
from importlib.util import find_spec

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

API_MODULES = ["topology.api", "reservations.api", "recommender.api"]


def register_app_viewsets() -> None:
    """Import each app's api module that exists, so its router.register calls run."""
    for module_name in API_MODULES:
        if find_spec(module_name) is not None:
            import_module(module_name)


register_app_viewsets()
urlpatterns = router.urls
