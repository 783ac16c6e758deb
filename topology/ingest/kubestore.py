"""What the kube source keeps of each object: its slimmed JSON, packed, by uid, read
back one object at a time (``StoredObjects``), so a cluster of 20,000 pods costs its
compact JSON, not 20,000 decoded dicts.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from topology.ingest.sourceread import SourcedObject

# namespace, name (the order objects are read in) and the object as compact JSON
Stored = tuple[str, str, bytes]


def pack(obj: Mapping[str, Any]) -> Stored:
    namespace, name = namespaced_name(obj)
    return namespace, name, json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


class StoredObjects(Sequence[SourcedObject]):
    """A read's objects, each decoded from its stored JSON when it is reached, so a
    parse holds one decoded object at a time rather than the whole cluster."""

    def __init__(self, items: list[tuple[str, Stored]]) -> None:
        self._items = items

    def counts(self) -> dict[str, int]:
        """Objects per kind key (``Node``, ``Job.batch``), none decoded."""
        counted: dict[str, int] = {}
        for source, _ in self._items:
            key = source.removeprefix("kube:")
            counted[key] = counted.get(key, 0) + 1
        return counted

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> SourcedObject: ...
    @overload
    def __getitem__(self, index: slice) -> list[SourcedObject]: ...
    def __getitem__(self, index: int | slice) -> SourcedObject | list[SourcedObject]:
        if isinstance(index, slice):
            return [(source, json.loads(packed[2])) for source, packed in self._items[index]]
        source, packed = self._items[index]
        return source, json.loads(packed[2])

    def __iter__(self) -> Iterator[SourcedObject]:
        for source, packed in self._items:
            yield source, json.loads(packed[2])


def object_uid(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    uid = metadata.get("uid")
    if uid:
        return str(uid)
    namespace, name = namespaced_name(obj)
    return f"{namespace}/{name}"


def namespaced_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
