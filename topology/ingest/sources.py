"""Where snapshots come from: the Kubernetes API (``topology.kubesource``), exported
files (``FilesSource``, here), the openb trace replay (``topology.replay``).

::

    KubeSource    list + watch every kind of topology.kubekinds (read-only)
    FilesSource   read_objects(path) again when a file's mtime/size changed
    ReplaySource  the openb trace: at simulated time t (mode "time"), or as a
                  workload mix filling the cluster (mode "fill", a window per tick)

Every source answers ``read(now)`` with a ``SourceRead`` (``topology.sourceread``).
``source_from_settings`` builds the one a Cluster row describes.

Not pure (network, files), but free of Django so the benchmark and tests can
drive it directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from topology.files import read_objects
from topology.kubesource import Backoff, KubeSource, api_client_from
from topology.replay import ReplaySource
from topology.replayspecs import GangSpec, TeamSpec
from topology.sourceread import Source, SourceRead

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
        )
    if kind == "replay":
        return ReplaySource(
            data_dir=Path(settings.get("data_dir") or data_dir),
            cluster_name=cluster_name,
            origin=datetime.fromisoformat(settings["origin"]),
            pod_list=settings.get("pod_list", "default"),
            speed=float(settings.get("speed", 600.0)),
            start_seconds=float(settings.get("start_seconds", 0.0)),
            zones=int(settings.get("zones", 2)),
            blocks_per_zone=int(settings.get("blocks_per_zone", 3)),
            racks_per_block=int(settings.get("racks_per_block", 4)),
            seed=int(settings.get("seed", 0)),
            reserved_nodes=tuple(settings.get("reserved_nodes") or ()),
            gangs=tuple(GangSpec.from_json(g) for g in settings.get("gangs") or ()),
            mode=str(settings.get("mode", "time")),
            fill_target=float(settings.get("fill_target", 0.9)),
            max_pending=int(settings.get("max_pending", 25)),
            tick_seconds=float(settings.get("tick_seconds", 60.0)),
            pods_per_tick=int(settings.get("pods_per_tick", 20)),
            ticks_per_cycle=int(settings.get("ticks_per_cycle", 60)),
            teams=tuple(TeamSpec.from_json(t) for t in settings.get("teams") or ()),
            objects=tuple(settings.get("objects") or ()),
        )
    raise ValueError(f"unknown source kind {kind!r}")
