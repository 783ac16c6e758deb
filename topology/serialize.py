"""Cluster ⇄ JSON-ready dict, exact and deterministic (how a snapshot is stored).

Pure. Generic over the frozen dataclasses of ``topology.hardware``: each
dataclass becomes a dict of its fields (snake_case, as in the model), tuples
become lists, frozensets sorted lists, mappings dicts with sorted keys, datetimes
ISO 8601 strings. The reverse walks the type hints, so ``cluster_from_json`` rebuilds
the same objects and ``cluster_to_json(cluster_from_json(x)) == x``; dumped
with ``sort_keys=True`` the same cluster always gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

from topology import hardware
from topology.hardware import Cluster

SCHEMA_VERSION = 1


def cluster_to_json(cluster: Cluster) -> dict[str, Any]:
    return {"schemaVersion": SCHEMA_VERSION, "cluster": _dump(cluster)}


def cluster_from_json(data: Mapping[str, Any]) -> Cluster:
    if data.get("schemaVersion") != SCHEMA_VERSION:
        raise ValueError(f"unsupported schemaVersion {data.get('schemaVersion')!r}")
    cluster: Cluster = _load(Cluster, data["cluster"])
    return cluster


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
