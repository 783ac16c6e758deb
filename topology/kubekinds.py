"""The kinds the Kubernetes source lists and watches, and how to reach each list call.

Free of Django; imports the official client only to name its list calls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client


@dataclass(frozen=True)
class WatchedKind:
    """One kind the source lists and watches, and how to reach its list call."""

    kind: str
    api_version: str
    list_call: Callable[[client.ApiClient], Callable[..., Any]]


def _custom(group: str, version: str, plural: str) -> Callable[[client.ApiClient], Any]:
    def build(api: client.ApiClient) -> Any:
        return functools.partial(
            client.CustomObjectsApi(api).list_cluster_custom_object, group, version, plural
        )

    return build


DEFAULT_KINDS: tuple[WatchedKind, ...] = (
    WatchedKind("Node", "v1", lambda api: client.CoreV1Api(api).list_node),
    WatchedKind("Pod", "v1", lambda api: client.CoreV1Api(api).list_pod_for_all_namespaces),
    WatchedKind(
        "ResourceSlice",
        "resource.k8s.io/v1",
        lambda api: client.ResourceV1Api(api).list_resource_slice,
    ),
    WatchedKind(
        "ResourceClaim",
        "resource.k8s.io/v1",
        lambda api: client.ResourceV1Api(api).list_resource_claim_for_all_namespaces,
    ),
    WatchedKind(
        "DeviceClass",
        "resource.k8s.io/v1",
        lambda api: client.ResourceV1Api(api).list_device_class,
    ),
    WatchedKind(
        "PodGroup",
        "scheduling.x-k8s.io/v1alpha1",
        _custom("scheduling.x-k8s.io", "v1alpha1", "podgroups"),
    ),
)
