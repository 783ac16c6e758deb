from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("recommender", "0013_recommendation_actions"),
    ]

    operations = [
        migrations.AddField(
            model_name="evaluation",
            name="missing",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="deferred parts not stored yet (the engine's DEFERRED names), sorted",
            ),
        ),
        migrations.AddField(
            model_name="evaluation",
            name="parts_failed",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="deferred part → why it was not worked out (failed, timed out, replaced)",
            ),
        ),
    ]
