"""Reading exported Kubernetes objects and the openb trace from disk (not pure).

``read_objects`` turns a file, a directory of files (sorted) or ``-`` (stdin)
into ``(source, object)`` pairs for ``topology.kube.parse.parse_objects``. It accepts
JSON, YAML with several documents, and ``kind: List`` wrappers. Hostile input
is refused with a ModelError naming the limit: too many bytes, too many
objects, nesting deeper than ``MAX_DEPTH``, or YAML aliases that expand past
what the bytes could hold (a "billion laughs" bomb).
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from topology.ingest.trace import trace_nodes, trace_pods
from topology.kube.autoscaler.status import config_objects
from topology.kube.providers.cloud_reservations import export_objects
from topology.model.hardware import Cluster, ModelError

MAX_DEPTH = 64
DEFAULT_MAX_BYTES = 256 * 2**20
DEFAULT_MAX_OBJECTS = 1_000_000
STDIN = "-"
SUFFIXES = (".json", ".yaml", ".yml")
OPENB_NODE_LIST = "openb_node_list_gpu_node.csv"

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_objects(
    path_or_dash: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_objects: int = DEFAULT_MAX_OBJECTS,
    skipped: list[ModelError] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Every object in the file, directory or stdin, each with its source label.

    With ``skipped``, a file that is refused (not valid JSON/YAML, not objects,
    an alias bomb...) is recorded there and the other files are still read; the
    byte and object limits always raise.
    """
    objects: list[tuple[str, dict[str, Any]]] = []
    budget = [max_bytes, max_bytes]  # [remaining, limit]
    for source, data in _inputs(path_or_dash, budget):
        try:
            found = list(_objects_in(source, data))
        except ModelError as error:
            if skipped is None:
                raise
            skipped.append(error)
            continue
        for obj in found:
            objects.append((source, obj))
            if len(objects) > max_objects:
                raise ModelError(source, "", "", f"more than max_objects={max_objects} objects")
    return objects


def _inputs(path_or_dash: str | Path, budget: list[int]) -> Iterator[tuple[str, bytes]]:
    if str(path_or_dash) == STDIN:
        yield "<stdin>", _bounded(sys.stdin.buffer.read(budget[0] + 1), "<stdin>", budget)
        return
    path = Path(path_or_dash)
    files = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES) if path.is_dir() else [path]
    for file in files:
        yield str(file), _read_file(file, budget)


def _read_file(file: Path, budget: list[int]) -> bytes:
    try:
        with file.open("rb") as handle:
            data = handle.read(budget[0] + 1)
    except OSError as error:
        raise ModelError(str(file), "", "", f"unreadable: {error.strerror or error}") from None
    return _bounded(data, str(file), budget)


def _bounded(data: bytes, source: str, budget: list[int]) -> bytes:
    """Charge ``data`` against the byte budget shared by all files of one read."""
    if len(data) > budget[0]:
        raise ModelError(source, "", "", f"input larger than max_bytes={budget[1]}")
    budget[0] -= len(data)
    return data


def _objects_in(source: str, data: bytes) -> Iterator[dict[str, Any]]:
    for document in _documents(source, data):
        if document is None:
            continue
        exported = export_objects(document)  # a cloud CLI's JSON (reservations)
        if exported is None:
            exported = config_objects(document)  # an autoscaler's own config file
        if exported is not None:
            yield from exported
            continue
        if not isinstance(document, dict):
            raise ModelError(source, "", "", f"document is a {_type(document)}, not an object")
        if document.get("kind") == "List" or (
            str(document.get("kind", "")).endswith("List") and "items" in document
        ):
            yield from _list_items(source, document)
        else:
            yield document


def _list_items(source: str, document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    items = document.get("items")
    if items is None:
        return
    if not isinstance(items, list):
        raise ModelError(source, "List", "items", f"must be a list, got {_type(items)}")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ModelError(
                source, "List", f"items[{index}]", f"must be an object, got {_type(item)}"
            )
        yield item


def _documents(source: str, data: bytes) -> list[Any]:
    text = _decode(source, data)
    stripped = text.lstrip()
    try:
        if stripped[:1] in ("{", "["):
            try:
                documents = [json.loads(text)]
            except json.JSONDecodeError:
                documents = list(yaml.load_all(text, Loader=_Loader))  # noqa: S506 - safe loader
        else:
            documents = list(yaml.load_all(text, Loader=_Loader))  # noqa: S506 - safe loader
    except RecursionError:
        raise ModelError(source, "", "", f"nesting deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as error:
        raise ModelError(source, "", "", f"not valid YAML: {_yaml_reason(error)}") from None
    except (ValueError, TypeError) as error:
        raise ModelError(source, "", "", f"not valid JSON/YAML: {error}") from None
    _check_shape(source, documents, element_budget=len(data) + 1024)
    return documents


def _decode(source: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ModelError(source, "", "", f"not UTF-8 text (byte {error.start})") from None


def _yaml_reason(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return f"{problem} at line {mark.line + 1}" if mark is not None else str(problem)


def _check_shape(source: str, documents: list[Any], *, element_budget: int) -> None:
    """Walk what YAML built, bounding depth and expanded size.

    YAML aliases share one Python object, so loading is cheap, but every
    consumer walks the expansion. Without aliases a document cannot hold more
    elements than its bytes; more than that means alias expansion, refused.
    """
    stack: list[tuple[Any, int]] = [(doc, 1) for doc in documents]
    visited = 0
    while stack:
        value, depth = stack.pop()
        visited += 1
        if visited > element_budget:
            raise ModelError(
                source, "", "", f"YAML aliases expand past {element_budget} elements (alias bomb)"
            )
        if depth > MAX_DEPTH:
            raise ModelError(source, "", "", f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, child in value.items():
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise ModelError(source, "", "", f"unsupported mapping key type {_type(key)}")
                stack.append((child, depth + 1))
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value)


def _type(value: Any) -> str:
    names: dict[type, str] = {dict: "object", list: "list", str: "string"}
    return names.get(type(value), type(value).__name__)


# --- the openb trace ------------------------------------------------------------------


def read_openb(data_dir: str | Path, pod_list: str = "default", *, bound: bool = False) -> Cluster:
    """The openb trace's 1,213 GPU nodes and one pod list as a Cluster.

    ``data_dir`` is the ``alibaba-gpu-v2023`` folder (or its ``csv`` folder);
    ``pod_list`` names a variant, e.g. ``default``, ``gpushare40``.
    """
    folder = Path(data_dir)
    if (folder / "csv").is_dir():
        folder = folder / "csv"
    nodes = trace_nodes(_csv_rows(folder / OPENB_NODE_LIST))
    pods = trace_pods(_csv_rows(folder / f"openb_pod_list_{pod_list}.csv"), bound=bound)
    return Cluster(name=f"openb-{pod_list}", nodes=nodes, pods=pods)


def _csv_rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError as error:
        raise ModelError(str(path), "", "", f"unreadable: {error.strerror or error}") from None
