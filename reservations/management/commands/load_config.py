"""``manage.py load_config CLUSTER PATH``: NodeGroup and Reservation objects from YAML/JSON.

The objects are validated by the same parser as every snapshot; on the first
error nothing is saved and the command prints ``source: object: field:
reason`` and exits 2.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reservations import services
from topology.ingest.files import read_objects
from topology.model.hardware import ModelError
from topology.models import Cluster


class Command(BaseCommand):
    help = "Load NodeGroup and Reservation objects (capacityweb.io/v1alpha1) into a cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cluster", help="cluster name")
        parser.add_argument("path", help="file, directory or - for stdin")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster {options['cluster']!r}")
        try:
            objects = read_objects(
                options["path"],
                max_bytes=settings.MAX_SNAPSHOT_BYTES,
                max_objects=settings.MAX_SNAPSHOT_OBJECTS,
            )
            counts = services.load_configuration(cluster=cluster, objects=objects)
        except ModelError as error:
            raise CommandError(str(error), returncode=2) from error
        self.stdout.write(
            f"{cluster.name}: {counts['nodeGroups']} node groups, "
            f"{counts['reservations']} reservations loaded"
        )
