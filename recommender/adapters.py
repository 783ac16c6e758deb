"""ORM ⇄ engine for the recommender: an evaluate() result to rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recommender.actions import apply_text
from recommender.engine.evaluate.evaluation import Evaluation as EngineEvaluation
from recommender.models import Evaluation, Recommendation, WorkloadVerdict
from topology.hardware import Cluster


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
    (``recommender.actions.apply_text``: the NodeGroup YAML of a project group, the
    autoscaler's own actions for a discovered one) and the group's size when evaluated."""
    rows = []
    for rec in result.recommendations:
        item = rec.to_json()
        rows.append(
            Recommendation(
                evaluation=evaluation,
                node_group=rec.node_group,
                count=rec.count,
                current_size=result.node_group_sizes.get(rec.node_group, 0),
                placement=item["placement"],
                cost_per_hour=rec.cost_per_hour,
                workloads=item["workloads"],
                yaml=apply_text(rec, result, cluster),
            )
        )
    return rows


def verdicts(evaluation: Evaluation, result: Mapping[str, Any]) -> list[WorkloadVerdict]:
    rows = []
    for item in result.get("workloads") or []:
        workload = str(item["name"])
        rows.append(
            WorkloadVerdict(
                evaluation=evaluation,
                workload=workload,
                namespace=workload.split("/", 1)[0],
                kind=str(item.get("kind") or "pod"),
                verdict=str(item["verdict"]),
                gpus=int(item.get("gpus") or 0),
                reasons=list(item.get("reasons") or []),
                disagreements=list(item.get("disagreements") or []),
                naive=dict(item.get("naive") or {}),
                joint=dict(item.get("joint") or {}),
            )
        )
    return rows
