"""KAI Scheduler's GPU sharing annotations on a pod: fractions of a GPU.

Pure: no Django, no I/O. Read by ``topology.kube.core.pods`` for every Pod.

KAI (``docs/gpu-sharing/README.md``; the upstream example
``docs/gpu-sharing/gpu-sharing.yaml``) lets a pod ask for part of a GPU without
any ``nvidia.com/gpu`` request: annotation ``gpu-fraction: "0.5"`` (of
``gpu-fraction-num-devices`` GPUs, default 1). KAI places it on a GPU it shares
(holding the whole GPU from the kubelet's view with a reservation pod), so a
shared GPU is no longer free for whole-GPU pods. Read here as a share of
``fraction x 1000`` milli on each of that many GPUs, the unit time-slicing
replicas and the trace's shares are counted in. ``gpu-memory`` (MiB of GPU
memory instead of a fraction) is not modelled: said on the pod, blocking.
"""

from __future__ import annotations

from fractions import Fraction

from topology.kube.fields import ObjectContext
from topology.model.hardware import WHOLE_GPU_MILLI, GpuRequest, UnsupportedField

FRACTION = "gpu-fraction"
DEVICES = "gpu-fraction-num-devices"
MEMORY = "gpu-memory"
MEMORY_REASON = "KAI gpu-memory share (GPU memory instead of a fraction) is not modelled"


def fraction_request(ctx: ObjectContext, annotations: dict[str, str]) -> GpuRequest | None:
    """The share a ``gpu-fraction`` annotation asks for, or None."""
    raw = annotations.get(FRACTION)
    if raw is None:
        return None
    field = f"metadata.annotations.{FRACTION}"
    fraction = ctx.quantity(raw, field)
    if not 0 < fraction <= 1:
        ctx.fail(field, f"must be a fraction in (0, 1], got {raw}")
    count = ctx.integer(
        annotations.get(DEVICES), f"metadata.annotations.{DEVICES}", default=1, minimum=1
    )
    milli = int(Fraction(fraction) * WHOLE_GPU_MILLI)
    return GpuRequest(count=count, milli_per_gpu=max(1, milli), shares_whole_gpus=True)


def unmodelled(ctx: ObjectContext, annotations: dict[str, str]) -> list[UnsupportedField]:
    if MEMORY not in annotations:
        return []
    return [UnsupportedField(ctx.object, f"metadata.annotations.{MEMORY}", MEMORY_REASON)]
