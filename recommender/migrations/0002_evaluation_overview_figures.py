"""Evaluation: the overview's summed figures as columns, and stored_at (cache validator).

Existing rows get their figures from their stored result (the same sums as
recommender.services.overview_figures, copied here as migrations must not
import code that changes later) and stored_at = created_at.
"""

import django.utils.timezone
from django.db import migrations, models


def backfill(apps, schema_editor):
    Evaluation = apps.get_model("recommender", "Evaluation")
    for evaluation in Evaluation.objects.iterator(chunk_size=100):
        result = evaluation.result or {}
        evaluation.stranded_gpus = sum(
            int((workload.get("naive") or {}).get("strandedGpus") or 0)
            for workload in result.get("workloads") or []
        )
        evaluation.idle_reserved_cost_per_hour = sum(
            float(reservation.get("costPerHour") or 0)
            for reservation in result.get("idleReservations") or []
        )
        evaluation.stored_at = evaluation.created_at
        evaluation.save(
            update_fields=["stranded_gpus", "idle_reserved_cost_per_hour", "stored_at"]
        )


class Migration(migrations.Migration):

    dependencies = [
        ("recommender", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="evaluation",
            name="idle_reserved_cost_per_hour",
            field=models.FloatField(default=0.0),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="stored_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="stranded_gpus",
            field=models.PositiveIntegerField(
                default=0,
                help_text="GPUs the naive autoscaler adds that the scheduler cannot use",
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
