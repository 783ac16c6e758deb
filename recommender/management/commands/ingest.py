"""``manage.py ingest CLUSTER [--source files --path P | --source kube --kubeconfig K]``.

Reads the cluster's source once (creating the cluster when a source is
given, which open overviews are told of), stores the snapshot if its content
changed, evaluates and publishes it (``recommender.events``: through a shared
channel layer, to every open page; beside `make run`, its watcher announces it): the
critical pass first (verdicts, plans, recommendations: what the pages need), then the
deferred parts (``recommender.parts``), by the workers where a broker is configured,
else here, each published when stored;
when nothing changed, it evaluates the latest snapshot if that has none yet (a
worker's evaluation failed). Validation errors are printed as
``source: object: field: reason``; the rest of the input is kept. A source
refused as a whole (a file that does not parse, an API server that does not
answer) stores nothing and exits 2 naming it; the previous snapshot stays.
``--follow`` keeps reading (``topology.follow``): it holds the cluster's ingest
lock, so the worker's periodic ingest stands aside, and it never gives up on an
unreachable source. Either exits 1 when another ingester holds the lock
(``--follow`` stands by instead).
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from recommender import events, parts, selectors
from recommender.services import store_critical_pass
from recommender.tasks import work_out_part
from topology import services
from topology.follow import Follower, LockHeld, holder_name
from topology.ingest.sourceread import SourceError
from topology.model.hardware import ModelError
from topology.models import Cluster, Snapshot


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
        cluster, source = self._cluster(options)
        role = "ingest --follow" if options["follow"] else "ingest"
        follower = Follower(
            cluster=cluster,
            source=source,
            holder=holder_name(role),
            interval_seconds=options["interval"],
            on_snapshot=self._report,
            on_unchanged=lambda: self._evaluate_waiting(cluster),
            say=self.stdout.write,
        )
        if options["follow"]:
            stopping = _exit_on_sigterm()  # so the lock is released, not left to lapse
            follower.run(stop=stopping.is_set)
            return
        try:
            follower.once()
        except LockHeld as error:
            raise CommandError(f"{error}: not ingesting twice") from error
        except (ModelError, SourceError) as error:
            raise CommandError(f"{error}; the previous snapshot stays", returncode=2) from error

    def _evaluate_waiting(self, cluster: Cluster) -> None:
        """Nothing changed, but the latest snapshot may still lack an evaluation (a
        worker's failed): evaluate it now."""
        waiting = selectors.latest_unevaluated_snapshot(cluster_id=cluster.pk)
        if waiting is not None:
            self._report(Snapshot.objects.get(pk=waiting.pk))

    def _report(self, snapshot: Snapshot) -> None:
        """Print the snapshot's rejected objects, then evaluate and publish it."""
        for error in snapshot.errors:
            self.stderr.write(
                ": ".join(p for p in (error["source"], error["object"], error["field"]) if p)
                + f": {error['reason']}"
            )
        name = snapshot.cluster.name
        unavailable = snapshot.object_counts.get("unavailable")
        if unavailable:
            self.stdout.write(
                f"{name}: not served by the cluster, read as none: " + ", ".join(unavailable)
            )
        evaluation, critical = store_critical_pass(
            snapshot=snapshot, json_cache=services.json_cache(cluster=snapshot.cluster)
        )
        self.stdout.write(
            f"{name}: snapshot {snapshot.pk} {snapshot.object_counts}, "
            f"{len(snapshot.errors)} errors; evaluation {evaluation.pk}: "
            f"{evaluation.pending_count} pending workloads"
        )
        if settings.EMBEDDED_WORKER:
            # no broker a worker reads: the parts' tasks would wait in this process's
            # memory, so they are worked out here, each published when stored
            parts.keep(evaluation, critical)
            stored_at = evaluation.stored_at.isoformat()
            for part in evaluation.missing or ():
                work_out_part(evaluation.pk, stored_at, part)

    def _cluster(
        self, options: dict[str, Any]
    ) -> tuple[Cluster, tuple[str, dict[str, Any]] | None]:
        """The cluster, and the source to save on it once the ingest lock is held (an
        existing cluster's: while another ingester holds the lock, its reads and the
        worker's periodic ingest keep the cluster's own source). A new cluster is made
        with its source at once (nothing can hold its lock yet)."""
        name = options["cluster"]
        kind = options["source"]
        existing = Cluster.objects.filter(name=name).first()
        if kind is None:
            if existing is None:
                raise CommandError(f"no cluster {name!r}; give --source to create it")
            return existing, None
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
        if existing is not None:
            return existing, (kind, source_settings)
        cluster = services.save_cluster(
            name=name, source_kind=kind, source_settings=source_settings
        )
        events.publish_clusters()  # open overviews add its card
        return cluster, None


def _exit_on_sigterm() -> threading.Event:
    """SIGTERM (a stop, a rollout) unwinds like Ctrl-C, releasing the ingest lock. The
    exit is raised wherever the main thread is, which may be a finalizer (an event
    loop's ``__del__`` during a collection) that swallows it: the event it sets then
    stops the follower at the end of its current wait."""
    stopping = threading.Event()

    def stop(_signum: int, _frame: object) -> None:
        stopping.set()
        sys.exit(0)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
    return stopping
