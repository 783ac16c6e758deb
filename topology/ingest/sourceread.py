"""What every snapshot source answers: a ``SourceRead`` of Kubernetes objects for
``kube.parse_objects``, or an already built model, or nothing (unchanged).

Sources (``topology.ingest.kubesource``, ``topology.ingest.sources.FilesSource``,
``recommender.replay``) never write to a cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from topology.model.hardware import Cluster

KubeObject = dict[str, Any]
SourcedObject = tuple[str, KubeObject]


@dataclass(frozen=True)
class SourceRead:
    """One read of a source: objects to parse, or a model, or neither (unchanged)."""

    objects: Sequence[SourcedObject] | None = None
    model: Cluster | None = None
    # kinds the cluster does not serve (a CRD not installed): read as none, said, no error
    unavailable: tuple[str, ...] = ()
    # kind key → {"state", "version", "reason"} (topology.ingest.kubesource.KindStatus), kube only
    kinds: dict[str, dict[str, str]] = field(default_factory=dict)
    # a source that counts its changes (kube): a number that changes whenever what it
    # holds changed, never repeated within a process; None: not counted
    generation: int | None = None
    # kind key → objects read of it (kube only): with ``kinds``, part of what a snapshot
    # stores, so a kind turning forbidden is a change even when the model is not
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def unchanged(self) -> bool:
        return self.objects is None and self.model is None


class Source(Protocol):
    def read(self, now: datetime) -> SourceRead: ...


class SourceError(Exception):
    """A source could not be read as a whole; the message says on what."""


class SourceUnreachable(SourceError):
    """The source did not answer (connection errors, 5xx) within one read's retries.

    The source keeps what it had read (stores, resourceVersions): the caller keeps the
    previous snapshot, says so, and reads again later (``topology.follow``), resuming.
    ``kinds``: each kind's status at the failed read, as ``SourceRead.kinds``.
    """

    def __init__(self, message: str, kinds: dict[str, dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.kinds = kinds or {}
