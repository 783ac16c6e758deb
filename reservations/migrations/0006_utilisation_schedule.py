"""The beat schedule of the utilisation measurement: ``measure_utilisation`` every 15 minutes."""

from django.db import migrations

TASK_NAME = "reservations.tasks.measure_utilisation"
SCHEDULE_NAME = "allocated-but-idle GPU utilisation"
EVERY_MINUTES = 15


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    interval, _ = IntervalSchedule.objects.get_or_create(every=EVERY_MINUTES, period="minutes")
    PeriodicTask.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={"task": TASK_NAME, "interval": interval, "enabled": True},
    )


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=SCHEDULE_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("reservations", "0005_utilisation"),
        ("django_celery_beat", "0018_improve_crontab_helptext"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
