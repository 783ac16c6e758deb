"""The beat schedule of the digest: ``send_due_digests`` every 15 minutes (django-celery-beat)."""

from django.db import migrations

TASK_NAME = "reservations.tasks.send_due_digests"
SCHEDULE_NAME = "idle GPU waste digests"
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
        ("reservations", "0001_initial"),
        ("django_celery_beat", "0018_improve_crontab_helptext"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
