"""The beat measures utilisation every 15 minutes (migration reservations.0006)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_it_schedules_the_measurement_every_15_minutes() -> None:
    from django_celery_beat.models import PeriodicTask

    from capacityweb.celery import app

    app.loader.import_default_modules()  # autodiscovery, as a worker starting does

    task = PeriodicTask.objects.get(name="allocated-but-idle GPU utilisation")
    assert (task.task, task.interval.every, task.interval.period, task.enabled) == (
        "reservations.tasks.measure_utilisation",
        15,
        "minutes",
        True,
    )
    assert task.task in app.tasks
