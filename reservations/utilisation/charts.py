"""The utilisation layer: one heatmap cell per GPU, coloured by its mean activity.

Rows are nodes (those with the most idle allocated GPU-hours first, at most
``MAX_NODES``), columns GPUs (a MIG instance is its own column, ``gpu-0 · MIG 1``).
Colour encodes one thing, mean engine activity over the window, from vermillion (0 %)
through orange and sky blue to blue (100 %), Okabe-Ito colour-blind-safe; grey is
"utilisation unknown" (a GPU of the snapshot with no series), never 0 %. A cross marks
a GPU allocated but idle at the end of the window. Blank: no GPU at that position.

Pure: report JSON (``reservations.utilisation.dcgm.report_json``) in, Plotly figure dict out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

MAX_NODES = 40
UNKNOWN_Z = -10.0
Z_MAX = 100.0
GREY, VERMILLION, ORANGE, SKY_BLUE, BLUE = "#BBBBBB", "#D55E00", "#E69F00", "#56B4E9", "#0072B2"


def _position(z: float) -> float:
    return (z - UNKNOWN_Z) / (Z_MAX - UNKNOWN_Z)


def colourscale() -> list[list[Any]]:
    """Grey for the unknown sentinel only; activity 0..100 % from vermillion to blue."""
    zero = _position(0.0)
    return [
        [0.0, GREY],
        [zero - 0.001, GREY],
        [zero, VERMILLION],
        [_position(10.0), ORANGE],
        [_position(50.0), SKY_BLUE],
        [1.0, BLUE],
    ]


def _column(gpu: Mapping[str, Any]) -> str:
    return f"{gpu['gpu']} · MIG {gpu['instance']}" if gpu.get("instance") else str(gpu["gpu"])


def _column_key(column: str) -> tuple[int, str]:
    index = column.removeprefix("gpu-").split(" ")[0]
    return (int(index) if index.isdigit() else 1_000_000, column)


def _hover(node: str, column: str, gpu: Mapping[str, Any] | None) -> str:
    if gpu is None:
        return f"{node} {column}<br>utilisation unknown (no series)"
    pods = ", ".join(gpu.get("pods") or []) or "no pod"
    idle = " · allocated but idle now" if gpu.get("idle_now") else ""
    return (
        f"{node} {column}<br>{pods}<br>activity mean {gpu['activity_mean_percent']} %, "
        f"p95 {gpu['activity_p95_percent']} %<br>idle {gpu['idle_gpu_hours']} GPU-h{idle}"
    )


def utilisation_figure(result: Mapping[str, Any]) -> dict[str, Any]:
    """The heatmap figure of one stored report (``{}`` result: an empty figure that says so)."""
    cells: dict[str, dict[str, Mapping[str, Any] | None]] = defaultdict(dict)
    idle_hours: dict[str, float] = defaultdict(float)
    for gpu in result.get("gpus") or []:
        if gpu.get("activity_mean_percent") is None:
            continue
        cells[gpu["node"]][_column(gpu)] = gpu
        idle_hours[gpu["node"]] += gpu["idle_gpu_hours"]
    for node, gpu_name in result.get("without_data") or []:
        cells[node].setdefault(gpu_name, None)
    nodes = sorted(cells, key=lambda n: (-idle_hours[n], n))[:MAX_NODES]
    columns = sorted({c for n in nodes for c in cells[n]}, key=_column_key)
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    crosses: dict[str, list[str]] = {"x": [], "y": []}
    for node in nodes:
        row_z: list[float | None] = []
        row_text: list[str] = []
        for column in columns:
            present = column in cells[node]
            gpu = cells[node].get(column)
            row_z.append(
                None if not present else UNKNOWN_Z if gpu is None else gpu["activity_mean_percent"]
            )
            row_text.append(_hover(node, column, gpu) if present else "")
            if gpu is not None and gpu.get("idle_now"):
                crosses["x"].append(column)
                crosses["y"].append(node)
        z.append(row_z)
        text.append(row_text)
    return {
        "data": [
            {
                "type": "heatmap",
                "x": columns,
                "y": nodes,
                "z": z,
                "text": text,
                "hoverinfo": "text",
                "zmin": UNKNOWN_Z,
                "zmax": Z_MAX,
                "colorscale": colourscale(),
                "colorbar": {"title": {"text": "activity %"}, "tickvals": [0, 25, 50, 75, 100]},
                "xgap": 2,
                "ygap": 2,
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "allocated but idle now",
                "x": crosses["x"],
                "y": crosses["y"],
                "marker": {"symbol": "x", "size": 9, "color": "#000000"},
                "hoverinfo": "skip",
            },
        ],
        "layout": {
            "title": {"text": "" if nodes else "No GPU in this measurement"},
            "height": max(240, 22 * len(nodes) + 120),
            "margin": {"l": 160, "r": 20, "t": 30, "b": 60},
            "yaxis": {"autorange": "reversed", "type": "category"},
            "xaxis": {"type": "category", "side": "top"},
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.05},
        },
    }
