"""The Celery app: configured from Django settings (CELERY_* names), tasks autodiscovered.

Broker, result backend and beat scheduler come from settings, so the embedded
dev mode (memory broker) and production (Redis) run the same tasks.

With DEBUG on (`make run`), Django logs every query of a connection with its SQL
text until a request starts; a worker thread never starts one, so its log kept the
last 9,000 queries, among them each ingest's INSERT of the whole snapshot JSON: 41
queries and 11.6 MB of SQL per demo ingest and evaluation, which was the idle
`make run`'s growth of ~9 MB a minute (bench/idle_rss.py). Each task now starts and
ends with an empty log.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "capacityweb.settings")

app = Celery("capacityweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def forget_logged_queries(**kwargs: Any) -> None:
    """Empty this thread's DEBUG query log (a no-op when DEBUG is off: nothing is logged)."""
    from django.db import reset_queries

    reset_queries()
