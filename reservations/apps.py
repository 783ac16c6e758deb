from django.apps import AppConfig


class ReservationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "reservations"

    def ready(self) -> None:
        from recommender.signals import evaluation_stored
        from reservations import checks, receivers  # noqa: F401 - checks registers itself
        from topology.signals import stored_configuration

        stored_configuration.connect(
            receivers.stored_reservations, dispatch_uid="reservations.stored"
        )
        evaluation_stored.connect(
            receivers.store_idle_samples, dispatch_uid="reservations.idle_samples"
        )
