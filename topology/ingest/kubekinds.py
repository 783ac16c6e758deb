"""The kinds the Kubernetes source lists and watches, and how to reach each list call.

Every kind ``topology.kube.parse``'s dispatch reads from a cluster (the file path reads the
same kinds from exports); ``tests/engine/test_kubekinds.py`` holds the two lists equal.
Custom resources are tried at each served version in turn (newest first); a kind the
cluster serves at none of them (404) is reported unavailable by the source, never an
error, and so is a kind the role may not list (403), with the rule to add
(``WatchedKind.rbac_rule``). Nodes and Pods are ``required``: without them the read is
refused rather than stored as an empty cluster. The ConfigMap is listed only in
``kube-system`` and only by name (the cluster-autoscaler status), so the role needs no
cluster-wide ConfigMap access.

Free of Django; imports the official client only to name its list calls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client

CA_STATUS_NAMESPACE = "kube-system"  # topology.kube.autoscaler.status reads only this ConfigMap
CA_STATUS_NAME = "cluster-autoscaler-status"

ListCall = Callable[[client.ApiClient, str], Callable[..., Any]]


@dataclass(frozen=True)
class WatchedKind:
    """One kind the source lists and watches: its API group, the versions tried (newest
    first), its resource (plural, what RBAC names), and how to reach its list call at a
    version."""

    kind: str
    group: str
    versions: tuple[str, ...]
    plural: str
    list_call: ListCall
    namespace: str = ""  # listed in this namespace only ("" = every namespace)
    name: str = ""  # listed by this name only (fieldSelector metadata.name)
    # a cluster read without it would look empty: forbidden or not served refuses the read
    required: bool = False
    # listed with this fieldSelector only (Events of one reporting component)
    field_selector: str = ""

    @property
    def key(self) -> str:
        """Unique per kind, group and selector (two groups may share a kind name:
        PodGroup, Queue; one kind may be listed twice, by two selectors: Event)."""
        base = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{base}[{self.field_selector}]" if self.field_selector else base

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    def rbac_rule(self) -> str:
        """The rule deploy/rbac.yaml grants for this kind, to add when the API server
        answers 403 (a role applied before capacityweb learnt to read the kind)."""
        rule = f'apiGroups: ["{self.group}"], resources: [{self.plural}]'
        if self.name:
            return (
                f"Role in {self.namespace}: {rule}, resourceNames: [{self.name}], "
                "verbs: [get, list, watch]"
            )
        return f"ClusterRole: {rule}, verbs: [get, list, watch]"


def _typed(build: Callable[[client.ApiClient], Callable[..., Any]]) -> ListCall:
    """A built-in kind at one version: the typed client's list call."""
    return lambda api, _version: build(api)


def _custom(group: str, plural: str) -> ListCall:
    def build(api: client.ApiClient, version: str) -> Any:
        return functools.partial(
            client.CustomObjectsApi(api).list_cluster_custom_object, group, version, plural
        )

    return build


def _crd(kind: str, group: str, versions: tuple[str, ...], plural: str) -> WatchedKind:
    return WatchedKind(kind, group, versions, plural, _custom(group, plural))


def _ca_status(api: client.ApiClient, _version: str) -> Callable[..., Any]:
    return functools.partial(
        client.CoreV1Api(api).list_namespaced_config_map,
        CA_STATUS_NAMESPACE,
        field_selector=f"metadata.name={CA_STATUS_NAME}",
    )


def _events_from(component: str) -> WatchedKind:
    """Core v1 Events one autoscaler reported (field ``source``: ``source.component``,
    kubernetes ``pkg/registry/core/event/strategy.go`` ``ToSelectableFields``): only
    these are listed, not every Event of the cluster."""
    selector = f"source={component}"
    return WatchedKind(
        "Event",
        "",
        _V1,
        "events",
        _typed(
            lambda a: functools.partial(
                client.CoreV1Api(a).list_event_for_all_namespaces, field_selector=selector
            )
        ),
        field_selector=selector,
    )


_V1 = ("v1",)
_KUEUE = ("v1beta2", "v1beta1")
_KARPENTER = ("v1", "v1beta1")
_KEP_4671 = ("v1beta1", "v1alpha2", "v1alpha1")  # scheduling.k8s.io Workload / PodGroup

DEFAULT_KINDS: tuple[WatchedKind, ...] = (
    # core
    WatchedKind(
        "Node", "", _V1, "nodes", _typed(lambda a: client.CoreV1Api(a).list_node), required=True
    ),
    WatchedKind(
        "Pod",
        "",
        _V1,
        "pods",
        _typed(lambda a: client.CoreV1Api(a).list_pod_for_all_namespaces),
        required=True,
    ),
    WatchedKind(
        "Namespace", "", _V1, "namespaces", _typed(lambda a: client.CoreV1Api(a).list_namespace)
    ),
    WatchedKind(
        "PodTemplate",
        "",
        _V1,
        "podtemplates",
        _typed(lambda a: client.CoreV1Api(a).list_pod_template_for_all_namespaces),
    ),
    WatchedKind(
        "PersistentVolume",
        "",
        _V1,
        "persistentvolumes",
        _typed(lambda a: client.CoreV1Api(a).list_persistent_volume),
    ),
    WatchedKind(
        "PersistentVolumeClaim",
        "",
        _V1,
        "persistentvolumeclaims",
        _typed(lambda a: client.CoreV1Api(a).list_persistent_volume_claim_for_all_namespaces),
    ),
    WatchedKind(
        "ConfigMap",
        "",
        _V1,
        "configmaps",
        _ca_status,
        namespace=CA_STATUS_NAMESPACE,
        name=CA_STATUS_NAME,
    ),
    # what the autoscalers report: cluster-autoscaler's recorder is component
    # "cluster-autoscaler" (utils/kubernetes/events.go), Karpenter's "karpenter"
    _events_from("cluster-autoscaler"),
    _events_from("karpenter"),
    # built-in groups
    WatchedKind(
        "PriorityClass",
        "scheduling.k8s.io",
        _V1,
        "priorityclasses",
        _typed(lambda a: client.SchedulingV1Api(a).list_priority_class),
    ),
    WatchedKind(
        "StorageClass",
        "storage.k8s.io",
        _V1,
        "storageclasses",
        _typed(lambda a: client.StorageV1Api(a).list_storage_class),
    ),
    WatchedKind(
        "PodDisruptionBudget",
        "policy",
        _V1,
        "poddisruptionbudgets",
        _typed(lambda a: client.PolicyV1Api(a).list_pod_disruption_budget_for_all_namespaces),
    ),
    WatchedKind(
        "ResourceSlice",
        "resource.k8s.io",
        _V1,
        "resourceslices",
        _typed(lambda a: client.ResourceV1Api(a).list_resource_slice),
    ),
    WatchedKind(
        "ResourceClaim",
        "resource.k8s.io",
        _V1,
        "resourceclaims",
        _typed(lambda a: client.ResourceV1Api(a).list_resource_claim_for_all_namespaces),
    ),
    WatchedKind(
        "ResourceClaimTemplate",
        "resource.k8s.io",
        _V1,
        "resourceclaimtemplates",
        _typed(lambda a: client.ResourceV1Api(a).list_resource_claim_template_for_all_namespaces),
    ),
    WatchedKind(
        "DeviceClass",
        "resource.k8s.io",
        _V1,
        "deviceclasses",
        _typed(lambda a: client.ResourceV1Api(a).list_device_class),
    ),
    WatchedKind(
        "DaemonSet",
        "apps",
        _V1,
        "daemonsets",
        _typed(lambda a: client.AppsV1Api(a).list_daemon_set_for_all_namespaces),
    ),
    WatchedKind(
        "Deployment",
        "apps",
        _V1,
        "deployments",
        _typed(lambda a: client.AppsV1Api(a).list_deployment_for_all_namespaces),
    ),
    WatchedKind(
        "ReplicaSet",
        "apps",
        _V1,
        "replicasets",
        _typed(lambda a: client.AppsV1Api(a).list_replica_set_for_all_namespaces),
    ),
    WatchedKind(
        "StatefulSet",
        "apps",
        _V1,
        "statefulsets",
        _typed(lambda a: client.AppsV1Api(a).list_stateful_set_for_all_namespaces),
    ),
    WatchedKind(
        "Job",
        "batch",
        _V1,
        "jobs",
        _typed(lambda a: client.BatchV1Api(a).list_job_for_all_namespaces),
    ),
    # KEP-4671 gangs (alpha in 1.35, v1alpha2 in 1.36)
    _crd("Workload", "scheduling.k8s.io", _KEP_4671, "workloads"),
    _crd("PodGroup", "scheduling.k8s.io", _KEP_4671, "podgroups"),
    # custom resources
    _crd("PodGroup", "scheduling.x-k8s.io", ("v1alpha1",), "podgroups"),
    _crd("NodePool", "karpenter.sh", _KARPENTER, "nodepools"),
    _crd("NodeClaim", "karpenter.sh", _KARPENTER, "nodeclaims"),
    # cluster-autoscaler's requests: v1 since CA 1.31, v1beta1 before (same fields)
    _crd("ProvisioningRequest", "autoscaling.x-k8s.io", ("v1", "v1beta1"), "provisioningrequests"),
    _crd("EC2NodeClass", "karpenter.k8s.aws", _KARPENTER, "ec2nodeclasses"),
    _crd("JobSet", "jobset.x-k8s.io", ("v1alpha2",), "jobsets"),
    _crd("PyTorchJob", "kubeflow.org", ("v1",), "pytorchjobs"),
    # mpi-operator v2beta1; the training-operator's v1 where that one serves them
    _crd("MPIJob", "kubeflow.org", ("v2beta1", "v1"), "mpijobs"),
    _crd("TrainJob", "trainer.kubeflow.org", ("v1alpha1",), "trainjobs"),
    _crd("LeaderWorkerSet", "leaderworkerset.x-k8s.io", _V1, "leaderworkersets"),
    _crd("Workload", "kueue.x-k8s.io", _KUEUE, "workloads"),
    _crd("ClusterQueue", "kueue.x-k8s.io", _KUEUE, "clusterqueues"),
    _crd("Cohort", "kueue.x-k8s.io", (*_KUEUE, "v1alpha1"), "cohorts"),
    _crd("LocalQueue", "kueue.x-k8s.io", _KUEUE, "localqueues"),
    _crd("AdmissionCheck", "kueue.x-k8s.io", _KUEUE, "admissionchecks"),
    _crd("ProvisioningRequestConfig", "kueue.x-k8s.io", _KUEUE, "provisioningrequestconfigs"),
    _crd("ResourceFlavor", "kueue.x-k8s.io", _KUEUE, "resourceflavors"),
    _crd("Topology", "kueue.x-k8s.io", (*_KUEUE, "v1alpha1"), "topologies"),
    _crd("Job", "batch.volcano.sh", ("v1alpha1",), "jobs"),
    _crd("PodGroup", "scheduling.volcano.sh", ("v1beta1",), "podgroups"),
    _crd("Queue", "scheduling.volcano.sh", ("v1beta1",), "queues"),
    _crd("HyperNode", "topology.volcano.sh", ("v1alpha1",), "hypernodes"),
    _crd("PodGroup", "scheduling.run.ai", ("v2alpha2",), "podgroups"),
    _crd("Queue", "scheduling.run.ai", ("v2",), "queues"),
    _crd("Topology", "kai.scheduler", ("v1alpha1",), "topologies"),
    # the project's own kinds, where a cluster has the CRDs
    _crd("NodeGroup", "capacityweb.io", ("v1alpha1",), "nodegroups"),
    _crd("Reservation", "capacityweb.io", ("v1alpha1",), "reservations"),
    _crd("Topology", "capacityweb.io", ("v1alpha1",), "topologies"),
)
