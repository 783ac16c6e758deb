from django.apps import AppConfig


class TopologyConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "topology"
