"""The demo cluster: a busy cluster built from the real openb trace, plus marked additions.

What is real: the 1,213 GPU nodes of Alibaba's openb trace (CPU, memory, GPU
model and count) and the shapes of its 8,152 pods (CPU, memory, GPU count,
milli-GPU shares).

What is added for the demo (the trace has none of it):

- arrival compression: the trace is sparse in time (only ~40–50 of its pods
  are alive at any moment), so the demo replays it in "fill" mode, the FGD
  paper's protocol: the pod list is a workload mix arriving in a seeded random
  order and never leaving, bound by the real placement engine (default
  policy) until the GPU requests reach ~90 % of capacity, then on until 25 do
  not fit (those stay Pending). Every minute (one replay tick) the oldest 20
  pods leave and 20 new ones arrive, so the live pages move;
- a synthetic topology overlay (2 zones › 3 blocks › 4 racks, seeded, every
  node labelled ``capacityweb.io/synthetic-topology``);
- three reservations: team-a's four G2 nodes (a seeded ~0.3 % of the arrivals
  are team-a pods pinned to them by ``capacityweb.io/reserved-for``, so part
  of it is used and part idle), team-b's four T4 nodes (idle) and team-c's
  paid G3 node-group capacity not yet provisioned;
- GKE node pools, as a GKE cluster labels its nodes: the trace's G3 nodes are pool
  g3-8gpu-pool and its T4 nodes t4-4gpu-pool (``cloud.google.com/gke-nodepool``, an
  instance type named after the trace's model, priced by the cluster's price overrides
  ``DEMO_PRICES``), and cluster-autoscaler's status ConfigMap reports the pools it grows
  (``autoscaled_pools``). The groups are found from these as a kube ingest finds them
  (``topology.kube.discovery``), so every card's action is the ``gcloud`` command for its
  pool; stored NodeGroups only say where their new nodes land (blocks/racks) and what
  they look like;
- pending multi-pod jobs (gangs) chosen so the naive and joint autoscalers
  disagree in the classes the evaluation knows (see ``case_objects``);
- hand-made cases as Kubernetes objects (``case_objects``), each on nodes or a
  node group of its own, tainted so trace pods never land there: a gang split
  across two blocks (never-scales), a gang larger than its group may grow
  (partial-gang) and a Kueue job waiting for quota.

The trace's own timeline stays available: replay mode "time"
(``manage.py replay``) binds the pods alive at a trace time instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from recommender import events
from recommender.models import Evaluation
from recommender.replay import BUSIEST_TRACE_SECONDS
from recommender.services import store_evaluation
from reservations.models import Reservation
from reservations.services import save_reservation
from reservations.utilisation.services import store_demo_report
from topology import services
from topology.ingest.replayspecs import GKE_POOL_LABEL
from topology.ingest.trace import BLOCK_LABEL, RACK_LABEL, ZONE_LABEL
from topology.kube.dra.slices import SHARING_LABEL
from topology.kube.providers.prices import INSTANCE_TYPE_LABEL
from topology.models import Cluster, NodeGroup, Snapshot

DEMO_CLUSTER_NAME = "openb-demo"
DEMO_INGEST_EVERY_SECONDS = 60
# One snapshot a minute, about 11 MB each in the database with its evaluation (the
# model's JSON of 1,213 nodes and their pods is most of it): the demo keeps the last
# DEMO_RETENTION_HOURS (a setting) and its retention task runs every 10 minutes, so
# `make run`'s SQLite file stops growing after that (freed pages are reused).
DEMO_RETENTION_EVERY_SECONDS = 600

DEMO_START_SECONDS = BUSIEST_TRACE_SECONDS
DEMO_SPEED = 120.0
DEMO_SEED = 2023
DEMO_FILL_TARGET = 0.9
DEMO_MAX_PENDING = 25
DEMO_PODS_PER_TICK = 20
# A seeded share of the fill's arrivals are team-a pods pinned to its reserved nodes:
# ~20 pods, about 14 of its 32 GPUs, so the reservation shows used and idle GPUs.
TEAM_A_SHARE = 0.003
PRODUCT_LABEL = "nvidia.com/gpu.product"

TRACE_T4_NODES = 404  # the openb node list's T4 nodes: t4-4gpu-pool's current size
G3_INSTANCE_TYPE = "openb-g3-8gpu"  # named after the trace's model: not a cloud's type
T4_INSTANCE_TYPE = "openb-t4"
# per node-hour: the cluster's price overrides (before the bundled table, which lists no
# such types), shown as "price override of cluster openb-demo"
DEMO_PRICES = {G3_INSTANCE_TYPE: 28.0, T4_INSTANCE_TYPE: 3.2}
T4_NEW_NODES = 6  # what t4-4gpu-pool may add, all in one rack
TEAM_A_G2_NODES = ("openb-node-0026", "openb-node-0027", "openb-node-0029", "openb-node-0031")
TEAM_B_T4_NODES = tuple(f"openb-node-{n:04d}" for n in (35, 36, 43, 57))


def topology_levels() -> list[dict[str, str]]:
    return [
        {"key": ZONE_LABEL, "name": "zone"},
        {"key": BLOCK_LABEL, "name": "block"},
        {"key": RACK_LABEL, "name": "rack"},
        {"key": "kubernetes.io/hostname", "name": "host"},
    ]


def gangs() -> list[dict[str, Any]]:
    """Pending jobs added on top of the trace (the trace records no gangs)."""
    return [
        {
            "namespace": "team-a",
            "name": "llm-pretrain",
            "members": 12,
            "gpus_per_member": 8,
            "gpu_models": ["G3"],
            "required_topology": BLOCK_LABEL,
        },
        {
            "namespace": "team-a",
            "name": "eval-sweep",
            "members": 4,
            "gpus_per_member": 8,
            "gpu_models": ["G2"],
            "required_topology": BLOCK_LABEL,
        },
        {
            "namespace": "team-b",
            "name": "finetune",
            "members": 6,
            "gpus_per_member": 4,
            "gpu_models": ["T4"],
            "required_topology": RACK_LABEL,
        },
        {
            # GPU shares: counting whole devices buys a different number of GPUs.
            "namespace": "team-b",
            "name": "inference-shards",
            "members": 16,
            "gpus_per_member": 1,
            "gpu_milli_per_gpu": 500,
            "gpu_models": ["T4"],
            "required_topology": RACK_LABEL,
        },
        {
            # No node group offers V100M32: a count-only template match would buy for it;
            # cluster-autoscaler (templates judged by the scheduler's filters) does not.
            "namespace": "team-b",
            "name": "v100-train",
            "members": 2,
            "gpus_per_member": 8,
            "gpu_models": ["V100M32"],
            "required_topology": None,
        },
        {
            # team-c's paid G3 capacity covers it: the joint plan reuses the reservation.
            "namespace": "team-c",
            "name": "g3-batch",
            "members": 2,
            "gpus_per_member": 8,
            "gpu_models": ["G3"],
            "required_topology": None,
        },
    ]


def source_settings(*, origin: datetime) -> dict[str, Any]:
    return {
        "pod_list": "default",
        "speed": DEMO_SPEED,
        "start_seconds": DEMO_START_SECONDS,
        "origin": origin.isoformat(),
        "zones": 2,
        "blocks_per_zone": 3,
        "racks_per_block": 4,
        "seed": DEMO_SEED,
        "mode": "fill",
        "fill_target": DEMO_FILL_TARGET,
        "max_pending": DEMO_MAX_PENDING,
        "tick_seconds": DEMO_INGEST_EVERY_SECONDS,
        "pods_per_tick": DEMO_PODS_PER_TICK,
        "reserved_nodes": [*TEAM_A_G2_NODES, *TEAM_B_T4_NODES],
        "teams": [{"namespace": "team-a", "nodes": list(TEAM_A_G2_NODES), "share": TEAM_A_SHARE}],
        "gangs": gangs(),
        "objects": case_objects(),
        "node_labels": node_labels(),
        "prices": dict(DEMO_PRICES),
        "autoscaled_pools": autoscaled_pools(),
    }


def node_labels() -> list[dict[str, Any]]:
    """What GKE labels the trace's G3 and T4 nodes with: their pool and instance type."""
    return [
        {
            "match": {PRODUCT_LABEL: "G3"},
            "labels": {GKE_POOL_LABEL: "g3-8gpu-pool", INSTANCE_TYPE_LABEL: G3_INSTANCE_TYPE},
        },
        {
            "match": {PRODUCT_LABEL: "T4"},
            "labels": {GKE_POOL_LABEL: "t4-4gpu-pool", INSTANCE_TYPE_LABEL: T4_INSTANCE_TYPE},
        },
    ]


def autoscaled_pools() -> list[dict[str, Any]]:
    """The pools cluster-autoscaler grows, as its status ConfigMap reports them."""
    return [
        # the partial-gang case's own pool: no node yet (tainted: only team-p/pretrain
        # tolerates it); its template is the NodeGroup among ``case_objects``
        {"pool": "case-partial-pool", "min_size": 0, "max_size": 2, "zone": "zone-0"},
        {"pool": "g3-8gpu-pool", "min_size": 0, "max_size": 64, "zone": "zone-0"},
        # its members are the trace's T4 nodes: a max size below their number would
        # leave the group "above max" with no room at all
        {
            "pool": "t4-4gpu-pool",
            "min_size": 0,
            "max_size": TRACE_T4_NODES + T4_NEW_NODES,
            "zone": "zone-1",
        },
    ]


CASE_TAINT = "capacityweb.io/demo-case"
CASE_POOL_LABEL = "capacityweb.io/demo-case-pool"
CASE_ALLOCATABLE = {"cpu": "96", "memory": "786432Mi", "pods": "110", "nvidia.com/gpu": "8"}
QUOTA_QUEUE = "team-q-cq"


def _case_node(name: str, case: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "spec": {"taints": [{"key": CASE_TAINT, "value": case, "effect": "NoSchedule"}]},
        "status": {"allocatable": dict(CASE_ALLOCATABLE)},
    }


def _case_pod(
    namespace: str, name: str, case: str, *, group: str | None = None, **extra: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {}}
    if group is not None:
        metadata["labels"]["scheduling.x-k8s.io/pod-group"] = group
    metadata.update(extra.pop("metadata", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "tolerations": [
                {"key": CASE_TAINT, "operator": "Equal", "value": case, "effect": "NoSchedule"}
            ],
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "8", "nvidia.com/gpu": "8"}}}
            ],
            **extra.pop("spec", {}),
        },
        "status": {"phase": extra.pop("phase", "Pending")},
    }


def _pod_group(namespace: str, name: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": members},
    }


def case_objects() -> list[dict[str, Any]]:
    """Hand-made cases, each isolated by the ``CASE_TAINT`` its pods alone tolerate.

    - ``team-s/split-train`` (never-scales, topology): 2 x 8 GPUs that must share one
      block; nodes case-split-0 (zone-0-block-0) and case-split-1 (zone-0-block-1),
      each in its block's last rack (the first-child drill of the topology page stays
      on trace nodes),
      have 8 free GPUs each and alone carry the pool label the pods select. Cluster-
      autoscaler's filter-out-schedulable places each member alone on one of them, so
      it adds nothing, and the gang waits for ever (tests/scenarios/
      never-scales-gang-split-blocks); no group can add a node there (joint: blocked).
    - ``team-p/pretrain`` (partial-gang): 3 x 8 GPUs selecting the case-partial-pool
      group (8 GPUs a node, max 2 nodes): cluster-autoscaler buys a node for each of
      two members and stops at the group's max size (tests/scenarios/partial-gang).
    - ``team-q/train`` (quota): a Kueue job of 8 GPUs in ClusterQueue team-q-cq,
      whose nominal 8 GPUs are all used by team-q/admitted-0 on case-quota-0: it waits
      for quota (Kueue keeps it suspended), a reason to buy for neither autoscaler
      (tests/scenarios/quota-waiting-kueue).

    device-model is not shown: cluster-autoscaler judges node-group templates with the
    scheduler's own filters (GPU model by label, DRA claims on the template), so the
    template it buys never rejects the pods; tests/scenarios/device-model-* show the
    class no longer arises (disagreements: []).
    """
    split = [
        _case_node(
            f"case-split-{i}",
            "split",
            {
                ZONE_LABEL: "zone-0",
                BLOCK_LABEL: f"zone-0-block-{i}",
                RACK_LABEL: f"zone-0-block-{i}-rack-3",
                CASE_POOL_LABEL: "split",
            },
        )
        for i in (0, 1)
    ]
    split_pods = [
        _case_pod(
            "team-s",
            f"split-train-{i}",
            "split",
            group="split-train",
            spec={"nodeSelector": {CASE_POOL_LABEL: "split"}},
            metadata={"annotations": {"kueue.x-k8s.io/podset-required-topology": BLOCK_LABEL}},
        )
        for i in (0, 1)
    ]
    partial_pods = [
        _case_pod(
            "team-p",
            f"pretrain-{i}",
            "partial",
            group="pretrain",
            spec={"nodeSelector": {CASE_POOL_LABEL: "partial-gang"}},
        )
        for i in range(3)
    ]
    queue_label = {"kueue.x-k8s.io/queue-name": "team-q-lq"}
    quota = [
        _case_node("case-quota-0", "quota", {ZONE_LABEL: "zone-1"}),
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": QUOTA_QUEUE},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "default-flavor",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 64},
                                    {"name": "nvidia.com/gpu", "nominalQuota": 8},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": "team-q-lq", "namespace": "team-q"},
            "spec": {"clusterQueue": QUOTA_QUEUE},
        },
        _case_pod(
            "team-q",
            "admitted-0",
            "quota",
            metadata={"labels": queue_label},
            spec={"nodeName": "case-quota-0"},
            phase="Running",
        ),
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train", "namespace": "team-q", "labels": queue_label},
            "spec": {
                "parallelism": 1,
                "completions": 1,
                "suspend": True,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "c",
                                "resources": {"requests": {"cpu": "8", "nvidia.com/gpu": "8"}},
                            }
                        ],
                    }
                },
            },
        },
    ]
    # the pool has no node yet: cluster-autoscaler templates its nodes from the cloud's
    # instance template, which no object shows; this NodeGroup gives it (no size, no
    # price: those are cluster-autoscaler's and the price table's)
    partial_pool = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "case-partial-pool"},
        "spec": {
            "nodeSelector": {GKE_POOL_LABEL: "case-partial-pool"},
            "template": {
                "labels": {
                    PRODUCT_LABEL: "G3",
                    INSTANCE_TYPE_LABEL: G3_INSTANCE_TYPE,
                    CASE_POOL_LABEL: "partial-gang",
                },
                "taints": [{"key": CASE_TAINT, "value": "partial", "effect": "NoSchedule"}],
                "allocatable": dict(CASE_ALLOCATABLE),
            },
        },
    }
    return [
        *split,
        *split_pods,
        _pod_group("team-s", "split-train", 2),
        *partial_pods,
        _pod_group("team-p", "pretrain", 3),
        partial_pool,
        *quota,
    ]


def node_group_objects() -> list[dict[str, Any]]:
    """What the demo stores over its discovered pools: where new nodes land (the synthetic
    blocks and racks) and what they look like; sizes and prices stay as found."""

    def group(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "capacityweb.io/v1alpha1",
            "kind": "NodeGroup",
            "metadata": {"name": name},
            "spec": spec,
        }

    return [
        group(
            "g3-8gpu-pool",
            {
                "template": {
                    "labels": {
                        GKE_POOL_LABEL: "g3-8gpu-pool",
                        INSTANCE_TYPE_LABEL: G3_INSTANCE_TYPE,
                        PRODUCT_LABEL: "G3",
                        SHARING_LABEL: "mps",
                    },
                    "taints": [],
                    "allocatable": {
                        "cpu": "96",
                        "memory": "786432Mi",
                        "pods": "110",
                        "nvidia.com/gpu": "8",
                    },
                },
                "placement": [
                    {
                        "labels": {ZONE_LABEL: "zone-0", BLOCK_LABEL: "zone-0-block-1"},
                        "maxNewNodes": 8,
                    },
                    {
                        "labels": {ZONE_LABEL: "zone-1", BLOCK_LABEL: "zone-1-block-2"},
                        "maxNewNodes": 12,
                    },
                ],
            },
        ),
        group(
            "t4-4gpu-pool",
            {
                "template": {
                    "labels": {
                        GKE_POOL_LABEL: "t4-4gpu-pool",
                        INSTANCE_TYPE_LABEL: T4_INSTANCE_TYPE,
                        PRODUCT_LABEL: "T4",
                        SHARING_LABEL: "mps",
                    },
                    "taints": [],
                    "allocatable": {
                        "cpu": "64",
                        "memory": "262144Mi",
                        "pods": "110",
                        "nvidia.com/gpu": "4",
                    },
                },
                "placement": [
                    {
                        "labels": {
                            ZONE_LABEL: "zone-1",
                            BLOCK_LABEL: "zone-1-block-0",
                            RACK_LABEL: "zone-1-block-0-rack-2",
                        },
                        "maxNewNodes": T4_NEW_NODES,
                    },
                ],
            },
        ),
    ]


@dataclass(frozen=True)
class DemoReservation:
    name: str
    spec: dict[str, Any]


def reservations() -> list[DemoReservation]:
    window = {"start": "2026-01-01T00:00:00Z", "end": "2028-01-01T00:00:00Z"}
    return [
        DemoReservation(
            "team-a-g2",
            {
                "owner": {"namespaces": ["team-a"]},
                "nodeNames": list(TEAM_A_G2_NODES),
                "pricePerGpuHour": 2.5,
                **window,
            },
        ),
        DemoReservation(
            "team-b-t4",
            {
                "owner": {"namespaces": ["team-b"]},
                "nodeNames": list(TEAM_B_T4_NODES),
                "pricePerGpuHour": 0.9,
                **window,
            },
        ),
        DemoReservation(
            "team-c-g3-capacity",
            {
                "owner": {"namespaces": ["team-c"]},
                "nodeGroup": {"name": "g3-8gpu-pool", "count": 2},
                "pricePerGpuHour": 3.5,
                **window,
            },
        ),
    ]


@transaction.atomic
def configure_demo(*, now: datetime) -> Cluster:
    """The demo cluster row, its node groups, reservations and beat entries (no ingest)."""
    cluster, _created = Cluster.objects.get_or_create(
        name=DEMO_CLUSTER_NAME,
        defaults={"source_kind": Cluster.SourceKind.REPLAY, "source_settings": {}},
    )
    cluster.source_kind = Cluster.SourceKind.REPLAY
    cluster.source_settings = source_settings(origin=now)
    cluster.topology_levels = topology_levels()
    cluster.enabled = True
    cluster.retention_days = settings.DEMO_RETENTION_HOURS / 24
    cluster.price_overrides = dict(DEMO_PRICES)
    cluster.save()
    objects = node_group_objects()
    # an earlier demo's stored groups this one no longer has (case-partial-pool, now
    # among the replay's objects) would override what is found
    NodeGroup.objects.filter(cluster=cluster, origin=NodeGroup.Origin.PROJECT).exclude(
        name__in=[o["metadata"]["name"] for o in objects]
    ).delete()
    services.save_node_groups(cluster=cluster, objects=objects)
    existing = {r.name: r for r in Reservation.objects.filter(cluster=cluster)}
    for item in reservations():
        save_reservation(
            cluster=cluster, name=item.name, spec=item.spec, instance=existing.get(item.name)
        )
    services.schedule_ingest(cluster=cluster, every_seconds=DEMO_INGEST_EVERY_SECONDS)
    services.schedule_retention(every_seconds=DEMO_RETENTION_EVERY_SECONDS)
    return cluster


def load_demo(*, now: datetime) -> tuple[Cluster, Evaluation]:
    """Create or restart the demo cluster and give it an evaluated snapshot: the same
    one whenever it is loaded.

    The replay moves one tick a minute from its ``origin`` (pods leave and arrive), so a
    load that kept the first load's origin read a later tick, another state (fewer
    trace pods pending). A load restarts the replay at ``now`` (tick 0) and deletes the
    demo's earlier snapshots (demo data, and their states would come again tick by
    tick: content already stored is not stored twice, so the live pages would stand
    still until the new run passed the old one).
    """
    cluster = configure_demo(now=now)
    Snapshot.objects.filter(cluster=cluster).delete()
    snapshot = services.ingest_from_source(cluster=cluster, now=now)
    if snapshot is None:
        snapshot = Snapshot.objects.filter(cluster=cluster).order_by("-taken_at", "-id").first()
    if snapshot is None:
        raise RuntimeError("the demo replay produced no snapshot")
    evaluation = Evaluation.objects.filter(snapshot=snapshot).first()
    if evaluation is None:
        evaluation = store_evaluation(snapshot=snapshot)
        events.publish_evaluation(evaluation)
    # allocated-but-idle GPUs from demo DCGM series (no Prometheus): marked demo data
    store_demo_report(cluster=cluster, now=now)
    return cluster, evaluation
