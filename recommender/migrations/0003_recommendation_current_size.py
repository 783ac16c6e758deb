"""Recommendation.current_size: the group's size when evaluated (rows stored before: 0)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("recommender", "0002_evaluation_overview_figures"),
    ]

    operations = [
        migrations.AddField(
            model_name="recommendation",
            name="current_size",
            field=models.PositiveIntegerField(
                default=0,
                help_text="nodes in the group when evaluated (the YAML raises minSize from it)",
            ),
        ),
    ]
