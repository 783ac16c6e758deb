"""The flags cluster-autoscaler knows, their types, and what the model does with each.

``config/flags/flags.go`` (the flags of cluster-autoscaler 1.36), with klog's, the
leader-election and the logging flags ``main.go`` adds; ``caflags`` parses a command
line against them. READ: the flags the model reads into ``CaSettings``;
UNSUPPORTED: flags that change scale-up and are not modelled, with upstream's
default (given with another value they are reported); every other known flag is
ignored (no effect on a scale-up decided from one snapshot).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

BOOL, INT, FLOAT, DURATION, TEXT, MULTI = "bool", "int", "float", "duration", "text", "multi"


def _of(names: str, kind: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), kind)


# config/flags/flags.go: flag -> type (modelled flags and those whose value is compared
# with a default are listed with it in READ / UNSUPPORTED below)
CA_FLAGS = {
    **_of(
        (
            "enforce-node-group-min-size scale-down-enabled scale-down-unready-enabled "
            "scale-down-delay-type-local scale-up-from-zero parallel-scale-up "
            "ignore-daemonsets-utilization ignore-mirror-pods-utilization "
            "write-status-configmap balance-similar-node-groups regional "
            "aws-use-static-instance-list scale-from-unschedulable "
            "bulk-mig-instances-listing-enabled profiling "
            "clusterapi-cloud-config-authoritative cordon-node-before-terminating "
            "daemonset-eviction-for-empty-nodes daemonset-eviction-for-occupied-nodes "
            "emit-per-nodegroup-metrics debugging-snapshot-enabled record-duplicated-events "
            "skip-nodes-with-system-pods skip-nodes-with-local-storage "
            "skip-nodes-with-custom-controller-pods force-ds "
            "dynamic-node-delete-delay-after-taint-enabled enable-provisioning-requests "
            "frequent-loops-enabled async-node-groups enable-proactive-scaleup "
            "check-capacity-batch-processing force-delete-unregistered-nodes "
            "force-delete-failed-nodes enable-dynamic-resource-allocation "
            "enable-csi-node-aware-scheduling capacity-buffer-controller-enabled "
            "capacity-buffer-pod-injection-enabled "
            # klog and leader election (main.go)
            "logtostderr alsologtostderr skip-headers skip-log-headers add-dir-header "
            "one-output legacy-stderr-threshold-behavior leader-elect log-json-split-stream "
            "log-text-split-stream"
        ),
        BOOL,
    ),
    **_of(
        (
            "kube-client-burst scale-down-non-empty-candidates-count "
            "scale-down-candidates-pool-min-count max-nodes-total max-bulk-soft-taint-count "
            "max-graceful-termination-sec ok-total-unready-count gce-concurrent-refreshes "
            "expendable-pods-priority-cutoff max-scale-down-parallelism max-drain-parallelism "
            "max-nodes-per-scaleup min-replica-count provisioning-request-max-backoff-cache-size "
            "pod-injection-limit check-capacity-provisioning-request-max-batch-size "
            "cluster-snapshot-parallelism predicate-parallelism "
            # klog
            "v log-file-max-size"
        ),
        INT,
    ),
    **_of(
        (
            "kube-client-qps scale-down-utilization-threshold "
            "scale-down-gpu-utilization-threshold scale-down-candidates-pool-ratio "
            "max-total-unready-percentage memory-difference-ratio max-free-difference-ratio "
            "max-allocatable-difference-ratio"
        ),
        FLOAT,
    ),
    **_of(
        (
            "scale-down-delay-after-add scale-down-delay-after-delete "
            "scale-down-delay-after-failure scale-down-unneeded-time scale-down-unready-time "
            "node-deletion-delay-timeout node-deletion-batcher-interval scan-interval "
            "max-bulk-soft-taint-time max-node-provision-time max-pod-eviction-time "
            "max-inactivity max-binpacking-time max-failing-time "
            "unremovable-node-recheck-timeout new-pod-scale-up-delay "
            "gce-mig-instances-min-refresh-wait-time node-info-cache-expire-time "
            "initial-node-group-backoff-duration max-node-group-backoff-duration "
            "node-group-backoff-reset-timeout max-nodegroup-binpacking-duration "
            "blocking-system-pod-distruption-timeout node-delete-delay-after-taint "
            "scale-down-simulation-timeout provisioning-request-initial-backoff-time "
            "provisioning-request-max-backoff-time "
            "check-capacity-provisioning-request-batch-timebox node-deletion-candidate-ttl "
            # leader election, logging
            "leader-elect-lease-duration leader-elect-renew-deadline "
            "leader-elect-retry-period log-flush-frequency"
        ),
        DURATION,
    ),
    **_of(
        (
            "cluster-name address kubernetes kubeconfig kube-api-content-type cloud-config "
            "namespace cores-total memory-total cloud-provider estimator expander "
            "grpc-expander-cert grpc-expander-url status-config-map-name user-agent "
            "drain-priority-config check-capacity-processor-instance scheduler-config-file "
            "bypassed-scheduler-names feature-gates "
            # klog, leader election, logging
            "log-dir log-file stderrthreshold vmodule log-backtrace-at "
            "leader-elect-resource-lock leader-elect-resource-name "
            "leader-elect-resource-namespace logging-format log-json-info-buffer-size "
            "log-text-info-buffer-size"
        ),
        TEXT,
    ),
    **_of(
        (
            "gpu-total nodes node-group-auto-discovery startup-taint status-taint "
            "balancing-ignore-label balancing-label ignore-taint"
        ),
        MULTI,
    ),
}

# The flags the model reads into CaSettings.
READ = frozenset(
    {
        "expander",
        "max-nodes-total",
        "cores-total",
        "memory-total",
        "gpu-total",
        "balance-similar-node-groups",
        "balancing-ignore-label",
        "expendable-pods-priority-cutoff",
        "cloud-provider",  # which label is a node's GPU type (--gpu-total)
        # checked against the profile's version by evaluate (caflags.dra_note)
        "enable-dynamic-resource-allocation",
        "enable-provisioning-requests",
        "new-pod-scale-up-delay",
    }
)

# Flags that change scale-up and are not modelled: upstream's default (None: any value
# given) and why it matters. Given with another value, they are reported unsupported.
UNSUPPORTED: Mapping[str, tuple[str | None, str]] = {
    "max-nodes-per-scaleup": ("1000", "caps the nodes of one scale-up"),
    "estimator": ("binpacking", "only the binpacking estimator is modelled"),
    "balancing-label": (None, "similarity by named labels only is not modelled"),
    "memory-difference-ratio": ("0.015", "the model compares memory within 0.015"),
    "max-free-difference-ratio": ("0.05", "the model compares free resources within 0.05"),
    "max-allocatable-difference-ratio": ("0.05", "the model compares allocatable within 0.05"),
    "startup-taint": (None, "taints ignored on templates are not modelled"),
    "status-taint": (None, "taints ignored on templates are not modelled"),
    "ignore-taint": (None, "taints ignored on templates are not modelled"),
    "scale-up-from-zero": ("true", "no scale-up with 0 ready nodes is not modelled"),
    "max-total-unready-percentage": ("45", "halting on unready nodes is not modelled"),
    "ok-total-unready-count": ("3", "halting on unready nodes is not modelled"),
    "parallel-scale-up": ("false", "several node groups per loop is not modelled"),
    "scheduler-config-file": (None, "a custom scheduler configuration is not modelled"),
    "force-ds": ("false", "refusing groups too small for DaemonSets is not modelled"),
    "scale-from-unschedulable": ("false", "ignoring spec.unschedulable is not modelled"),
    "enforce-node-group-min-size": ("false", "scale-up to min size is not modelled"),
    "enable-proactive-scaleup": ("false", "proactive scale-up (fake pods) is not modelled"),
    "capacity-buffer-pod-injection-enabled": ("false", "capacity buffers are not modelled"),
    "enable-csi-node-aware-scheduling": ("false", "CSINode limits are not modelled"),
    "bypassed-scheduler-names": (None, "pods of other schedulers are not modelled"),
    "feature-gates": (None, "feature gates are not modelled"),
    "check-capacity-processor-instance": (None, "ProvisioningRequest instances are not modelled"),
}


# Upstream's default of every flag the model reads, as ``config/flags/flags.go`` registers
# it (``AutoscalingFlags.AddFlags``: ``fs.StringVar(..., "expander",
# expander.LeastWasteExpanderName, ...)``, ``fs.BoolVar(..., "enable-provisioning-requests",
# false, ...)``, ...; the same defaults in the earlier ``flag.Bool``/``flag.Int`` form of
# that file), for the releases the profiles model (1.34, 1.35, 1.36), and the
# ``CaSettings`` attribute that holds it. tests/engine/test_ca_flags.py checks each row:
# ``CaSettings()`` of every release equals the default given explicitly.
FLAGS_GO = "config/flags/flags.go"
READ_DEFAULTS: tuple[tuple[str, str, str], ...] = (
    # (flag, upstream default, CaSettings attribute)
    ("expander", "least-waste", "expanders"),
    ("max-nodes-total", "0", "max_nodes_total"),
    ("balance-similar-node-groups", "false", "balance_similar_node_groups"),
    ("expendable-pods-priority-cutoff", "-10", "expendable_pods_priority_cutoff"),
    ("cloud-provider", "gce", "gpu_label"),
    ("cloud-provider", "gce", "cloud_provider"),
    ("enable-provisioning-requests", "false", "provisioning_requests"),
    ("new-pod-scale-up-delay", "0s", "new_pod_scale_up_delay_seconds"),
)
