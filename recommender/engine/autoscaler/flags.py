"""The cluster-autoscaler flags the model reads, with upstream's defaults
(``config/flags/flags.go``).

Pure: no Django, no I/O. ``caflags`` reads them from a command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from recommender.engine.autoscaler.expander import DEFAULT_EXPANDERS

# RunOnce loops the model runs at most (upstream loops every --scan-interval for ever)
LOOP_LIMIT = 50
# --cloud-provider's default in upstream's all-providers build (cloudprovider/builder)
DEFAULT_CLOUD_PROVIDER = "gce"
# The label whose value is a node's GPU type for --gpu-total: the provider's GPULabel()
# (cloudprovider/gce/gce_cloud_provider.go, aws/aws_cloud_provider.go,
# alicloud/alicloud_cloud_provider.go), read by
# processors/customresources/gpu_processor.go GetNodeGpuTarget
GPU_LABELS = {
    "gce": "cloud.google.com/gke-accelerator",
    "aws": "k8s.amazonaws.com/accelerator",
    "alicloud": "aliyun.accelerator/nvidia_name",
}


@dataclass(frozen=True, slots=True)
class CaSettings:
    """The cluster-autoscaler flags the model reads (defaults as upstream's flags.go).

    ``version`` ("1.34", "1.35", "1.36") sets how its simulation treats DRA, each release
    with its default flags and feature gates:

    - 1.34: ``--enable-dynamic-resource-allocation`` defaults to false; with
      kubernetes/autoscaler#8598 the scheduler's DynamicResources plugin is then off in
      its framework, so claims are not checked at all (``dra_claims_checked`` False);
    - 1.35: the flag defaults to true (claims checked on nodes and templates), but the
      vendored scheduler's DRAPartitionableDevices gate is alpha, off by default
      (``pkg/features/kube_features.go``: alpha 1.33, beta and on 1.36; CA's
      ``--feature-gates`` sets ``utilfeature.DefaultMutableFeatureGate``, which the
      in-tree registry reads): devices that consume counters are never allocated
      (``partitionable_devices`` False);
    - 1.36: both on (partitionable devices: kubernetes/autoscaler#8559).
    """

    version: str = "1.36"
    expanders: tuple[str, ...] = DEFAULT_EXPANDERS  # --expander=a,b
    max_nodes_total: int = 0  # --max-nodes-total (0: no limit)
    # --cores-total / --memory-total maxima (0: no limit; upstream's defaults, 320000
    # cores and 6400000 GiB, bind no cluster the model sees) and --gpu-total per GPU
    # type (the value of ``gpu_label`` on a node: a node without it counts no GPU)
    max_cores_total: int = 0
    max_memory_total_bytes: int = 0
    max_gpus_total: Mapping[str, int] = field(default_factory=dict)
    gpu_label: str = GPU_LABELS[DEFAULT_CLOUD_PROVIDER]
    # --cloud-provider: also picks the balancing comparator (nodegroupset.similar)
    cloud_provider: str = DEFAULT_CLOUD_PROVIDER
    balance_similar_node_groups: bool = False  # --balance-similar-node-groups
    # --enable-provisioning-requests (default false): without it main.go installs neither
    # the ProvisioningRequest pods filter nor the wrapper orchestrator, so pods annotated
    # to consume a ProvisioningRequest scale up as ordinary pods
    provisioning_requests: bool = False
    new_pod_scale_up_delay_seconds: float = 0.0  # --new-pod-scale-up-delay (default 0s)
    balancing_ignore_labels: tuple[str, ...] = ()  # --balancing-ignore-label
    expendable_pods_priority_cutoff: int = -10  # --expendable-pods-priority-cutoff
    priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # priority expander
    seed: int = 0  # the random expander's seed: the same evaluation, the same choice
    loops: int = LOOP_LIMIT

    @property
    def dra_claims_checked(self) -> bool:
        """Whether its scheduler framework runs the DynamicResources plugin (1.35+)."""
        return _release(self.version) >= (1, 35)

    @property
    def partitionable_devices(self) -> bool:
        """Its DRAPartitionableDevices feature gate at the release's default (on from 1.36)."""
        return _release(self.version) >= (1, 36)


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)
