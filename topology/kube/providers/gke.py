"""GKE's GPU node labels read as the GPU feature discovery labels they stand for.

Pure: no Django, no I/O. ``topology.kube.dra.slices.plugin_gpus`` reads a device-plugin node's
labels through ``as_gfd`` first; a GFD label present on the node wins.

GKE labels its GPU nodes itself (GKE docs "About GPUs", "Running multi-instance
GPUs", "Share GPUs with multiple workloads using GPU time-sharing"; the node pool
API's ``GPUSharingConfig``, ``AcceleratorConfig.gpuPartitionSize``):

- ``cloud.google.com/gke-accelerator``: the GPU model (``nvidia-tesla-a100``);
- ``cloud.google.com/gke-gpu-partition-size``: each GPU is split into MIG
  instances of this profile, and ``nvidia.com/gpu`` counts the instances (an
  a2-highgpu-1g with ``1g.5gb`` advertises 7: one A100). Read as GFD's MIG
  ``single`` strategy with product ``<model>-MIG-<profile>``;
- ``cloud.google.com/gke-gpu-sharing-strategy`` (``time-sharing`` or ``mps``)
  with ``cloud.google.com/gke-max-shared-clients-per-gpu`` N: each physical GPU
  (or MIG instance) is advertised N times ("the number of time-shared GPU
  resources to expose for each physical GPU"). Read as GFD's
  ``nvidia.com/gpu.replicas`` N with that sharing strategy.
"""

from __future__ import annotations

ACCELERATOR = "cloud.google.com/gke-accelerator"
PARTITION_SIZE = "cloud.google.com/gke-gpu-partition-size"
SHARING_STRATEGY = "cloud.google.com/gke-gpu-sharing-strategy"
MAX_SHARED_CLIENTS = "cloud.google.com/gke-max-shared-clients-per-gpu"

# gke-accelerator value → the product name GFD would give (what topology.model.mig reads)
PRODUCTS = {
    "nvidia-tesla-a100": "NVIDIA-A100-SXM4-40GB",
    "nvidia-a100-80gb": "NVIDIA-A100-SXM4-80GB",
    "nvidia-h100-80gb": "NVIDIA-H100-80GB-HBM3",
    "nvidia-h100-mega-80gb": "NVIDIA-H100-80GB-HBM3",
    "nvidia-l4": "NVIDIA-L4",
    "nvidia-tesla-t4": "Tesla-T4",
}
STRATEGIES = {"time-sharing": "time-slicing", "mps": "mps"}


def as_gfd(
    labels: dict[str, str], *, product: str, replicas: str, sharing: str, mig_strategy: str
) -> dict[str, str]:
    """``labels`` plus the GFD labels (keys given) GKE's labels stand for."""
    accelerator = labels.get(ACCELERATOR)
    if not accelerator:
        return labels
    out = dict(labels)
    out.setdefault(product, PRODUCTS.get(accelerator, accelerator))
    size = labels.get(PARTITION_SIZE)
    if size and mig_strategy not in labels:
        out[mig_strategy] = "single"
        out[product] = f"{out[product]}-MIG-{size}"
    clients = labels.get(MAX_SHARED_CLIENTS, "")
    strategy = STRATEGIES.get(labels.get(SHARING_STRATEGY, ""))
    if strategy and clients.isdigit() and replicas not in labels:
        out[replicas] = clients
        out.setdefault(sharing, strategy)
    return out
