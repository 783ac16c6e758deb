"""``manage.py replay [--mode time|fill] [--pod-list default] [--speed N] [--steps K]``.

The openb trace, step by step. Mode ``time`` follows the trace's own clock:
each step advances trace time by ``speed × interval`` seconds. Mode ``fill``
is the FGD paper's protocol the demo runs: the pod list arrives in a seeded
order until ``--max-pending`` pods no longer fit, then each step the oldest
``--pods-per-step`` pods leave and as many arrive. Either way a step stores
the snapshot (skipped when nothing changed), evaluates it and publishes it
to the live pages — the flow the periodic ingest runs, with a progress bar.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone
from tqdm import tqdm

from recommender import events
from recommender.replay import BUSIEST_TRACE_SECONDS, REPLAY_MODES
from recommender.services import store_evaluation
from topology import services
from topology.models import Cluster


class Command(BaseCommand):
    help = "Replay the openb trace through time, storing and evaluating a snapshot per step."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", default="openb-replay", help="cluster name")
        parser.add_argument("--mode", choices=REPLAY_MODES, default="time")
        parser.add_argument("--pod-list", default="default", help="openb pod list variant")
        parser.add_argument("--speed", type=float, default=600.0, help="trace s per wall s")
        parser.add_argument("--steps", type=int, default=10)
        parser.add_argument("--interval", type=float, default=30.0, help="wall s per step")
        parser.add_argument("--start", type=float, default=BUSIEST_TRACE_SECONDS, help="trace s")
        parser.add_argument(
            "--max-pending", type=int, default=25, help="fill: arrive until this many wait"
        )
        parser.add_argument("--pods-per-step", type=int, default=20, help="fill: pods per step")
        parser.add_argument("--seed", type=int, default=0, help="fill: arrival order")
        parser.add_argument("--data-dir", default=str(services.TRACE_DATA_DIR))

    def handle(self, *args: Any, **options: Any) -> None:
        origin = timezone.now()
        settings = {
            "pod_list": options["pod_list"],
            "speed": options["speed"],
            "start_seconds": options["start"],
            "origin": origin.isoformat(),
            "data_dir": options["data_dir"],
            "mode": options["mode"],
            "max_pending": options["max_pending"],
            "pods_per_tick": options["pods_per_step"],
            "tick_seconds": options["interval"],
            "seed": options["seed"],
        }
        cluster, _created = Cluster.objects.update_or_create(
            name=options["cluster"],
            defaults={"source_kind": Cluster.SourceKind.REPLAY, "source_settings": settings},
        )
        stored = 0
        for step in tqdm(range(options["steps"]), desc=cluster.name, unit="step"):
            now = origin + timedelta(seconds=step * options["interval"])
            snapshot = services.ingest_snapshot(
                cluster=cluster,
                taken_at=now,
                model=services.read_source(cluster=cluster, now=now).model,
            )
            if snapshot is None:
                continue
            events.publish_evaluation(store_evaluation(snapshot=snapshot))
            stored += 1
        self.stdout.write(f"{cluster.name}: {stored} of {options['steps']} steps stored")
