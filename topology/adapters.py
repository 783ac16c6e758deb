"""ORM ⇄ engine for the topology app: the only place rows become hardware dataclasses.

Stored NodeGroup rows a user wrote become ``capacityweb.io/v1alpha1`` objects and go
through ``kube.parse_objects`` like any other input, so admin edits and YAML
files are validated by the same parser. The groups a source gave are written back as
rows (``source_group_row_fields``) to be listed, never read back as input.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from topology.kube import parse as kube
from topology.model import hardware, serialize
from topology.models import Cluster, NodeGroup, Snapshot

PROJECT_API_VERSION = "capacityweb.io/v1alpha1"
STORED_SOURCE = "stored"


def cluster_from_snapshot(
    snapshot: Snapshot, cache: serialize.JsonCache | None = None
) -> hardware.Cluster:
    return serialize.cluster_from_json(snapshot.model_json, cache)


def topology_of(cluster: Cluster) -> hardware.Topology | None:
    """The cluster's configured levels, or None to keep what the source said."""
    if not cluster.topology_levels:
        return None
    return hardware.Topology(
        tuple(
            hardware.TopologyLevel(
                key=str(level["key"]), name=str(level.get("name") or level["key"])
            )
            for level in cluster.topology_levels
        )
    )


def node_group_object(row: NodeGroup) -> dict[str, Any]:
    """The row as the NodeGroup object it stores. A size or price column counts where the
    spec sets it or the column was set apart from it (the admin edits columns); one the
    spec leaves out and no one set stays out, so a row overriding part of a discovered
    group (its template, say) keeps the rest as found, not sized 0 and priced 0."""
    columns = {
        "pricePerNodeHour": row.price_per_node_hour,
        "minSize": row.min_size,
        "maxSize": row.max_size,
    }
    spec = {
        **row.spec,
        **{key: value for key, value in columns.items() if key in row.spec or value},
    }
    return {
        "apiVersion": PROJECT_API_VERSION,
        "kind": "NodeGroup",
        "metadata": {"name": row.name},
        "spec": spec,
    }


def source_group_row_fields(group: hardware.NodeGroup) -> dict[str, Any]:
    """Column values for the row of a group the source gave (discovered, or a NodeGroup
    in the exported files): its spec as the DESIGN.md NodeGroup spec (the template's
    labels, taints and allocatable, GPUs as their count; DRA devices are not written
    out), where it was found and its size."""
    spec = {
        "nodeSelector": dict(group.node_selector),
        "minSize": group.min_size,
        "maxSize": group.max_size,
        "pricePerNodeHour": group.price_per_node_hour,
        "template": _template_spec(group.template),
    }
    return {
        "spec": spec,
        "price_per_node_hour": group.price_per_node_hour,
        "min_size": group.min_size,
        "max_size": group.max_size,
        "origin": NodeGroup.Origin.SOURCE,
        "source": (group.source or "")[:300],
        "current_size": group.current_size,
    }


def _template_spec(node: hardware.Node) -> dict[str, Any]:
    resources = node.allocatable
    allocatable = {
        "cpu": f"{resources.cpu_milli}m",
        "memory": str(resources.memory_bytes),
        "pods": str(resources.pods),
        **{name: str(value) for name, value in sorted(resources.extended.items())},
    }
    if node.gpus:
        allocatable["nvidia.com/gpu"] = str(len(node.gpus))
    taints = [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints]
    return {"labels": dict(node.labels), "taints": taints, "allocatable": allocatable}


def node_group_row_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Column values for a NodeGroup row from a NodeGroup object (YAML/JSON)."""
    spec = dict(obj.get("spec") or {})
    return {
        "spec": spec,
        "price_per_node_hour": float(spec.get("pricePerNodeHour") or 0.0),
        "min_size": int(spec.get("minSize") or 0),
        "max_size": int(spec.get("maxSize") or 0),
    }


def with_stored_configuration(
    model: hardware.Cluster,
    *,
    cluster: Cluster,
    stored_objects: Sequence[dict[str, Any]],
    source_objects: Iterable[kube.SourcedObject] = (),
) -> tuple[hardware.Cluster, tuple[hardware.ModelError, ...]]:
    """The source's model plus the node groups and reservations kept in the database.

    A stored node group overrides the source's group of the same name field by
    field (a discovered group keeps its source and autoscaler: the actions still
    name the real pool); a stored reservation replaces the source's of the same
    name. Every node's group and every group's current size are worked out again
    against the merged groups (a group known only from the database still counts
    the source's nodes); the cluster's configured topology levels, when set,
    replace the source's.

    ``source_objects``: what the source read; its cluster-autoscaler status ConfigMap is
    read again with the stored groups, so a stored NodeGroup templating a pool with no
    node yet gets the bounds and autoscaler cluster-autoscaler gives that pool.
    """
    autoscaler_status = [
        (source, obj) for source, obj in source_objects if kube.is_autoscaler_status(obj)
    ]
    parsed = kube.parse_objects(
        [*autoscaler_status, *((STORED_SOURCE, obj) for obj in stored_objects)],
        cluster_name=cluster.name,
        discovered_groups=model.node_groups,
        daemon_pods=model.daemon_pods,
    )
    stored = parsed.cluster
    nodes, node_groups = kube.assign_node_groups(model.nodes, stored.node_groups)
    reservations = _merged(model.reservations, stored.reservations)
    topology = topology_of(cluster) or model.topology
    merged = replace(
        model,
        name=cluster.name,
        topology=topology,
        nodes=nodes,
        node_groups=node_groups,
        reservations=reservations,
    )
    return merged, parsed.errors


def _merged(source: Iterable[Any], stored: Iterable[Any]) -> tuple[Any, ...]:
    by_name = {item.name: item for item in source}
    by_name.update({item.name: item for item in stored})
    return tuple(by_name[name] for name in sorted(by_name))
