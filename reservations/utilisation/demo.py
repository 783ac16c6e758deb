"""Demo DCGM series for a cluster without Prometheus: what ``load_demo`` measures.

Not measured data: each GPU-holding pod of the model gets series shaped as
dcgm-exporter writes them (``Hostname``, ``gpu``, ``UUID``, ``pod``, ``namespace``,
``container``; ``DCGM_FI_DEV_GPU_UTIL`` in %, ``DCGM_FI_DEV_FB_USED`` in MiB), with a
level chosen from the pod's name: about one pod in six sits below 2 % (a notebook
left open), the others run between 35 % and 95 %. The stored report is marked
``demo`` and every page that shows it says "demo data".

Pods get whole GPUs of their node in name order; a pod holding a fraction of a GPU
shares the GPU of the pod before it, and a pod that finds no GPU left gets no series
(its utilisation is then unknown, as with a real exporter that misses it).

Pure: no Django, no I/O, no clock; deterministic for a given model and window.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import datetime

from reservations.utilisation.dcgm import FB_USED, GPU_UTIL, DcgmSeries
from topology.model.hardware import Cluster, Node, Pod

IDLE_ONE_IN = 6
MIB_PER_GIB = 1024


def _level(pod: Pod) -> float:
    """Mean activity % of a pod, from a digest of its name (stable across runs)."""
    digest = int(hashlib.sha256(f"{pod.namespace}/{pod.name}".encode()).hexdigest()[:8], 16)
    if digest % IDLE_ONE_IN == 0:
        return float(digest % 3) / 2  # 0, 0.5 or 1 %
    return 35.0 + digest % 61


def _holders(node: Node, pods: list[Pod]) -> list[tuple[str, Pod]]:
    """(GPU index, pod) for each GPU a pod holds on this node."""
    indices = [gpu.name.removeprefix("gpu-") for gpu in node.gpus]
    held: list[tuple[str, Pod]] = []
    free = 0
    for pod in sorted(pods, key=lambda p: p.name):
        if pod.gpu is None:
            continue
        whole = max(1, pod.gpu.count * pod.gpu.milli_per_gpu // 1000)
        if free + whole > len(indices):
            continue
        for index in indices[free : free + whole]:
            held.append((index, pod))
        free += whole
    return held


def demo_series(
    cluster: Cluster, *, start: datetime, end: datetime, step_seconds: float
) -> list[DcgmSeries]:
    """Activity and memory series of every GPU a pod holds, over [start, end) at the step."""
    by_node: dict[str, list[Pod]] = defaultdict(list)
    for pod in cluster.pods:
        if pod.node_name is not None and pod.gpu is not None:
            by_node[pod.node_name].append(pod)
    count = int((end - start).total_seconds() // step_seconds)
    times = [start.timestamp() + i * step_seconds for i in range(count)]
    series: list[DcgmSeries] = []
    for node in cluster.nodes:
        for index, pod in _holders(node, by_node.get(node.name, [])):
            labels = {
                "gpu": index,
                "UUID": f"GPU-demo-{node.name}-{index}",
                "device": f"nvidia{index}",
                "modelName": node.gpus[0].model or "",
                "Hostname": node.name,
                "container": "main",
                "namespace": pod.namespace,
                "pod": pod.name,
            }
            level = _level(pod)
            wobble = [(i * 7 % 5) - 2 for i in range(count)] if level >= 5 else [0] * count
            activity = tuple((t, max(0.0, level + w)) for t, w in zip(times, wobble, strict=True))
            memory_mib = (2 + level / 10) * MIB_PER_GIB
            series.append(DcgmSeries(GPU_UTIL, labels, activity))
            series.append(DcgmSeries(FB_USED, labels, tuple((t, memory_mib) for t in times)))
    return series
