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
- two node groups whose new nodes land in concrete blocks/racks;
- pending multi-pod jobs (gangs) chosen so the naive and joint autoscalers
  disagree in each class the evaluation knows (topology, reservation,
  partial gang, sharing, device model).

The trace's own timeline stays available: replay mode "time"
(``manage.py replay``) binds the pods alive at a trace time instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from recommender import events
from recommender.models import Evaluation
from recommender.services import store_evaluation
from reservations.models import Reservation
from reservations.services import save_reservation
from topology import services
from topology.dra import SHARING_LABEL
from topology.models import Cluster, Snapshot
from topology.replay import BUSIEST_TRACE_SECONDS
from topology.trace import BLOCK_LABEL, RACK_LABEL, ZONE_LABEL

DEMO_CLUSTER_NAME = "openb-demo"
DEMO_INGEST_EVERY_SECONDS = 60
# About 100 KB of snapshot and 55 KB of evaluation (compressed) a minute: keep a day.
DEMO_RETENTION_DAYS = 1

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
    }


def node_group_objects() -> list[dict[str, Any]]:
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
                "nodeSelector": {PRODUCT_LABEL: "G3"},
                "minSize": 0,
                "maxSize": 64,
                "pricePerNodeHour": 28.0,
                "template": {
                    "labels": {PRODUCT_LABEL: "G3", SHARING_LABEL: "mps"},
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
                "nodeSelector": {PRODUCT_LABEL: "T4"},
                "minSize": 0,
                "maxSize": 40,
                "pricePerNodeHour": 3.2,
                "template": {
                    "labels": {PRODUCT_LABEL: "T4", SHARING_LABEL: "mps"},
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
                        "maxNewNodes": 6,
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
    cluster, created = Cluster.objects.get_or_create(
        name=DEMO_CLUSTER_NAME,
        defaults={"source_kind": Cluster.SourceKind.REPLAY, "source_settings": {}},
    )
    origin = cluster.source_settings.get("origin") if not created else None
    cluster.source_kind = Cluster.SourceKind.REPLAY
    cluster.source_settings = source_settings(
        origin=datetime.fromisoformat(origin) if origin else now
    )
    cluster.topology_levels = topology_levels()
    cluster.enabled = True
    cluster.retention_days = DEMO_RETENTION_DAYS
    cluster.save()
    services.save_node_groups(cluster=cluster, objects=node_group_objects())
    existing = {r.name: r for r in Reservation.objects.filter(cluster=cluster)}
    for item in reservations():
        save_reservation(
            cluster=cluster, name=item.name, spec=item.spec, instance=existing.get(item.name)
        )
    services.schedule_ingest(cluster=cluster, every_seconds=DEMO_INGEST_EVERY_SECONDS)
    services.schedule_retention()
    return cluster


def load_demo(*, now: datetime) -> tuple[Cluster, Evaluation]:
    """Create or refresh the demo cluster and give it an evaluated snapshot (idempotent)."""
    cluster = configure_demo(now=now)
    snapshot = services.ingest_from_source(cluster=cluster, now=now)
    if snapshot is None:
        snapshot = Snapshot.objects.filter(cluster=cluster).order_by("-taken_at", "-id").first()
    if snapshot is None:
        raise RuntimeError("the demo replay produced no snapshot")
    evaluation = Evaluation.objects.filter(snapshot=snapshot).first()
    if evaluation is None:
        evaluation = store_evaluation(snapshot=snapshot)
        events.publish_evaluation(evaluation)
    return cluster, evaluation
