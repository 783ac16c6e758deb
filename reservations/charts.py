"""Idle reserved GPUs over time: IdleSample series → one Plotly line figure.

Each reservation is one step line (``shape: "hv"``): a sample's idle count holds
until the next sample, as the GPU-hour integral in reservations.idle counts it.

The x axis spans the samples actually there, from the first (or the range's
start, for a sample that carries in from before it) to the last, not the
requested window: a 30-day window with one day of samples shows that day across
the whole width instead of squeezing it into the last pixels. Every line is
carried to that last sample so a reservation whose samples stopped earlier shows
its value holding. The range asked for is named in the axis title; a range with
no sample says so instead of drawing empty axes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

IdleSeries = Mapping[str, Sequence[tuple[datetime, int]]]
SINGLE_SAMPLE_PADDING = timedelta(hours=1)
NO_SAMPLES = "No idle sample in this range"


def data_range(series: IdleSeries, start: datetime) -> tuple[datetime, datetime] | None:
    """First and last sample time over every series (the first clamped to ``start``)."""
    times = [taken_at for points in series.values() for taken_at, _idle in points]
    if not times:
        return None
    return max(min(times), start), max(times)


def idle_over_time_figure(series: IdleSeries, *, start: datetime, end: datetime) -> dict[str, Any]:
    """One step line per reservation of idle reserved GPUs, x from first to last sample."""
    span = data_range(series, start)
    traces = []
    for name in sorted(series):
        points = sorted(series[name])
        if not points or span is None:
            continue
        x = [max(taken_at, start).isoformat() for taken_at, _idle in points]
        y = [idle for _taken_at, idle in points]
        if points[-1][0] < span[1]:
            x.append(span[1].isoformat())
            y.append(y[-1])
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers" if len(points) == 1 else "lines",
                "line": {"shape": "hv", "width": 2},
                "name": name,
                "x": x,
                "y": y,
                "hovertemplate": f"{name}<br>%{{x}}<br>%{{y}} idle GPUs<extra></extra>",
            }
        )
    asked = f"range asked: {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC"
    layout: dict[str, Any] = {
        "height": 320,
        "margin": {"l": 50, "r": 10, "t": 10, "b": 60},
        "xaxis": {"type": "date", "title": {"text": f"time (UTC); {asked}"}},
        "yaxis": {"title": {"text": "idle reserved GPUs"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.3},
        "showlegend": True,
    }
    if span is None:
        layout["xaxis"]["range"] = [start.isoformat(), end.isoformat()]
        layout["annotations"] = [
            {
                "text": NO_SAMPLES,
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }  # fmt: skip
        ]
    else:
        first, last = span
        if first == last:
            first, last = first - SINGLE_SAMPLE_PADDING, last + SINGLE_SAMPLE_PADDING
        layout["xaxis"]["range"] = [first.isoformat(), last.isoformat()]
    return {"data": traces, "layout": layout}
