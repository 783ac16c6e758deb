"""Pods too new for cluster-autoscaler to scale up for (``core/static_autoscaler.go``
``filterOutYoungPods``).

After filter-out-schedulable, a pending pod is left out of the scale-up while its age
(now - creationTimestamp) is not more than its delay: ``--new-pod-scale-up-delay``
(default 0s, ``config/flags/flags.go``), raised for one pod by its annotation
``cluster-autoscaler.kubernetes.io/pod-scale-up-delay`` (a Go duration). An annotation
below the flag's value, or one that does not parse, is ignored (upstream logs an error
and keeps the flag's delay). A pod whose creation time is unknown is taken as old.

Pure: no Django, no I/O, no clock (``at`` is given).
"""

from __future__ import annotations

import re
from datetime import datetime

from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.ledger import NaiveLedger
from recommender.engine.scheduler.workloads import Workload
from topology.model.hardware import Pod

SCALE_UP_DELAY_ANNOTATION = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_WHOLE = re.compile(r"[-+]?(?:0|(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)")


def go_duration_seconds(text: str) -> float | None:
    """Go ``time.ParseDuration`` in seconds; None when it does not parse."""
    if not _WHOLE.fullmatch(text):
        return None
    sign = -1.0 if text.startswith("-") else 1.0
    return sign * sum(float(n) * _UNIT_SECONDS[u] for n, u in _PART.findall(text))


def scale_up_delay(pod: Pod, settings: CaSettings) -> float:
    """The pod's delay in seconds: the flag's, or its annotation's when that parses and
    is not below the flag's."""
    delay = settings.new_pod_scale_up_delay_seconds
    given = go_duration_seconds(pod.scale_up_delay) if pod.scale_up_delay else None
    return given if given is not None and given >= delay else delay


def too_young(pod: Pod, settings: CaSettings, at: datetime) -> str | None:
    """Why cluster-autoscaler does not scale up for the pod yet (None: it does)."""
    if pod.arrival <= 0:
        return None
    delay = scale_up_delay(pod, settings)
    age = at.timestamp() - pod.arrival
    if age > delay:
        return None
    return (
        f"{pod.key} is {age:g}s old, not more than its scale-up delay of {delay:g}s "
        f"(--new-pod-scale-up-delay, annotation {SCALE_UP_DELAY_ANNOTATION}): "
        "cluster-autoscaler does not scale up for it yet"
    )


def young_pods_out(
    ledger: NaiveLedger,
    left: list[tuple[Workload, Pod]],
    settings: CaSettings,
    at: datetime,
) -> list[tuple[Workload, Pod]]:
    """``left`` without the pods too young to scale up for, each said on its workload."""
    kept = []
    for workload, pod in left:
        why = too_young(pod, settings, at)
        if why is None:
            kept.append((workload, pod))
            continue
        ledger.needs_new[workload.key] = True
        ledger.reasons.setdefault(workload.key, []).append(why)
    return kept
