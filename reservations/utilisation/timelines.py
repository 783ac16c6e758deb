"""DCGM series as per-device timelines, and what a timeline says: mean, p95, and
how long its GPU sat allocated but idle (``idle_seconds``). ``reservations.utilisation.dcgm``
joins the timelines to the hardware model and prices them.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
FB_USED = "DCGM_FI_DEV_FB_USED"
METRICS = (ENGINE_ACTIVE, GPU_UTIL, FB_USED)
# a gap of more than this many steps between two points breaks an idle run
GAP_STEPS = 1.5


@dataclass(frozen=True, slots=True)
class DcgmSeries:
    """One series of a range query: its metric, its labels, its (epoch seconds, value) points."""

    metric: str
    labels: Mapping[str, str]
    samples: tuple[tuple[float, float], ...]


@dataclass(frozen=True, slots=True)
class UtilisationSettings:
    """When an allocated GPU counts as idle: activity below ``idle_below_percent`` for at
    least ``idle_for_seconds`` without a break."""

    idle_below_percent: float = 5.0
    idle_for_seconds: float = 3600.0


# --- a device's key and holder ----------------------------------------------------------


DeviceKey = tuple[str, str, str]  # (Hostname, gpu index, GPU_I_ID or "")


def device_key(labels: Mapping[str, str]) -> DeviceKey:
    return (labels.get("Hostname", ""), labels.get("gpu", ""), labels.get("GPU_I_ID", ""))


def pod_of(labels: Mapping[str, str]) -> str | None:
    """``namespace/pod`` holding the GPU at this point, or None (the exporter's empty labels).

    A scrape without ``honor_labels`` whose target carries its own ``pod``/``namespace``
    (the exporter's pod, from Kubernetes service discovery) keeps the exporter's as
    ``exported_pod``/``exported_namespace`` (Prometheus docs, scrape_config
    ``honor_labels``): those, when present, name the GPU's holder.
    """
    if "exported_pod" in labels or "exported_namespace" in labels:
        pod, namespace = labels.get("exported_pod", ""), labels.get("exported_namespace", "")
    else:
        pod, namespace = labels.get("pod", ""), labels.get("namespace", "")
    return f"{namespace}/{pod}" if pod and namespace else None


# --- figures over a timeline ------------------------------------------------------------


def p95(values: Sequence[float]) -> float | None:
    """Nearest-rank 95th percentile: the smallest value at least 95 % of values do not exceed."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass
class Timeline:
    """One device's points by time: activity %, memory MiB, and the pod holding it."""

    activity: dict[float, float] = field(default_factory=dict)
    activity_pod: dict[float, str | None] = field(default_factory=dict)
    memory: dict[float, float] = field(default_factory=dict)
    memory_pod: dict[float, str | None] = field(default_factory=dict)
    source: str | None = None
    profile: str | None = None


def device_timelines(series: Iterable[DcgmSeries]) -> dict[DeviceKey, Timeline]:
    """Per device, the activity from the preferred metric (engine active, else GPU util)."""
    by_key: dict[DeviceKey, dict[str, list[DcgmSeries]]] = defaultdict(lambda: defaultdict(list))
    for one in series:
        by_key[device_key(one.labels)][one.metric].append(one)
    timelines: dict[DeviceKey, Timeline] = {}
    for key, metrics in by_key.items():
        timeline = Timeline()
        source = next((m for m in (ENGINE_ACTIVE, GPU_UTIL) if metrics.get(m)), None)
        timeline.source = source
        scale = 100.0 if source == ENGINE_ACTIVE else 1.0
        for one in metrics.get(source or "", []):
            timeline.profile = timeline.profile or one.labels.get("GPU_I_PROFILE") or None
            for time, value in one.samples:
                timeline.activity[time] = value * scale
                timeline.activity_pod[time] = pod_of(one.labels)
        for one in metrics.get(FB_USED, []):
            timeline.profile = timeline.profile or one.labels.get("GPU_I_PROFILE") or None
            for time, value in one.samples:
                timeline.memory[time] = value
                timeline.memory_pod[time] = pod_of(one.labels)
        timelines[key] = timeline
    return timelines


def idle_seconds(
    timeline: Timeline,
    *,
    start: float,
    end: float,
    step: float,
    settings: UtilisationSettings,
) -> tuple[dict[str, float], bool]:
    """Seconds of [start, end) in idle runs per pod holding the GPU, and whether the last
    point is in one.

    A point at ``t`` stands for [t, t + step). A run is consecutive points (no gap over
    ``GAP_STEPS`` steps), all held by the same pod, all below the threshold; it counts
    when it lasts ``idle_for_seconds`` or more, and only its part inside [start, end).
    """
    runs: list[tuple[float, float, str]] = []
    current: tuple[float, str] | None = None  # (run start, pod)
    last: float | None = None
    for time in sorted(timeline.activity):
        pod = timeline.activity_pod[time]
        idle = pod is not None and timeline.activity[time] < settings.idle_below_percent
        if current is not None and last is not None:
            continues = idle and pod == current[1] and time - last <= GAP_STEPS * step
            if not continues:
                runs.append((current[0], last + step, current[1]))
                current = None
        if idle and current is None and pod is not None:
            current = (time, pod)
        last = time
    if current is not None and last is not None:
        runs.append((current[0], last + step, current[1]))
    counted: dict[str, float] = defaultdict(float)
    for run_start, run_end, pod in runs:
        if run_end - run_start >= settings.idle_for_seconds:
            counted[pod] += max(0.0, min(run_end, end) - max(run_start, start))
    idle_now = (
        current is not None
        and bool(runs)
        and runs[-1][1] - runs[-1][0] >= settings.idle_for_seconds
    )
    return dict(counted), idle_now
