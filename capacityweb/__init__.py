"""The capacityweb Django project; importing it loads the Celery app so @shared_task binds to it.

What lives here: settings, the Celery app and embedded worker, ASGI routing, the
shared API plumbing (``api_urls``: router, pagination, throttles), authentication,
caching, health, and the top layer that joins the apps: ``urls``, ``dashboard``
(overview and topology heatmap pages), ``demo`` (the demo loader) and the
``load_demo``/``rundemo``/``serve`` commands. The apps may import the plumbing
modules; only the top layer imports the apps' pages (``.importlinter``).
"""

from capacityweb.celery import app as celery_app

__all__ = ["celery_app"]
