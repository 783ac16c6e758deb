"""WSGI entry point (HTTP only; WebSockets need the ASGI app in capacityweb.asgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")

application = get_wsgi_application()
