"""What the kube source keeps of each object: all but the fields no parse reads.

A pod as the API server returns it is mostly bookkeeping: ``metadata.managedFields``
(every writer's field set), each container's environment, command, probes and mounts,
the kubelet's container statuses. None of it changes where a pod can run, and kept for
every pod of a 20,000-pod cluster it is most of the ingest's memory. Dropped as each
object arrives (list page or watch event), as controller-runtime's cache does with
``TransformStripManagedFields`` (client-go ``SharedIndexInformer.SetTransform``):

- every kind: ``metadata.managedFields`` and the
  ``kubectl.kubernetes.io/last-applied-configuration`` annotation;
- every container list anywhere in the object (a Pod's spec, a controller's pod
  template, a Kueue Workload's pod sets): each container's ``DROPPED_CONTAINER_FIELDS``
  (its name, resources, ports and restartPolicy stay: what ``topology.kube.core.podrequests`` and
  ``topology.kube.core.podspec`` read);
- every volume list: the bodies of the volume sources that hold no claim and no disk
  (``DROPPED_VOLUME_SOURCES``: the service-account token, ConfigMaps, Secrets, the
  downward API); each volume keeps its name, so field paths stay the same;
- a Pod's ``status``: the container statuses and the pod's own IPs.

``tests/engine/test_kubeslim.py`` holds that every example object parses to the same
model slimmed or not. Pure: no Django, no I/O; objects are changed in place.
"""

from __future__ import annotations

from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
DROPPED_CONTAINER_FIELDS = (
    "args",
    "command",
    "env",
    "envFrom",
    "image",
    "imagePullPolicy",
    "lifecycle",
    "livenessProbe",
    "readinessProbe",
    "securityContext",
    "startupProbe",
    "stdin",
    "stdinOnce",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "tty",
    "volumeDevices",
    "volumeMounts",
    "workingDir",
)
# emptyDir stays: its medium decides whether it blocks a drain (topology.kube.core.drainfields)
DROPPED_VOLUME_SOURCES = ("projected", "configMap", "secret", "downwardAPI")
DROPPED_POD_STATUS = (
    "containerStatuses",
    "initContainerStatuses",
    "ephemeralContainerStatuses",
    "podIP",
    "podIPs",
    "hostIPs",
)


def slimmed(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` less what no parse reads (see the module); the same dict, changed."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
    if obj.get("kind") == "Pod" and isinstance(obj.get("status"), dict):
        for key in DROPPED_POD_STATUS:
            obj["status"].pop(key, None)
    _slim_containers(obj.get("spec"))
    return obj


def _slim_containers(value: Any) -> None:
    if isinstance(value, list):
        for item in value:
            _slim_containers(item)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key in CONTAINER_LISTS and isinstance(item, list):
            _drop(item, DROPPED_CONTAINER_FIELDS)
        elif key == "volumes" and isinstance(item, list):
            _drop(item, DROPPED_VOLUME_SOURCES)
        elif isinstance(item, dict | list):
            _slim_containers(item)


def _drop(items: list[Any], fields: tuple[str, ...]) -> None:
    for item in items:
        if isinstance(item, dict):
            for field in fields:
                item.pop(field, None)
