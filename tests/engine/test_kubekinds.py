"""The live source lists and watches every kind the parse reads from a cluster."""

from __future__ import annotations

from topology.ingest.kubekinds import DEFAULT_KINDS
from topology.kube.autoscaler import status as castatus
from topology.kube.parse import dispatched_kinds
from topology.kube.providers import cloud_reservations

# Read from files only: exports no API server serves.
FILE_ONLY = {
    (castatus.KWOK_KIND, "kwok.cluster-autoscaler.x-k8s.io"),  # CA's kwok provider config
    (cloud_reservations.AWS_KIND, "ec2.amazonaws.com"),  # aws ec2 describe-... JSON
    (cloud_reservations.GCP_KIND, "compute.googleapis.com"),  # gcloud ... list JSON
}
# The group a "*" (any group) entry of the dispatch is served in.
BUILT_IN_GROUP = {
    "Node": "",
    "Pod": "",
    "PodTemplate": "",
    "Namespace": "",
    "PersistentVolume": "",
    "PersistentVolumeClaim": "",
    "ConfigMap": "",
    "Event": "",
    "StorageClass": "storage.k8s.io",
    "ResourceSlice": "resource.k8s.io",
    "ResourceClaim": "resource.k8s.io",
    "ResourceClaimTemplate": "resource.k8s.io",
    "DeviceClass": "resource.k8s.io",
}


def test_every_kind_the_parse_reads_from_a_cluster_is_listed_and_watched():
    wanted = {
        (kind, BUILT_IN_GROUP[kind] if group == "*" else group)
        for kind, group in dispatched_kinds()
        if (kind, group) not in FILE_ONLY
    }
    listed = {(k.kind, k.group) for k in DEFAULT_KINDS}
    assert listed == wanted


def test_each_kind_is_listed_once_and_only_by_read_verbs():
    keys = [k.key for k in DEFAULT_KINDS]
    assert len(keys) == len(set(keys))
    assert "PodGroup.scheduling.x-k8s.io" in keys and "PodGroup.scheduling.volcano.sh" in keys


def test_the_config_map_is_listed_in_kube_system_by_name_only():
    (config_map,) = [k for k in DEFAULT_KINDS if k.kind == "ConfigMap"]
    assert (config_map.namespace, config_map.name) == (
        castatus.CA_STATUS_NAMESPACE,
        castatus.CA_STATUS_NAME,
    )
    assert all(not k.namespace for k in DEFAULT_KINDS if k.kind != "ConfigMap")
