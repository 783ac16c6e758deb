"""The Celery app: configured from Django settings (CELERY_* names), tasks autodiscovered.

Broker, result backend and beat scheduler come from settings, so the embedded
dev mode (memory broker) and production (Redis) run the same tasks.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")

app = Celery("capacityweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
