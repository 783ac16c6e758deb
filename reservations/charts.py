"""Idle reserved GPUs over time: IdleSample series → one Plotly line figure.

Each reservation is one step line (``shape: "hv"``): a sample's idle count holds
until the next sample, as the GPU-hour integral in reservations.idle counts it.
The last value is carried to the end of the range so the line shows it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

IdleSeries = Mapping[str, Sequence[tuple[datetime, int]]]


def idle_over_time_figure(series: IdleSeries, *, start: datetime, end: datetime) -> dict[str, Any]:
    """One step line per reservation of idle reserved GPUs over [start, end]."""
    traces = []
    for name in sorted(series):
        points = sorted(series[name])
        if not points:
            continue
        x = [max(taken_at, start).isoformat() for taken_at, _idle in points]
        y = [idle for _taken_at, idle in points]
        x.append(end.isoformat())
        y.append(y[-1])
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "width": 2},
                "name": name,
                "x": x,
                "y": y,
                "hovertemplate": f"{name}<br>%{{x}}<br>%{{y}} idle GPUs<extra></extra>",
            }
        )
    layout = {
        "height": 320,
        "margin": {"l": 50, "r": 10, "t": 10, "b": 40},
        "xaxis": {"type": "date", "range": [start.isoformat(), end.isoformat()]},
        "yaxis": {"title": {"text": "idle reserved GPUs"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.2},
        "showlegend": True,
    }
    return {"data": traces, "layout": layout}
