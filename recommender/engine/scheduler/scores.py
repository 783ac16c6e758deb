"""Score rules and the policies that combine them (kube-scheduler Score).

A score rule rates one candidate — a node plus the devices the pod would take
there — from 0 (worst) to 100 (best). A policy is a weighted sum of named
rules; the registry lets a policy name a rule without importing it, so FGD,
BestFit or a future rule plug in the same way.

Rules here follow the FGD simulator where the validation compares with it:
BestFit is its ``getBestFitScore`` (cpu and GPU leftovers, half weight each,
normalised by 128 cores / 8 GPUs) and Random picks one feasible node
uniformly (a seeded ``random.Random`` is passed in; never global state).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from topology.model.hardware import WHOLE_GPU_MILLI, Pod

from .records import DeviceTake, NodeAlloc, NodeInfo

MAX_SCORE = 100.0
NO_SCORE = float("-inf")  # a node where the pod does not fit, in score columns and arrays
BESTFIT_MAX_CPU_MILLI = 128_000
BESTFIT_MAX_GPU_MILLI = 8_000


@dataclass
class ScoreContext:
    """Per-placement inputs to scores: randomness, the gang's placed members, FGD's mix."""

    rng: random.Random
    member_paths: list[tuple[str | None, ...]] = field(default_factory=list)
    paths: Mapping[str, tuple[str | None, ...]] = field(default_factory=dict)
    fragmentation: object | None = None  # fgd.FragmentationModel, set by policies using FGD


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node and the devices the pod would take there."""

    info: NodeInfo
    alloc: NodeAlloc
    pod: Pod
    devices: tuple[DeviceTake, ...]
    gpu_milli: int


ScoreRule = Callable[[Candidate, ScoreContext], float]
# (pod, the node's allocation, context) → what a policy's score reads of the pod there
PodInputs = Callable[[Pod, NodeAlloc, ScoreContext], object]
POD_INPUTS: dict[str, PodInputs] = {}


def node_gpu_milli_total(info: NodeInfo) -> int:
    return len(info.gpus) * WHOLE_GPU_MILLI


def node_gpu_milli_free(info: NodeInfo, alloc: NodeAlloc) -> int:
    return sum(max(0, WHOLE_GPU_MILLI - used) for used in alloc.gpu_milli.values())


def most_allocated(candidate: Candidate, ctx: ScoreContext) -> float:
    """kube-scheduler MostAllocated over cpu, memory and GPU: fuller nodes first."""
    info, alloc, pod = candidate.info, candidate.alloc, candidate.pod
    allocatable = info.node.allocatable
    ratios = []
    if allocatable.cpu_milli > 0:
        used = allocatable.cpu_milli - alloc.cpu_free_milli + pod.requests.cpu_milli
        ratios.append(used / allocatable.cpu_milli)
    if allocatable.memory_bytes > 0:
        used = allocatable.memory_bytes - alloc.memory_free_bytes + pod.requests.memory_bytes
        ratios.append(used / allocatable.memory_bytes)
    total_gpu = node_gpu_milli_total(info)
    if total_gpu > 0:
        used_gpu = total_gpu - node_gpu_milli_free(info, alloc) + candidate.gpu_milli
        ratios.extend([used_gpu / total_gpu] * 2)  # GPUs are what this tool is about
    return MAX_SCORE * sum(ratios) / len(ratios) if ratios else 0.0


def best_fit(candidate: Candidate, ctx: ScoreContext) -> float:
    """The FGD simulator's BestFit: least cpu + GPU left over after placing, scaled 0–100."""
    info, alloc, pod = candidate.info, candidate.alloc, candidate.pod
    cpu_left = alloc.cpu_free_milli - pod.requests.cpu_milli
    gpu_left = node_gpu_milli_free(info, alloc) - candidate.gpu_milli
    leftover = 0.5 * cpu_left / BESTFIT_MAX_CPU_MILLI + 0.5 * gpu_left / BESTFIT_MAX_GPU_MILLI
    return float(int((1.0 - leftover) * MAX_SCORE))


def random_score(candidate: Candidate, ctx: ScoreContext) -> float:
    """Uniform among feasible nodes: every node ties, the seeded tie-break picks."""
    return 0.0


def simon_share(candidate: Candidate, ctx: ScoreContext) -> float:
    """The FGD simulator's always-on "Simon" score (weight 1): the pod's largest share of
    the node's allocatable, ``request / (allocatable - request)``, so among otherwise
    equal nodes the smallest one that fits wins and big nodes stay whole for big pods.
    Registered for experiments: as FGD's tie-breaker it lowered our openb result
    (86.4 % vs 90.1 % at 130 %, seed 42; see docs/VALIDATION.md), so no policy uses it."""
    allocatable = candidate.info.node.allocatable
    requests = candidate.pod.requests
    pairs = [
        (requests.cpu_milli, allocatable.cpu_milli),
        (requests.memory_bytes, allocatable.memory_bytes),
    ]
    share = 0.0
    for requested, total in pairs:
        if requested <= 0 or total <= 0:
            continue
        rest = total - requested
        share = max(share, requested / rest if rest > 0 else 1.0)
    return float(round(MAX_SCORE * share))


def topology_closeness(candidate: Candidate, ctx: ScoreContext) -> float:
    """Gang members close together: share as deep a topology level as possible."""
    if not ctx.member_paths:
        return 0.0
    path = _path_of(ctx.paths, candidate.info.node.name)
    depth = len(path)
    if depth == 0:
        return 0.0
    best = max(shared_depth(path, other) for other in ctx.member_paths)
    return MAX_SCORE * best / depth


def _path_of(paths: Mapping[str, tuple[str | None, ...]], name: str) -> tuple[str | None, ...]:
    """The node's topology path; indexing (not ``get``) lets a lazy cache compute it,
    so closeness never depends on which nodes happened to be looked at before."""
    try:
        return paths[name]
    except KeyError:
        return ()


def shared_depth(path: tuple[str | None, ...], other: tuple[str | None, ...]) -> int:
    shared = 0
    for mine, theirs in zip(path, other, strict=False):
        if mine is None or mine != theirs:
            break
        shared += 1
    return shared


def share_tightness(candidate: Candidate, ctx: ScoreContext) -> float:
    """Within a node, put a share on the fullest GPU that still fits (simulator's best-fit GPU)."""
    if candidate.gpu_milli >= WHOLE_GPU_MILLI or not candidate.devices:
        return 0.0
    free = 0
    for take in candidate.devices:
        free += candidate.alloc.device_milli_free(candidate.info.devices[take.device])
    return MAX_SCORE * (1.0 - free / WHOLE_GPU_MILLI)


SCORE_RULES: dict[str, ScoreRule] = {
    "most_allocated": most_allocated,
    "best_fit": best_fit,
    "random": random_score,
    "topology": topology_closeness,
    "share_tightness": share_tightness,
    "simon_share": simon_share,
}


def register(name: str, rule: ScoreRule) -> None:
    SCORE_RULES[name] = rule


@dataclass(frozen=True, slots=True)
class Policy:
    """A weighted sum of node score rules, how node ties are broken ("first" or
    "random"), and the rule that picks devices inside the chosen node (None:
    the policy's own score rates each device choice, as FGD does)."""

    name: str
    weights: tuple[tuple[str, float], ...]
    tie_break: str = "first"
    device_rule: str | None = "share_tightness"
    # TaintToleration's Score plugin weight (kube-scheduler's profiles; ``taint_score``)
    taint_toleration_weight: float = 0.0
    # NodeAffinity, InterPodAffinity, PodTopologySpread preferred scores (``preferred_score``)
    preferred_scores: bool = False
    # a ``POD_INPUTS`` entry: all the score reads of a pod besides its GPU request, on a
    # node (None: the whole pod shape); pods alike there share their scores per node key
    pod_inputs: str | None = None

    @property
    def constant(self) -> bool:
        """True when every feasible node scores alike ("random" alone), so only the
        tie-break picks (cluster-autoscaler's first fit, ``pick.NodePicker``)."""
        return self.tie_break == "round-robin" and all(n == "random" for n, _ in self.weights)

    @property
    def needs_fragmentation(self) -> bool:
        return any(name == "fgd" for name, _ in self.weights)

    def score(self, candidate: Candidate, ctx: ScoreContext) -> float:
        return sum(weight * SCORE_RULES[name](candidate, ctx) for name, weight in self.weights)


POLICIES: dict[str, Policy] = {
    "most_allocated": Policy(
        "most_allocated",
        (("most_allocated", 1.0), ("topology", 1.0)),
    ),
    "bestfit": Policy("bestfit", (("best_fit", 1.0), ("topology", 1.0)), "random"),
    "random": Policy("random", (("random", 1.0),), "random"),
    # cluster-autoscaler's simulation (``pick.NodePicker._pick_among``)
    "first-fit": Policy("first-fit", (("random", 1.0),), "round-robin"),
}
# what an unconfigured kube-scheduler runs (see profiles.py); FGD, best on openb
# (95.4 vs bestfit 93.2 % at 130 %, docs/VALIDATION.md), is the "fgd" profile
DEFAULT_POLICY = "kube-default"


def policy_named(name: str) -> Policy:
    if name == "default":
        name = DEFAULT_POLICY
    if name not in POLICIES:
        raise ValueError(f"unknown placement policy {name!r}; known: {sorted(POLICIES)}")
    return POLICIES[name]
