"""ASGI entry point: HTTP goes to Django, WebSockets to the apps' routing.

    http      ──► Django (pages, REST API), middleware and view on a thread pool
                  (capacityweb.handlers)
    websocket ──► AllowedHostsOriginValidator ► AuthMiddlewareStack ► URLRouter
                  (recommender.routing.websocket_urlpatterns: /ws/clusters/<id>/)

The Django ASGI app is built before importing routing so that the app
registry is ready when consumers import models (as the Channels docs require).
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")

from capacityweb.handlers import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from recommender.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
