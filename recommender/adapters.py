"""ORM ⇄ engine for the recommender: an evaluate() JSON result to rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from recommender.models import Evaluation, Recommendation, WorkloadVerdict
from topology.adapters import PROJECT_API_VERSION


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


def recommendation_yaml(item: Mapping[str, Any]) -> str:
    """The scale-up to apply, as a NodeGroup object naming where the new nodes land."""
    if item.get("yaml"):
        return str(item["yaml"])
    document = {
        "apiVersion": PROJECT_API_VERSION,
        "kind": "NodeGroup",
        "metadata": {"name": item["nodeGroup"]},
        "spec": {
            "scaleUp": {"count": int(item["count"])},
            "placement": [
                {"labels": dict(item.get("placement") or {}), "maxNewNodes": int(item["count"])}
            ],
        },
    }
    return yaml.safe_dump(document, sort_keys=False)


def recommendations(evaluation: Evaluation, result: Mapping[str, Any]) -> list[Recommendation]:
    return [
        Recommendation(
            evaluation=evaluation,
            node_group=str(item["nodeGroup"]),
            count=int(item["count"]),
            placement=dict(item.get("placement") or {}),
            cost_per_hour=float(item.get("costPerHour") or 0.0),
            workloads=list(item.get("workloads") or []),
            yaml=recommendation_yaml(item),
        )
        for item in result.get("recommendations") or []
    ]


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
