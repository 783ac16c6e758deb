"""``manage.py ingest CLUSTER [--source files --path P | --source kube --kubeconfig K]``.

Reads the cluster's source once (creating the cluster when a source is
given), stores the snapshot if its content changed, evaluates and publishes
it; when nothing changed, it evaluates the latest snapshot if that has none
yet (a worker's evaluation failed). Validation errors are printed as
``source: object: field: reason``; the rest of the input is kept. ``--follow``
keeps watching and ingesting.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import reset_queries
from django.utils import timezone

from recommender import events, selectors
from recommender.services import store_evaluation
from topology import services
from topology.hardware import ModelError
from topology.models import Cluster, Snapshot
from topology.sourceread import SourceError


class Command(BaseCommand):
    help = "Ingest one snapshot of a cluster from its source, then evaluate it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cluster", help="cluster name")
        parser.add_argument("--source", choices=[c.value for c in Cluster.SourceKind])
        parser.add_argument("--path", help="file or directory (files source)")
        parser.add_argument("--kubeconfig", help="kubeconfig path (kube source)")
        parser.add_argument("--context", help="kubeconfig context (kube source)")
        parser.add_argument("--in-cluster", action="store_true", help="use the pod's account")
        parser.add_argument("--follow", action="store_true", help="keep ingesting")
        parser.add_argument("--interval", type=int, default=30, help="seconds between ingests")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = self._cluster(options)
        while True:
            try:
                snapshot = services.ingest_from_source(cluster=cluster, now=timezone.now())
            except (ModelError, SourceError) as error:
                raise CommandError(str(error), returncode=2) from error
            if snapshot is None:
                self.stdout.write(f"{cluster.name}: unchanged")
                # its latest snapshot may still lack an evaluation (a worker's failed)
                snapshot = selectors.latest_unevaluated_snapshot(cluster_id=cluster.pk)
                if snapshot is not None:
                    self._evaluate(cluster, Snapshot.objects.get(pk=snapshot.pk))
            else:
                for error in snapshot.errors:
                    self.stderr.write(
                        ": ".join(
                            p for p in (error["source"], error["object"], error["field"]) if p
                        )
                        + f": {error['reason']}"
                    )
                unavailable = snapshot.object_counts.get("unavailable")
                if unavailable:
                    self.stdout.write(
                        f"{cluster.name}: not served by the cluster, read as none: "
                        + ", ".join(unavailable)
                    )
                self._evaluate(cluster, snapshot)
            if not options["follow"]:
                return
            reset_queries()  # DEBUG logs each query's SQL, the snapshot's JSON included
            time.sleep(options["interval"])

    def _evaluate(self, cluster: Cluster, snapshot: Snapshot) -> None:
        evaluation = store_evaluation(snapshot=snapshot)
        events.publish_evaluation(evaluation)
        self.stdout.write(
            f"{cluster.name}: snapshot {snapshot.pk} {snapshot.object_counts}, "
            f"{len(snapshot.errors)} errors; evaluation {evaluation.pk}: "
            f"{evaluation.pending_count} pending workloads"
        )

    def _cluster(self, options: dict[str, Any]) -> Cluster:
        name = options["cluster"]
        kind = options["source"]
        if kind is None:
            cluster = Cluster.objects.filter(name=name).first()
            if cluster is None:
                raise CommandError(f"no cluster {name!r}; give --source to create it")
            return cluster
        if kind == "files" and not options["path"]:
            raise CommandError("--source files needs --path")
        source_settings: dict[str, Any] = {}
        if kind == "files":
            source_settings = {"path": options["path"]}
        elif kind == "kube":
            source_settings = {
                "kubeconfig": options["kubeconfig"],
                "context": options["context"],
                "in_cluster": options["in_cluster"],
            }
        return services.save_cluster(name=name, source_kind=kind, source_settings=source_settings)
