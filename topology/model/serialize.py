"""Cluster ⇄ JSON-ready dict, exact and deterministic (how a snapshot is stored).

Pure. Generic over the frozen dataclasses of ``topology.model.hardware``: each
dataclass becomes a dict of its fields (snake_case, as in the model), tuples
become lists, frozensets sorted lists, mappings dicts with sorted keys, datetimes
ISO 8601 strings. The reverse walks the type hints, so ``cluster_from_json`` rebuilds
the same objects and ``cluster_to_json(cluster_from_json(x)) == x``; dumped
with ``sort_keys=True`` the same cluster always gives the same bytes.

A ``JsonCache`` keeps each node's and pod's JSON (and what it loads back as) between
the successive models of one cluster: a model where one pod changed dumps and loads
that pod again, the others are the kept ones. An element is kept by kind, namespace
and name and used only for an equal element (the same object, or ``==``), so the JSON
is what ``_dump``/``_load`` give, cache or not. The JSON a cache gives shares those
kept dicts with the previous model's: read it, never change it in place.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import cache
from typing import Any

from topology.model import hardware
from topology.model.hardware import Cluster

SCHEMA_VERSION = 1
# The Cluster fields dumped and loaded element by element through a JsonCache: the
# ones with an element per node or pod, which is where a model's size is.
ELEMENTWISE_FIELDS = ("nodes", "pods")
ElementKey = tuple[str, str]  # (namespace or "", name)


@dataclasses.dataclass
class JsonCache:
    """The JSON of each node and pod of the last model dumped, and the node or pod each
    JSON element last loaded as, for one cluster (see the module docstring)."""

    dumped: dict[str, dict[ElementKey, tuple[Any, Any]]] = dataclasses.field(default_factory=dict)
    loaded: dict[str, dict[ElementKey, tuple[Any, Any]]] = dataclasses.field(default_factory=dict)
    hits: int = 0
    misses: int = 0

    def dump_each(self, field_name: str, items: tuple[Any, ...]) -> list[Any]:
        kept = self.dumped.get(field_name, {})
        now: dict[ElementKey, tuple[Any, Any]] = {}
        out = []
        for item in items:
            key = (getattr(item, "namespace", ""), item.name)
            entry = kept.get(key)
            if entry is not None and (entry[0] is item or entry[0] == item):
                dumped = entry[1]
                self.hits += 1
            else:
                dumped = _dump(item)
                self.misses += 1
            now[key] = (item, dumped)
            out.append(dumped)
        self.dumped[field_name] = now
        return out

    def load_each(self, field_name: str, hint: Any, values: list[Any]) -> tuple[Any, ...]:
        element_hint = typing.get_args(hint)[0]
        kept = self.loaded.get(field_name, {})
        now: dict[ElementKey, tuple[Any, Any]] = {}
        out = []
        for value in values:
            key = (str(value.get("namespace") or ""), str(value.get("name")))
            entry = kept.get(key)
            if entry is not None and (entry[0] is value or entry[0] == value):
                loaded = entry[1]
                self.hits += 1
            else:
                loaded = _load(element_hint, value)
                self.misses += 1
            now[key] = (value, loaded)
            out.append(loaded)
        self.loaded[field_name] = now
        return tuple(out)


def cluster_to_json(cluster: Cluster, cache: JsonCache | None = None) -> dict[str, Any]:
    if cache is None:
        return {"schemaVersion": SCHEMA_VERSION, "cluster": _dump(cluster)}
    body = {
        f.name: (
            cache.dump_each(f.name, getattr(cluster, f.name))
            if f.name in ELEMENTWISE_FIELDS
            else _dump(getattr(cluster, f.name))
        )
        for f in dataclasses.fields(cluster)
    }
    return {"schemaVersion": SCHEMA_VERSION, "cluster": body}


def cluster_from_json(data: Mapping[str, Any], cache: JsonCache | None = None) -> Cluster:
    if data.get("schemaVersion") != SCHEMA_VERSION:
        raise ValueError(f"unsupported schemaVersion {data.get('schemaVersion')!r}")
    if cache is None:
        cluster: Cluster = _load(Cluster, data["cluster"])
        return cluster
    hints = _hints(Cluster)
    fields: dict[str, Any] = {
        name: (
            cache.load_each(name, hints[name], value)
            if name in ELEMENTWISE_FIELDS and value is not None
            else _load(hints[name], value)
        )
        for name, value in data["cluster"].items()
    }
    return Cluster(**fields)


def canonical_chunks(value: Any, depth: int = 4) -> Iterator[str]:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    in pieces that join to exactly that text: dicts (of string keys) and lists down to
    ``depth`` levels are opened here, what lies deeper is dumped whole. Hashing the
    pieces hashes the text without ever holding it (a 2,000-node model's is 30 MB, its
    pieces a node or pod each at the default depth: content, model, cluster, nodes)."""
    if depth and isinstance(value, dict) and all(isinstance(key, str) for key in value):
        yield "{"
        for index, key in enumerate(sorted(value)):
            yield ("," if index else "") + _canonical(key) + ":"
            yield from canonical_chunks(value[key], depth - 1)
        yield "}"
    elif depth and isinstance(value, list):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from canonical_chunks(item, depth - 1)
        yield "]"
    else:
        yield _canonical(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _dump(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _dump(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_dump(item) for item in value]
    if isinstance(value, frozenset | set):
        return sorted(_dump(item) for item in value)
    if isinstance(value, Mapping):
        return {str(k): _dump(value[k]) for k in sorted(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(hardware))


def _load(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        hints = _hints(hint)  # type: ignore[arg-type]
        return hint(**{name: _load(hints[name], item) for name, item in value.items()})  # type: ignore[operator]
    if origin in (typing.Union, types.UnionType):
        return _load_union(typing.get_args(hint), value)
    if origin is tuple:
        args = typing.get_args(hint)
        return tuple(_load(args[0], item) for item in value)
    if origin is frozenset:
        return frozenset(_load(typing.get_args(hint)[0], item) for item in value)
    if origin in (Mapping, dict) or hint in (Mapping, dict):
        args = typing.get_args(hint) or (str, Any)
        return {k: _load(args[1], v) for k, v in value.items()}
    if hint is datetime:
        return datetime.fromisoformat(value)
    if hint is float and isinstance(value, int):
        return float(value)
    return value


def _load_union(options: tuple[Any, ...], value: Any) -> Any:
    concrete = [o for o in options if o is not type(None)]
    if len(concrete) == 1:
        return _load(concrete[0], value)
    if isinstance(value, list):  # str | int | bool | tuple[str, ...] (selector values)
        return tuple(value)
    if datetime in concrete and isinstance(value, str):
        return datetime.fromisoformat(value)
    return value
