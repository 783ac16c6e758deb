"""Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation", ATC 2023).

A node's GPU fragmentation, measured against the workload mix expected to
arrive ("typical pods", each with its frequency), is the idle GPU milli that
the typical pod could not use there: all of it when the pod does not fit the
node at all (wrong model, too few GPUs, cpu short), else the idle milli on the
GPUs too small for it. FGD places a pod where that expected fragmentation
grows least. This follows the FGD simulator
(hkust-adsl/kubernetes-scheduler-simulator: ``NodeGpuShareFragAmountScore``,
``FGDScorePlugin``): the score is ``int(sigmoid((before − after) / 1000) × 100)``
— the integer truncation makes many nodes tie.

Ties go to the first tied node in cluster order, not to a random one. The
simulator runs a patched kube-scheduler whose ``selectHost`` keeps the
lexicographically smallest node name among equal scores "for reproducibility"
(its stock reservoir sampling is commented out); the node names carry a seeded
random-permutation prefix, so within a run every node has one fixed rank. That
matters for cpu-only pods: they score 50 on every node whose typical-pod
verdicts they leave alone, and a random pick spreads them over the GPU nodes,
using up cores that GPU pods need later (−5 points on openb_pod_list_default);
a fixed rank packs them onto the same few nodes until those stop being neutral.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from topology.model.hardware import WHOLE_GPU_MILLI, Pod

from .records import NodeAlloc, NodeInfo
from .scores import POD_INPUTS, POLICIES, Candidate, Policy, ScoreContext, register

POPULARITY_THRESHOLD = 0.95  # simulator default: the most frequent types covering 95 % of pods


@dataclass(frozen=True, slots=True)
class TypicalPod:
    cpu_milli: int
    gpu_milli: int  # per GPU; 0 for cpu-only pods
    gpu_count: int
    models: tuple[str, ...]
    frequency: float


def pod_type(pod: Pod) -> tuple[int, int, int, tuple[str, ...]]:
    gpu = pod.gpu
    if gpu is None or gpu.count == 0:
        return (pod.requests.cpu_milli, 0, 0, ())
    return (pod.requests.cpu_milli, gpu.milli_per_gpu, gpu.count, tuple(sorted(gpu.models)))


def typical_pods(
    pods: Iterable[Pod], threshold: float = POPULARITY_THRESHOLD
) -> tuple[TypicalPod, ...]:
    """The most frequent pod types covering ``threshold`` of pods, renormalised to sum 1."""
    counts = Counter(pod_type(p) for p in pods)
    total = sum(counts.values())
    if total == 0:
        return ()
    # the simulator's order: most frequent first, equal counts by larger (cpu, milli, count, type)
    ordered = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    kept: list[tuple[tuple[int, int, int, tuple[str, ...]], int]] = []
    covered = 0
    for key, count in ordered:
        if covered >= threshold * total:
            break
        kept.append((key, count))
        covered += count
    return tuple(
        TypicalPod(cpu, milli, number, models, count / covered)
        for (cpu, milli, number, models), count in kept
    )


class FragmentationModel:
    """Expected fragmentation of a node state against the typical pods, memoised.

    The typical pods are kept as arrays (numpy), so a node state's fragmentation is a
    few array operations over hundreds of typical pods instead of a Python loop."""

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = tuple(typical)
        self._cpu_thresholds = sorted({t.cpu_milli for t in self.typical})
        self._cache: dict[tuple[object, ...], float] = {}
        self._millis = sorted({t.gpu_milli for t in self.typical if t.gpu_milli})
        index = {milli: i for i, milli in enumerate(self._millis)}
        self._milli_index = np.array([index.get(t.gpu_milli, 0) for t in self.typical], np.int64)
        self._milli = np.array(self._millis, np.int64)
        self._count = np.array([t.gpu_count for t in self.typical], np.int64)
        self._cpu = np.array([t.cpu_milli for t in self.typical], np.int64)
        self._frequency = np.array([t.frequency for t in self.typical], np.float64)
        self._takes: dict[str | None, NDArray[np.bool_]] = {}  # per node model

    @property
    def cpu_thresholds(self) -> list[int]:
        """The typical pods' distinct cpu requests, ascending (do not mutate)."""
        return self._cpu_thresholds

    def cpu_bucket(self, cpu_left_milli: int) -> int:
        """How many typical cpu requests fit: all frag needs to know about the cpu left."""
        return bisect_right(self._cpu_thresholds, cpu_left_milli)

    def node_frag(self, model: str | None, cpu_left_milli: int, lefts: tuple[int, ...]) -> float:
        key = (model, self.cpu_bucket(cpu_left_milli), tuple(sorted(lefts)))
        cached = self._cache.get(key)
        if cached is None:
            cached = self._compute(model, cpu_left_milli, lefts)
            self._cache[key] = cached
        return cached

    def frag_in_bucket(self, model: str | None, bucket: int, lefts: tuple[int, ...]) -> float:
        """``node_frag`` for any cpu left in ``bucket``: the same kept value (the key
        holds the bucket, and ``_compute`` reads the cpu only through it)."""
        key = (model, bucket, tuple(sorted(lefts)))
        cached = self._cache.get(key)
        if cached is None:
            thresholds = self._cpu_thresholds
            # a cpu left with exactly ``bucket`` typical requests fitting
            cpu_left = (
                thresholds[bucket - 1] if bucket else (thresholds[0] - 1 if thresholds else 0)
            )
            cached = self._cache[key] = self._compute(model, cpu_left, lefts)
        return cached

    def _takes_model(self, model: str | None) -> NDArray[np.bool_]:
        """Which typical pods ask for GPUs a node of ``model`` can give (any model, or
        theirs); the others find all of its idle milli a fragment."""
        takes = self._takes.get(model)
        if takes is None:
            takes = self._takes[model] = np.array(
                [bool(t.gpu_milli) and (not t.models or model in t.models) for t in self.typical],
                np.bool_,
            )
        return takes

    def _compute(self, model: str | None, cpu_left_milli: int, lefts: tuple[int, ...]) -> float:
        """Each typical pod's fragment, weighted by its frequency and summed in their
        order: the idle milli when it does not fit (cpu-only pods too, as the simulator
        counts them; a model it does not take; too few GPUs with its share left; cpu
        short), else the milli left on GPUs too small for its share. The sum is
        sequential, as the simulator's loop adds (``np.add.accumulate``, not numpy's
        pairwise ``sum``): every float is the loop's to the bit."""
        if not self.typical:
            return 0.0
        idle = sum(lefts)
        left = np.array(lefts, np.int64)
        if len(self._millis) and len(left):
            wide = left[None, :] >= self._milli[:, None]  # per share size × GPU
            enough = wide.sum(axis=1)[self._milli_index]
            small = np.where(wide, 0, left[None, :]).sum(axis=1)[self._milli_index]
        else:
            enough = np.zeros(len(self.typical), np.int64)
            small = np.zeros(len(self.typical), np.int64)
        fits = self._takes_model(model) & (enough >= self._count) & (self._cpu <= cpu_left_milli)
        values = np.where(fits, small, idle)
        return float(np.add.accumulate(self._frequency * values)[-1])


def _lefts(candidate: Candidate) -> tuple[int, ...]:
    alloc = candidate.alloc
    return tuple(alloc.device_milli_free(d) for d in candidate.info.gpu_devices)


def _model(candidate: Candidate) -> str | None:
    models = candidate.info.models
    return next(iter(models)) if len(models) == 1 else None


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True, slots=True)
class Choices:
    """What FGD rates of a node's device choices for one pod, but the pod's cpu: the
    node's single GPU model, its fragmentation now, and the GPUs' milli left after each
    choice (in device order). Kept per (node inputs, GPU request), the score for any
    cpu request is then ``score_in_bucket`` (``pick`` keeps them so)."""

    node_model: str | None
    before: float
    afters: tuple[tuple[int, ...], ...]


def choices(candidates: Sequence[Candidate], model: FragmentationModel) -> Choices:
    """``Choices`` of a node's candidates (one node, one pod: the same lefts and cpu)."""
    first = candidates[0]
    lefts = _lefts(first)
    devices = first.info.gpu_devices
    afters = []
    for candidate in candidates:
        taken = {t.device: t.capacity.get("gpu_milli", WHOLE_GPU_MILLI) for t in candidate.devices}
        afters.append(
            tuple(left - taken.get(d.name, 0) for left, d in zip(lefts, devices, strict=True))
        )
    node_model = _model(first)
    before = model.node_frag(node_model, first.alloc.cpu_free_milli, lefts)
    return Choices(node_model, before, tuple(afters))


def score_in_bucket(model: FragmentationModel, found: Choices, bucket: int) -> float:
    """FGD's score of the best choice when the pod leaves the node's cpu in ``bucket``
    (``FragmentationModel.cpu_bucket``): ``int(sigmoid((before − after) / 1000) × 100)``,
    the highest over the choices."""
    return max(
        float(
            int(
                _sigmoid(
                    (found.before - model.frag_in_bucket(found.node_model, bucket, after)) / 1000
                )
                * 100
            )
        )
        for after in found.afters
    )


def fgd_score(candidate: Candidate, ctx: ScoreContext) -> float:
    model = ctx.fragmentation
    if not isinstance(model, FragmentationModel):
        return 0.0
    bucket = model.cpu_bucket(candidate.alloc.cpu_free_milli - candidate.pod.requests.cpu_milli)
    return score_in_bucket(model, choices([candidate], model), bucket)


def fgd_pod_inputs(pod: Pod, alloc: NodeAlloc, ctx: ScoreContext) -> object:
    """What ``fgd_score`` reads of a pod besides its GPU request (and with it the device
    options): the cpu left on the node after it, as ``FragmentationModel.node_frag``
    sees it (the bucket of typical cpu requests that still fit)."""
    model = ctx.fragmentation
    if not isinstance(model, FragmentationModel):
        return None
    return model.cpu_bucket(alloc.cpu_free_milli - pod.requests.cpu_milli)


def fgd_node_inputs(
    info: NodeInfo, alloc: NodeAlloc, ctx: ScoreContext, devices: list[tuple[object, ...]]
) -> object:
    """What ``fgd_score`` (and the device options it rates) reads of a node: its single
    GPU model, the bucket of typical cpu requests fitting its free cpu, and each GPU
    device's state as ``gpu_options`` reads it (``devices``: ``gpu_device_state``), in
    device order (the options, and the GPUs left after each, are then the same
    position for position)."""
    model = ctx.fragmentation
    if not isinstance(model, FragmentationModel):
        return None
    models = info.models
    single = next(iter(models)) if len(models) == 1 else None
    return (single, model.cpu_bucket(alloc.cpu_free_milli), tuple(devices))


register("fgd", fgd_score)
POD_INPUTS["fgd"] = fgd_pod_inputs
# Gang closeness as in bestfit: zero for lone pods (all of the openb validation), so
# FGD's decisions there are the simulator's; gang members still land close together.
POLICIES["fgd"] = Policy(
    "fgd", (("fgd", 1.0), ("topology", 1.0)), "first", device_rule=None, pod_inputs="fgd"
)
