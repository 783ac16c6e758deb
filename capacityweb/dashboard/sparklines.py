"""Tiny inline SVG line charts for the overview cards: one value over the last day.

    (taken_at, value) points ─► x by time over [start, end], y from 0 to the day's
    maximum ─► "x,y x,y …" for an SVG <polyline> (drawn server-side: no script, no
    Plotly for a 120×24 picture, and it lives in the cached cards)

A sample's value holds until the next one (as the evaluations are snapshots),
so the line steps; the last value is drawn to the last sample, not to ``end``:
what is not measured is not drawn. No point → no line, and the card says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

WIDTH, HEIGHT, PAD = 120, 24, 2


@dataclass(frozen=True)
class Sparkline:
    points: str  # SVG polyline points
    first: float
    last: float
    peak: float
    samples: int

    @property
    def label_numbers(self) -> str:
        return f"{self.first:g} → {self.last:g} (peak {self.peak:g})"


def sparkline(
    values: Sequence[tuple[datetime, float]], *, start: datetime, end: datetime
) -> Sparkline | None:
    if not values:
        return None
    ordered = sorted(values)
    seconds = max((end - start).total_seconds(), 1.0)
    peak = max(value for _at, value in ordered)
    scale_y = (HEIGHT - 2 * PAD) / peak if peak > 0 else 0.0

    def x(at: datetime) -> float:
        fraction = min(max((at - start).total_seconds() / seconds, 0.0), 1.0)
        return round(PAD + fraction * (WIDTH - 2 * PAD), 1)

    def y(value: float) -> float:
        return round(HEIGHT - PAD - value * scale_y, 1)

    coordinates: list[tuple[float, float]] = []
    for index, (at, value) in enumerate(ordered):
        if index:
            coordinates.append((x(at), coordinates[-1][1]))  # the previous value held
        coordinates.append((x(at), y(value)))
    if len(coordinates) == 1:  # one sample: a short tick ending at it, not an invisible point
        coordinates.insert(0, (max(coordinates[0][0] - 8, 0.0), coordinates[0][1]))
    return Sparkline(
        points=" ".join(f"{cx:g},{cy:g}" for cx, cy in coordinates),
        first=ordered[0][1],
        last=ordered[-1][1],
        peak=peak,
        samples=len(ordered),
    )
