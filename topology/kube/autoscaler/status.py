"""cluster-autoscaler's own objects: the status ConfigMap
(``kube-system/cluster-autoscaler-status``) → one ``CaGroupStatus`` per node group, and
the kwok provider config (read, said, not modelled).

Upstream behaviour followed: kubernetes/autoscaler
``cluster-autoscaler/clusterstate/api/types.go`` and ``clusterstate/utils/status.go``:
the status ConfigMap's ``status`` key holds ``ClusterAutoscalerStatus`` as YAML (CA >=
1.30: ``nodeGroups[].name``, ``health.cloudProviderTarget``, ``minSize``, ``maxSize``,
``nodeCounts.registered``); before, the readable text of ``clusterstate.go``
``buildHealthStatusNodeGroup``: ``Name: X`` then ``Health: Healthy (ready=1 ...
registered=1 ... cloudProviderTarget=1 (minSize=1, maxSize=5))``.

Pure: no Django, no I/O. ``topology.kube.parse`` dispatches ConfigMaps here; every ConfigMap
but the status one is counted ignored. ``topology.kube.discovery`` joins the groups to
managed pools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from topology.kube.autoscaler.events import ca_status_events
from topology.kube.fields import ObjectContext
from topology.model.hardware import (
    ModelError,
)

CA_STATUS_NAMESPACE = "kube-system"
CA_STATUS_NAME = "cluster-autoscaler-status"
_PAIR = re.compile(r"(\w+)=(\d+)")


@dataclass(frozen=True, slots=True)
class CaGroupStatus:
    """One node group as cluster-autoscaler's status ConfigMap reports it."""

    name: str
    min_size: int
    max_size: int
    target_size: int
    registered: int
    ready: int
    scale_up: str = ""  # NoActivity | InProgress | Backoff ...
    backoff: str = ""  # "QUOTA_EXCEEDED: ..." when in Backoff


def is_status_object(obj: Any) -> bool:
    """Whether ``obj`` is cluster-autoscaler's status ConfigMap (what ``config_map`` reads)."""
    if not isinstance(obj, dict) or obj.get("kind") != "ConfigMap":
        return False
    metadata = obj.get("metadata")
    return (
        isinstance(metadata, dict)
        and metadata.get("namespace") == CA_STATUS_NAMESPACE
        and metadata.get("name") == CA_STATUS_NAME
    )


def config_map(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """Only cluster-autoscaler's status ConfigMap is read; every other one is counted ignored."""
    if ctx.object != f"ConfigMap/{CA_STATUS_NAMESPACE}/{CA_STATUS_NAME}":
        collected.ignored[f"ConfigMap ({obj.get('apiVersion', '')})"] += 1
        return
    data = ctx.mapping(obj.get("data"), "data")
    text = ctx.text(data.get("status"), "data.status", required=True)
    for status in parse_ca_status(ctx, text):
        collected.discovered.ca_groups.append((ctx, status))
    collected.autoscaler_events.extend(ca_status_events(ctx, text))


KWOK_API_VERSION = "kwok.cluster-autoscaler.x-k8s.io/v1alpha1"  # the reader's name for the file
KWOK_KIND = "KwokProviderConfig"


def config_objects(document: Any) -> list[dict[str, Any]] | None:
    """cluster-autoscaler's kwok provider config (``cloudprovider/kwok/kwok_types.go``
    ``KwokProviderConfig``: ``readNodesFrom``, ``nodegroups``; no ``kind``) as an object
    ``topology.kube.parse`` dispatches on; None if the document is not one."""
    if (
        isinstance(document, dict)
        and "kind" not in document
        and "readNodesFrom" in document
        and isinstance(document.get("nodegroups"), dict)
    ):
        return [
            {
                "apiVersion": KWOK_API_VERSION,
                "kind": KWOK_KIND,
                "metadata": {"name": "kwok-provider-config"},
                "spec": document,
            }
        ]
    return None


def kwok_provider_config(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """The kwok provider adds fake nodes built from template nodes (a simulation tool):
    read, said, not modelled."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    groups = ctx.mapping(spec.get("nodegroups"), "nodegroups")
    key = groups.get("fromNodeLabelKey") or groups.get("fromNodeAnnotationKey") or "?"
    collected.discovered.notices.append(
        ModelError(
            ctx.source,
            ctx.object,
            "nodegroups",
            f"cluster-autoscaler kwok provider (fake nodes, groups keyed by {key}, templates "
            f"from {ctx.text(spec.get('readNodesFrom'), 'readNodesFrom') or '?'}): not modelled",
        )
    )


def parse_ca_status(ctx: ObjectContext, text: str) -> tuple[CaGroupStatus, ...]:
    """Node groups of the ``status`` key, in either format CA has written."""
    if text.lstrip().startswith("Cluster-autoscaler status at"):
        return _ca_text_status(text)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        ctx.fail("data.status", "neither cluster-autoscaler's text status nor its YAML status")
    status = ctx.mapping(document, "data.status")
    groups = []
    for path, item in ctx.items(status.get("nodeGroups"), "data.status.nodeGroups"):
        health = ctx.mapping(item.get("health"), f"{path}.health")
        counts = ctx.mapping(health.get("nodeCounts"), f"{path}.health.nodeCounts")
        registered = ctx.mapping(counts.get("registered"), f"{path}.health.nodeCounts.registered")
        scale_up = ctx.mapping(item.get("scaleUp"), f"{path}.scaleUp")
        backoff = ctx.mapping(scale_up.get("backoffInfo"), f"{path}.scaleUp.backoffInfo")
        groups.append(
            CaGroupStatus(
                name=ctx.text(item.get("name"), f"{path}.name", required=True),
                min_size=ctx.integer(health.get("minSize"), f"{path}.health.minSize"),
                max_size=ctx.integer(health.get("maxSize"), f"{path}.health.maxSize"),
                target_size=ctx.integer(
                    health.get("cloudProviderTarget"), f"{path}.health.cloudProviderTarget"
                ),
                registered=ctx.integer(registered.get("total"), f"{path}...registered.total"),
                ready=ctx.integer(registered.get("ready"), f"{path}...registered.ready"),
                scale_up=ctx.text(scale_up.get("status"), f"{path}.scaleUp.status"),
                backoff=_backoff_text(backoff),
            )
        )
    return tuple(groups)


def _backoff_text(backoff: Mapping[str, Any]) -> str:
    parts = [str(backoff[k]) for k in ("errorCode", "errorMessage") if backoff.get(k)]
    return ": ".join(parts)


def _ca_text_status(text: str) -> tuple[CaGroupStatus, ...]:
    """The readable format (CA < 1.30): after ``NodeGroups:``, ``Name:`` opens a group and
    its ``Health:`` line carries ``key=value`` counts; ``ScaleUp:`` its scale-up status."""
    _, found, groups_text = text.partition("\nNodeGroups:")
    if not found:
        return ()
    groups: list[CaGroupStatus] = []
    current: dict[str, Any] = {}
    for line in groups_text.splitlines():
        label, _, rest = line.strip().partition(":")
        rest = rest.strip()
        if label == "Name":
            if current:
                groups.append(_text_group(current))
            current = {"name": rest}
        elif label == "Health" and current:
            current.update({k: int(v) for k, v in _PAIR.findall(rest)})
        elif label == "ScaleUp" and current:
            current["scale_up"] = rest.split(" ", 1)[0]
    if current:
        groups.append(_text_group(current))
    return tuple(groups)


def _text_group(values: Mapping[str, Any]) -> CaGroupStatus:
    return CaGroupStatus(
        name=values["name"],
        min_size=values.get("minSize", 0),
        max_size=values.get("maxSize", 0),
        target_size=values.get("cloudProviderTarget", 0),
        registered=values.get("registered", 0),
        ready=values.get("ready", 0),
        scale_up=values.get("scale_up", ""),
    )
