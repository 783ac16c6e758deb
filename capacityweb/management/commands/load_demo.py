"""``manage.py load_demo``: the openb demo cluster, its reservations, node groups and schedule."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from capacityweb.demo import DEMO_CLUSTER_NAME, load_demo


class Command(BaseCommand):
    help = (
        f"Create (or refresh) the {DEMO_CLUSTER_NAME!r} cluster from the real openb trace, "
        "with demo reservations, node groups and pending gangs, and evaluate it once."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        cluster, evaluation = load_demo(now=timezone.now())
        self.stdout.write(
            f"{cluster.name} (id {cluster.pk}): snapshot {evaluation.snapshot_id}, "
            f"evaluation {evaluation.pk}: {evaluation.gpus} GPUs, "
            f"{evaluation.gpus_allocated} allocated, {evaluation.pending_count} pending "
            f"workloads, in {time.monotonic() - started:.1f}s"
        )
