"""What ``kube.parse_objects`` read from each Node and Pod, kept between parses of one
cluster, so a parse after a watch event reads again only the objects that changed.

::

    parse n:    (source, Kind/ns/name, uid, resourceVersion) ──► parsed Node / PodRecord
    parse n+1:  same key ──► the kept result (a PodRecord is handed out as a copy, since
                assembly replaces its pod and adds to its lists); a new key is parsed;
                keys no parse asked for since the last one are dropped (deleted or changed
                objects), so the cache holds one entry per object of the cluster.

The key is the object's identity and version as the API server gives them: every change
to an object, its status included, gives it a new ``metadata.resourceVersion``
(``k8s.io/apimachinery`` ``ObjectMeta.ResourceVersion``: "changes on every update"), and
an object is the same at the same uid and resourceVersion, which is what an informer's
store relies on too. Objects without both (exported files, manifests, the pods
``topology.kube.workloads`` makes from templates) are parsed every time. Only the first
pass is kept: the assembly (GPUs from slices, node groups, claims, gangs, admission)
depends on other objects and runs on every parse. An object that fails to parse is not
kept, so its error is reported by every parse, as without a cache.

Pure: a dictionary and counters; no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from topology.kube.fields import ObjectContext

Parsed = TypeVar("Parsed")
CacheKey = tuple[str, str, str, str]


@dataclass
class ParseCache:
    """Parsed Nodes and Pods by (source, object, uid, resourceVersion), for one cluster."""

    entries: dict[CacheKey, Any] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    _asked: dict[CacheKey, Any] = field(default_factory=dict)

    def begin(self) -> None:
        """A parse starts: count afresh and note which keys it asks for."""
        self.hits = self.misses = 0
        self._asked = {}

    def end(self) -> None:
        """A parse ended: keep only what it asked for (the cluster as it is now)."""
        self.entries = self._asked
        self._asked = {}

    def remember(
        self,
        ctx: ObjectContext,
        obj: Mapping[str, Any],
        parse: Callable[[ObjectContext, Any], Parsed],
        copy: Callable[[Parsed], Parsed] = lambda parsed: parsed,
    ) -> Parsed:
        """``parse(ctx, obj)``, or what it gave for this object at this version; ``copy``
        makes the caller's own instance of a mutable result."""
        key = cache_key(ctx, obj)
        if key is None:
            return parse(ctx, obj)
        if key in self.entries:
            parsed = self.entries[key]
            self.hits += 1
        else:
            parsed = parse(ctx, obj)  # raises for a bad object: nothing kept
            self.misses += 1
        self._asked[key] = parsed
        return copy(parsed)


def cache_key(ctx: ObjectContext, obj: Mapping[str, Any]) -> CacheKey | None:
    """(source, ``Kind/ns/name``, uid, resourceVersion); None without uid or version."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    uid, version = metadata.get("uid"), metadata.get("resourceVersion")
    if not (isinstance(uid, str) and uid and isinstance(version, str) and version):
        return None
    return (ctx.source, ctx.object, uid, version)
