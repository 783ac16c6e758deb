"""``manage.py replay [--pod-list default] [--speed N] [--steps K]``: the openb trace over time.

Each step advances trace time by ``speed × interval`` seconds, stores the
snapshot at that time (skipped when nothing changed), evaluates it and
publishes it to the live pages — the flow the periodic ingest runs, here
driven step by step with a progress bar.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone
from tqdm import tqdm

from recommender import events
from recommender.services import store_evaluation
from topology import services
from topology.demo import DEMO_START_SECONDS
from topology.models import Cluster
from topology.sources import ReplaySource


class Command(BaseCommand):
    help = "Replay the openb trace through time, storing and evaluating a snapshot per step."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", default="openb-replay", help="cluster name")
        parser.add_argument("--pod-list", default="default", help="openb pod list variant")
        parser.add_argument("--speed", type=float, default=600.0, help="trace s per wall s")
        parser.add_argument("--steps", type=int, default=10)
        parser.add_argument("--interval", type=float, default=30.0, help="wall s per step")
        parser.add_argument("--start", type=float, default=DEMO_START_SECONDS, help="trace s")
        parser.add_argument("--data-dir", default=str(services.SHARED_DATA_DIR))

    def handle(self, *args: Any, **options: Any) -> None:
        origin = timezone.now()
        settings = {
            "pod_list": options["pod_list"],
            "speed": options["speed"],
            "start_seconds": options["start"],
            "origin": origin.isoformat(),
            "data_dir": options["data_dir"],
        }
        cluster, _created = Cluster.objects.update_or_create(
            name=options["cluster"],
            defaults={"source_kind": Cluster.SourceKind.REPLAY, "source_settings": settings},
        )
        source = ReplaySource(
            data_dir=Path(options["data_dir"]),
            cluster_name=cluster.name,
            origin=origin,
            pod_list=options["pod_list"],
            speed=options["speed"],
            start_seconds=options["start"],
        )
        stored = 0
        for step in tqdm(range(options["steps"]), desc=cluster.name, unit="step"):
            now = origin + timedelta(seconds=step * options["interval"])
            snapshot = services.ingest_snapshot(
                cluster=cluster, taken_at=now, model=source.read(now).model
            )
            if snapshot is None:
                continue
            events.publish_evaluation(store_evaluation(snapshot=snapshot))
            stored += 1
        self.stdout.write(f"{cluster.name}: {stored} of {options['steps']} steps stored")
