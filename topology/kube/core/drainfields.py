"""What cluster-autoscaler's drain rules read of a Pod, beyond what scheduling reads:
its controller, the safe-to-evict annotations and its local volumes.

Pure: no Django, no I/O. Read by ``topology.kube.core.pods`` for every Pod; the rules
themselves are in ``recommender.engine.moves.drainability``.

- The controller is the owner reference with ``controller: true``
  (``metav1.GetControllerOf``, what upstream ``utils/drain/drain.go`` ``ControllerRef``
  reads): the object that creates a replacement once the pod is evicted. A pod
  without one is bare: evicting it deletes it.
- ``cluster-autoscaler.kubernetes.io/safe-to-evict`` "true" or "false"
  (``HasSafeToEvictAnnotation``, ``HasNotSafeToEvictAnnotation``): any other value
  counts as unset, as upstream compares the strings.
- Local storage (``HasBlockingLocalStorage``, ``isLocalVolume``): a ``hostPath``
  volume, or an ``emptyDir`` whose medium is not ``Memory``, unless its name is in
  the comma-separated ``cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes``.
"""

from __future__ import annotations

from typing import Any

from topology.kube.fields import ObjectContext, object_label

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
MEMORY_MEDIUM = "Memory"  # apiv1.StorageMediumMemory


def drain_fields(
    ctx: ObjectContext, meta: dict[str, Any], spec: dict[str, Any], annotations: dict[str, str]
) -> dict[str, Any]:
    """The Pod fields ``controller``, ``safe_to_evict``, ``blocking_local_volumes``."""
    return {
        "controller": controller(ctx, meta),
        "safe_to_evict": {"true": True, "false": False}.get(annotations.get(SAFE_TO_EVICT, "")),
        "blocking_local_volumes": blocking_local_volumes(ctx, spec, annotations),
    }


def controller(ctx: ObjectContext, meta: dict[str, Any]) -> str | None:
    """``Kind/<namespace>/<name>`` of the controller owner reference (an owner is in the
    pod's namespace or cluster-scoped, ``drain.go``: the namespace is the pod's)."""
    namespace = ctx.text(meta.get("namespace"), "metadata.namespace") or "default"
    for path, ref in ctx.items(meta.get("ownerReferences"), "metadata.ownerReferences"):
        if ctx.boolean(ref.get("controller"), f"{path}.controller"):
            kind = ctx.text(ref.get("kind"), f"{path}.kind", required=True)
            return object_label(
                kind, namespace, ctx.text(ref.get("name"), f"{path}.name", required=True)
            )
    return None


def blocking_local_volumes(
    ctx: ObjectContext, spec: dict[str, Any], annotations: dict[str, str]
) -> tuple[str, ...]:
    """Names of the local volumes that block a drain, in ``spec.volumes`` order."""
    allowed = set(annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES, "").split(","))
    found = []
    for path, volume in ctx.items(spec.get("volumes"), "spec.volumes"):
        name = ctx.text(volume.get("name"), f"{path}.name", required=True)
        empty_dir = volume.get("emptyDir")
        if empty_dir is not None:
            medium = ctx.mapping(empty_dir, f"{path}.emptyDir").get("medium")
            local = ctx.text(medium, f"{path}.emptyDir.medium") != MEMORY_MEDIUM
        else:
            local = volume.get("hostPath") is not None
        if local and name not in allowed:
            found.append(name)
    return tuple(found)
