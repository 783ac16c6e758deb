"""What every snapshot source answers: a ``SourceRead`` of Kubernetes objects for
``kube.parse_objects``, or an already built model, or nothing (unchanged).

Sources (``topology.kubesource``, ``topology.sources.FilesSource``,
``topology.replay``) never write to a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from topology.hardware import Cluster

KubeObject = dict[str, Any]
SourcedObject = tuple[str, KubeObject]


@dataclass(frozen=True)
class SourceRead:
    """One read of a source: objects to parse, or a model, or neither (unchanged)."""

    objects: list[SourcedObject] | None = None
    model: Cluster | None = None
    # kinds the cluster does not serve (a CRD not installed): read as none, said, no error
    unavailable: tuple[str, ...] = ()

    @property
    def unchanged(self) -> bool:
        return self.objects is None and self.model is None


class Source(Protocol):
    def read(self, now: datetime) -> SourceRead: ...


class SourceError(Exception):
    """A source gave up after its bounded retries; the message says on what."""
