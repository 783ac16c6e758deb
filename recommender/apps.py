from django.apps import AppConfig


class RecommenderConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "recommender"

    def ready(self) -> None:
        from recommender import receivers, replay
        from recommender.signals import evaluation_stored
        from topology import signals
        from topology.ingest.sources import register_source_kind

        register_source_kind("replay", replay.source_from_settings)

        signals.snapshot_ingested.connect(
            receivers.announce_ingested_snapshot, dispatch_uid="recommender.announce"
        )
        signals.snapshot_ingested.connect(
            receivers.evaluate_ingested_snapshot, dispatch_uid="recommender.evaluate"
        )
        signals.ingest_unchanged.connect(
            receivers.evaluate_unevaluated_latest, dispatch_uid="recommender.evaluate_latest"
        )
        # the deferred parts first: their tasks reuse the critical pass the worker keeps
        evaluation_stored.connect(
            receivers.work_out_parts_later, dispatch_uid="recommender.work_out_parts"
        )
        evaluation_stored.connect(
            receivers.keep_breakdowns, dispatch_uid="recommender.keep_breakdowns"
        )
        evaluation_stored.connect(receivers.find_moves_later, dispatch_uid="recommender.find_moves")
