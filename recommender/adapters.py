"""ORM ⇄ engine for the recommender: an evaluate() result to rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from recommender.actions.report import actions_for, apply_text, named_placement
from recommender.engine.evaluate.evaluation import Evaluation as EngineEvaluation
from recommender.engine.scheduler import breakdown, breakdown_summary
from recommender.engine.scheduler.breakdown_summary import BreakdownSummary
from recommender.models import EvaluatedNode, Evaluation, Recommendation, WorkloadVerdict
from topology.adapters import cluster_from_snapshot
from topology.model.hardware import Cluster
from topology.models import Snapshot


def evaluation_figures(result: Mapping[str, Any]) -> dict[str, Any]:
    """The Evaluation columns copied out of the result (what pages sort and filter on)."""
    cluster = result.get("cluster") or {}
    cost = result.get("cost") or {}
    return {
        "gpus": int(cluster.get("gpus") or 0),
        "gpus_allocated": int(cluster.get("gpusAllocated") or 0),
        "gpus_idle_reserved": int(cluster.get("gpusIdleReserved") or 0),
        "pending_count": len(result.get("workloads") or []),
        "naive_cost_per_hour": float(cost.get("naivePerHour") or 0.0),
        "joint_cost_per_hour": float(cost.get("jointPerHour") or 0.0),
        "stranded_cost_per_hour": float(cost.get("strandedPerHour") or 0.0),
    }


def recommendations(
    evaluation: Evaluation, result: EngineEvaluation, cluster: Cluster
) -> list[Recommendation]:
    """Rows of the engine's recommendations, each with what to apply
    (``recommender.actions.report.actions_for``, as the page shows them, and the first
    alone as ``yaml``: ``apply_text``) and the group's size when evaluated."""
    rows = []
    for rec in result.recommendations:
        item = rec.to_json()
        actions = actions_for(rec, result, cluster)
        rows.append(
            Recommendation(
                evaluation=evaluation,
                node_group=rec.node_group,
                count=rec.count,
                current_size=result.node_group_sizes.get(rec.node_group, 0),
                placement=named_placement(rec, cluster),
                cost_per_hour=rec.cost_per_hour,
                workloads=item["workloads"],
                yaml=apply_text(actions),
                actions=[a.to_json() for a in actions],
            )
        )
    return rows


def workload_breakdowns(
    snapshot: Snapshot, *, policy: str, limit: int
) -> dict[str, BreakdownSummary]:
    """The engine's per-node breakdown of every pending workload of the snapshot, as the
    snapshot's evaluation saw them (its ``taken_at``, its scheduler profile), summed up
    with ``limit`` nodes each."""
    model = cluster_from_snapshot(snapshot)
    return {
        key: breakdown_summary.summarise(found, limit)
        for key, found in breakdown.all_breakdowns(
            model, at=snapshot.taken_at, policy=policy
        ).items()
    }


def verdicts(
    evaluation: Evaluation,
    result: Mapping[str, Any],
    pending_since: Mapping[str, datetime] | None = None,
) -> list[WorkloadVerdict]:
    """One row per workload of the result.

    ``pending_since``: workload → when it was first seen pending, from the cluster's
    previous evaluation (absent: first seen in this one). Each plan's cost is the
    price of the nodes it adds for the workload (``nodeGroups``' prices); reusing a
    reservation costs nothing more.
    """
    prices = {
        str(group["name"]): float(group.get("pricePerNodeHour") or 0.0)
        for group in result.get("nodeGroups") or []
    }
    since = pending_since or {}
    rows = []
    for item in result.get("workloads") or []:
        workload = str(item["name"])
        naive = dict(item.get("naive") or {})
        naive["reasons"] = list(item.get("naiveReasons") or [])  # why it adds nothing (more)
        joint = dict(item.get("joint") or {})
        joint["preempts"] = list(item.get("preempts") or [])  # the pods it evicts
        rows.append(
            WorkloadVerdict(
                evaluation=evaluation,
                workload=workload,
                namespace=workload.split("/", 1)[0],
                kind=str(item.get("kind") or "pod"),
                verdict=str(item["verdict"]),
                gpus=int(item.get("gpus") or 0),
                requested_gpus=float(item.get("gpus") or 0),
                reasons=list(item.get("reasons") or []),
                disagreements=list(item.get("disagreements") or []),
                naive=naive,
                joint=joint,
                relaxations=list(item.get("relaxations") or []),
                naive_cost_per_hour=nodes_cost(naive.get("addNodes") or {}, prices),
                joint_cost_per_hour=_joint_cost(item, prices),
                pending_since=since.get(workload, evaluation.taken_at),
            )
        )
    return rows


def _joint_cost(item: Mapping[str, Any], prices: Mapping[str, float]) -> float:
    """The joint plan's own price for the workload (``jointCostPerHour``: paid
    reservation nodes it provisions cost nothing more); results stored before the key
    existed are priced from the joint ``addNodes``."""
    cost = item.get("jointCostPerHour")
    if cost is not None:
        return float(cost)
    return nodes_cost(dict(item.get("joint") or {}).get("addNodes") or {}, prices)


def nodes_cost(add_nodes: Mapping[str, int], prices: Mapping[str, float]) -> float:
    """$/h of ``{group: count}`` nodes at the groups' prices (an unpriced group: 0)."""
    return round(sum(count * prices.get(group, 0.0) for group, count in add_nodes.items()), 2)


def evaluated_nodes(
    evaluation: Evaluation,
    cells: Iterable[Mapping[str, Any]],
    reservation_owners: Mapping[str, Iterable[str]],
) -> list[EvaluatedNode]:
    """The evaluation's heatmap cells (one per GPU) grouped into node rows, by name.

    ``reservation_owners``: reservation name → owning namespaces, so that a node's
    ``teams`` names the owners of its GPUs' reservations besides its pods' namespaces.
    """
    devices_by_node: dict[str, list[dict[str, Any]]] = {}
    first_cell: dict[str, Mapping[str, Any]] = {}
    for cell in cells:
        name = str(cell.get("node"))
        first_cell.setdefault(name, cell)
        allocated = cell.get("allocatedMilli")
        devices_by_node.setdefault(name, []).append(
            {
                "gpu": str(cell.get("gpu")),
                "model": _text(cell.get("model")),
                "allocated_milli": None if allocated is None else int(allocated),
                "reservation": _text(cell.get("reservation")),
                "pods": [str(pod) for pod in cell.get("pods") or ()],
            }
        )
    return [
        _evaluated_node(evaluation, name, first_cell[name], devices, reservation_owners)
        for name, devices in sorted(devices_by_node.items())
    ]


def _evaluated_node(
    evaluation: Evaluation,
    name: str,
    cell: Mapping[str, Any],
    devices: list[dict[str, Any]],
    reservation_owners: Mapping[str, Iterable[str]],
) -> EvaluatedNode:
    known = [d["allocated_milli"] for d in devices if d["allocated_milli"] is not None]
    reservations = sorted({d["reservation"] for d in devices if d["reservation"]})
    teams = {pod.split("/", 1)[0] for d in devices for pod in d["pods"] if "/" in pod}
    for reservation in reservations:
        teams.update(reservation_owners.get(reservation) or ())
    return EvaluatedNode(
        evaluation=evaluation,
        cluster_id=evaluation.cluster_id,
        name=name,
        zone=_text(cell.get("zone")),
        block=_text(cell.get("block")),
        rack=_text(cell.get("rack")),
        node_group=_text(cell.get("nodeGroup")),
        gpu_model=_text(cell.get("model")),
        gpus=len(devices),
        allocated_milli=sum(known) if len(known) == len(devices) else None,
        devices=devices,
        reservations=reservations,
        teams=sorted(teams),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
