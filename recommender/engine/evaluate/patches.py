"""The NodeGroup size patch (RFC 7386 merge patch), shared by the cards and the group totals.

A merge patch sets an absolute size: ``minSize`` raised to the size wanted
(never lowered below what the group already says), ``maxSize`` only when the
size goes past it.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from typing import Any

NODE_GROUP_API_VERSION = "capacityweb.io/v1alpha1"


def size_patch(name: str, size: int, min_size: int | None, max_size: int | None) -> dict[str, Any]:
    """``min_size``/``max_size``: the group's own bounds, None when the group is unknown."""
    spec: dict[str, int] = {"minSize": size if min_size is None else max(size, min_size)}
    if max_size is not None and size > max_size:
        spec["maxSize"] = size
    return {
        "apiVersion": NODE_GROUP_API_VERSION,
        "kind": "NodeGroup",
        "metadata": {"name": name},
        "spec": spec,
    }
