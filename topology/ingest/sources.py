"""Where snapshots come from: the Kubernetes API (``topology.ingest.kubesource``), exported
files (``FilesSource``, here), the openb trace replay (``recommender.replay``).

::

    KubeSource    list + watch every kind of topology.ingest.kubekinds (read-only)
    FilesSource   read_objects(path) again when a file's mtime/size changed
    registered    kinds an app above registers (``register_source_kind``): the
                  openb trace replay binds pods through the engine, so it lives in
                  ``recommender.replay`` and registers "replay" when the app loads

Every source answers ``read(now)`` with a ``SourceRead`` (``topology.ingest.sourceread``).
``source_from_settings`` builds the one a Cluster row describes.

Not pure (network, files), but free of Django so the benchmark and tests can
drive it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from topology.ingest.files import read_objects
from topology.ingest.kubeapi import Backoff, api_client_from
from topology.ingest.kubesource import FORBIDDEN_AFTER_SECONDS, KubeSource
from topology.ingest.sourceread import Source, SourceRead

# --- exported files ----------------------------------------------------------------------------


class FilesSource:
    """A file or directory of exported objects, re-read only when a file changed."""

    def __init__(self, path: str | Path, *, max_bytes: int, max_objects: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_objects = max_objects
        self._signature: tuple[tuple[str, int, int], ...] | None = None

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        files = sorted(self.path.iterdir()) if self.path.is_dir() else [self.path]
        return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())

    def read(self, now: datetime) -> SourceRead:
        signature = self.signature()
        if signature == self._signature:
            return SourceRead()
        objects = read_objects(self.path, max_bytes=self.max_bytes, max_objects=self.max_objects)
        self._signature = signature
        return SourceRead(objects=objects)


# --- kinds registered by the apps above ---------------------------------------------------------

# factory(settings, *, cluster_name, data_dir) -> Source
SourceFactory = Callable[..., Source]
_REGISTERED_KINDS: dict[str, SourceFactory] = {}


def register_source_kind(kind: str, factory: SourceFactory) -> None:
    """Name a source kind an app above topology builds (its ``AppConfig.ready``)."""
    _REGISTERED_KINDS[kind] = factory


# --- from a cluster's stored settings -------------------------------------------------------------


def source_from_settings(
    kind: str,
    settings: Mapping[str, Any],
    *,
    cluster_name: str,
    data_dir: Path,
    max_bytes: int,
    max_objects: int,
    backoff: Backoff | None = None,
) -> Source:
    """Build the source a Cluster row describes (``source_kind`` + ``source_settings``);
    ``backoff``: the kube source's retries within one read."""
    if kind == "files":
        return FilesSource(settings["path"], max_bytes=max_bytes, max_objects=max_objects)
    if kind == "kube":
        api = api_client_from(
            kubeconfig=settings.get("kubeconfig"),
            context=settings.get("context"),
            in_cluster=bool(settings.get("in_cluster")),
        )
        return KubeSource(
            api,
            request_timeout_seconds=float(settings.get("request_timeout_seconds", 30)),
            backoff=backoff,
            forbidden_after_seconds=float(
                settings.get("forbidden_after_seconds", FORBIDDEN_AFTER_SECONDS)
            ),
        )
    factory = _REGISTERED_KINDS.get(kind)
    if factory is not None:
        return factory(settings, cluster_name=cluster_name, data_dir=data_dir)
    raise ValueError(f"unknown source kind {kind!r}")
