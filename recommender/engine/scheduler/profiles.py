"""Scoring profiles that match real schedulers: ``kube-default``, ``most-allocated``, ``fgd``.

A profile is a ``scores.Policy``: the weighted sum kube-scheduler's framework
computes over its Score plugins (``runScorePlugins``: each plugin's 0–100
score, normalised where the plugin has NormalizeScore, times the plugin's
weight), and how ties are broken.

``kube-default`` is what an unconfigured kube-scheduler runs. Upstream
(kubernetes/kubernetes) ``pkg/scheduler/apis/config/v1/default_plugins.go``
``getDefaultPlugins`` enables these Score plugins, with weights:

==================================  ======  ==========================================
plugin                              weight  here
==================================  ======  ==========================================
TaintToleration                     3       ``taint_score`` (PreferNoSchedule)
NodeAffinity (preferred terms)      2       ``preferred_score.node_affinity``
NodeResourcesFit (LeastAllocated)   1       ``least_allocated``
PodTopologySpread (ScheduleAnyway)  2       ``preferred_score.topology_spread``
InterPodAffinity (preferred terms)  2       ``preferred_score.inter_pod_affinity``
NodeResourcesBalancedAllocation     1       ``balanced_allocation``
ImageLocality                       1       not modelled (no image sizes in a snapshot)
==================================  ======  ==========================================

NodeResourcesFit's default scoring strategy (``pkg/scheduler/apis/config/v1/
defaults.go``, ``defaultResourceSpec``) is LeastAllocated over cpu and memory,
weight 1 each; BalancedAllocation's default resources are the same two.
Extended resources (``nvidia.com/gpu``) are not scored by default. Neither
plugin has a NormalizeScore: their 0–100 values are summed as they are.
Equal totals are broken by ``selectHost``'s reservoir sampling, a uniform
pick among the best (here a seeded ``random.Random``: tie_break "random").

``most-allocated`` is the bin packing GPU clusters commonly configure: the
KubeSchedulerConfiguration ``NodeResourcesFitArgs.scoringStrategy`` with
``type: MostAllocated`` and resources cpu 1, memory 1, ``nvidia.com/gpu`` 3
(the shape of the upstream "Resource Bin Packing" documentation example),
every other default plugin unchanged (BalancedAllocation still weight 1).

Gang closeness (``topology``) stays the last term of each profile, as in the
other policies: zero for lone pods, it keeps a gang's members together as
Kueue's topology-aware scheduling assigns them, which kube-scheduler alone
does not do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from topology.model.hardware import Pod, Resources

from .scores import (
    DEFAULT_POLICY,
    MAX_SCORE,
    POLICIES,
    Candidate,
    Policy,
    ScoreContext,
    node_gpu_milli_free,
    node_gpu_milli_total,
    register,
)

KUBE_DEFAULT = "kube-default"
MOST_ALLOCATED = "most-allocated"
FGD = "fgd"
PROFILES = (KUBE_DEFAULT, MOST_ALLOCATED, FGD)

# pkg/scheduler/util/pod_resources.go: what a container without a request counts
# as, for NodeResourcesFit's scoring only (GetNonzeroRequestForResource)
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
MAX_NODE_SCORE = int(MAX_SCORE)
TAINT_TOLERATION_WEIGHT = 3.0  # default_plugins.go

# (allocatable, requested after placing the pod, weight) per scored resource
Usage = tuple[int, int, int]
ResourceScore = Callable[[int, int], int]  # (requested, capacity) → 0..100


def _fit_usage(candidate: Candidate, gpu_weight: int) -> list[Usage]:
    """NodeResourcesFit's inputs (``resource_allocation.go``,
    ``calculateResourceAllocatableRequest`` with ``useRequested`` false): the pod's
    request made non-zero for cpu and memory; an extended resource the pod does not
    request is skipped (``podRequest == 0 && IsScalarResourceName``)."""
    requests = candidate.pod.requests
    cpu = requests.cpu_milli or DEFAULT_MILLI_CPU_REQUEST
    memory = requests.memory_bytes or DEFAULT_MEMORY_REQUEST
    usage = _cpu_memory(candidate, cpu, memory, nonzero=True)
    if gpu_weight and candidate.gpu_milli > 0:
        total = node_gpu_milli_total(candidate.info)
        used = total - node_gpu_milli_free(candidate.info, candidate.alloc)
        usage.append((total, used + candidate.gpu_milli, gpu_weight))
    return usage


def _cpu_memory(candidate: Candidate, cpu: int, memory: int, nonzero: bool) -> list[Usage]:
    """cpu and memory, weight 1 each, the node's requested sum plus the pod's.
    ``nonzero``: the node's sum as NodeInfo.NonZeroRequested keeps it, each placed
    pod without a cpu (memory) request counted as 100m (200 MiB); else
    NodeInfo.Requested. Upstream applies the default per container; a pod's
    requests here are summed over its containers, so it applies per pod."""
    allocatable: Resources = candidate.info.node.allocatable
    alloc = candidate.alloc
    cpu_used = allocatable.cpu_milli - alloc.cpu_free_milli
    memory_used = allocatable.memory_bytes - alloc.memory_free_bytes
    if nonzero:
        zero_cpu, zero_memory = zero_request_counts(alloc.placed)
        cpu_used += zero_cpu * DEFAULT_MILLI_CPU_REQUEST
        memory_used += zero_memory * DEFAULT_MEMORY_REQUEST
    return [
        (allocatable.cpu_milli, cpu_used + cpu, 1),
        (allocatable.memory_bytes, memory_used + memory, 1),
    ]


def zero_request_counts(placed: Iterable[Pod]) -> tuple[int, int]:
    """How many of the pods request no cpu, and how many no memory (the node memo
    key holds these, so nodes differing only there never share a score)."""
    zero_cpu = zero_memory = 0
    for pod in placed:
        zero_cpu += pod.requests.cpu_milli == 0
        zero_memory += pod.requests.memory_bytes == 0
    return zero_cpu, zero_memory


def _weighted(usage: list[Usage], per_resource: ResourceScore) -> float:
    """``leastResourceScorer`` / ``mostResourceScorer``: integer weighted mean over
    resources the node has (allocatable 0 is skipped), 0 when none."""
    total = weights = 0
    for allocatable, requested, weight in usage:
        if allocatable == 0:
            continue
        total += per_resource(requested, allocatable) * weight
        weights += weight
    return float(total // weights) if weights else 0.0


def _least_requested(requested: int, capacity: int) -> int:
    """``least_allocated.go`` ``leastRequestedScore``."""
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity


def _most_requested(requested: int, capacity: int) -> int:
    """``most_allocated.go`` ``mostRequestedScore``: over-commit counts as full."""
    if capacity == 0:
        return 0
    return (min(requested, capacity) * MAX_NODE_SCORE) // capacity


def least_allocated(candidate: Candidate, ctx: ScoreContext) -> float:
    """NodeResourcesFit, LeastAllocated over cpu and memory (the default): emptier first."""
    return _weighted(_fit_usage(candidate, gpu_weight=0), _least_requested)


def most_allocated_gpu(candidate: Candidate, ctx: ScoreContext) -> float:
    """NodeResourcesFit, MostAllocated over cpu 1, memory 1, nvidia.com/gpu 3: fuller first."""
    return _weighted(_fit_usage(candidate, gpu_weight=3), _most_requested)


def _fractions(candidate: Candidate, with_pod: bool) -> list[float]:
    """BalancedAllocation's cpu and memory fractions of the node (``useRequested``:
    NodeInfo.Requested, not made non-zero), each capped at 1, a resource the node has
    none of left out: with the pod's own requests added (``with_pod``) or without."""
    requests = candidate.pod.requests
    cpu, memory = (requests.cpu_milli, requests.memory_bytes) if with_pod else (0, 0)
    return [
        min(1.0, requested / allocatable)
        for allocatable, requested, _ in _cpu_memory(candidate, cpu, memory, nonzero=False)
        if allocatable
    ]


def _balance(fractions: list[float]) -> int:
    """``int64((1 - std) * MaxNodeScore)``: std of two fractions is half their
    difference, of more the population standard deviation, of fewer 0."""
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_allocation(candidate: Candidate, ctx: ScoreContext) -> float:
    """NodeResourcesBalancedAllocation up to kube-scheduler 1.35 (``balanced_allocation.go``,
    ``balancedResourceScorer(requested, allocable)``): ``int((1 - std) * 100)`` of the
    cpu and memory fractions after placing the pod. A pod requesting neither is skipped
    by PreScore (best-effort, ``isBestEffortPod``): 0 everywhere."""
    requests = candidate.pod.requests
    if requests.cpu_milli == 0 and requests.memory_bytes == 0:
        return 0.0
    return float(_balance(_fractions(candidate, with_pod=True)))


def balanced_allocation_1_36(candidate: Candidate, ctx: ScoreContext) -> float:
    """NodeResourcesBalancedAllocation from kube-scheduler 1.36 (kubernetes/kubernetes
    #135573, no feature gate; ``balanced_allocation.go``, ``balancedResourceScorer(
    requested, allocated, allocatable)``): how much the pod improves the node's balance,
    ``MaxNodeScore/2 + (MaxNodeScore/2 + withPod - withoutPod) / 2`` in int64, each term
    ``int64((1 - std) * MaxNodeScore)`` (50..100): 75 when the balance does not change,
    50 from perfectly balanced to perfectly imbalanced, 100 the other way. Best-effort
    pods are skipped by PreScore as before: 0 everywhere."""
    requests = candidate.pod.requests
    if requests.cpu_milli == 0 and requests.memory_bytes == 0:
        return 0.0
    with_pod = _balance(_fractions(candidate, with_pod=True))
    without_pod = _balance(_fractions(candidate, with_pod=False))
    half = MAX_NODE_SCORE // 2
    return float(half + (half + with_pod - without_pod) // 2)  # never negative: // is Go's /


register("least_allocated", least_allocated)
register("most_allocated_gpu", most_allocated_gpu)
register("balanced_allocation", balanced_allocation)
register("balanced_allocation_1_36", balanced_allocation_1_36)

# kube-scheduler releases whose scoring differs (only NodeResourcesBalancedAllocation so
# far): a profile named without a version is the default one's
SCHEDULER_VERSIONS = ("1.35", "1.36")
DEFAULT_SCHEDULER_VERSION = "1.35"
_BALANCED = {"1.35": "balanced_allocation", "1.36": "balanced_allocation_1_36"}
_FIT = {KUBE_DEFAULT: "least_allocated", MOST_ALLOCATED: "most_allocated_gpu"}


def _resource_profile(name: str, fit: str, version: str) -> Policy:
    return Policy(
        name,
        ((fit, 1.0), (_BALANCED[version], 1.0), ("topology", 1.0)),
        "random",
        taint_toleration_weight=TAINT_TOLERATION_WEIGHT,
        preferred_scores=True,
    )


for _profile, _fit in _FIT.items():
    POLICIES[_profile] = _resource_profile(_profile, _fit, DEFAULT_SCHEDULER_VERSION)
    for _version in SCHEDULER_VERSIONS:
        POLICIES[f"{_profile}:{_version}"] = _resource_profile(
            f"{_profile}:{_version}", _fit, _version
        )


def scheduler_version(text: str) -> str:
    """The modelled release a kube-scheduler version string runs as (``v1.36.2`` →
    ``1.36``): releases before the first modelled one score as it does (the 1.35
    BalancedAllocation formula is older than 1.35), later ones as the newest modelled.
    ValueError on a string that is no ``[v]MAJOR.MINOR[...]`` version."""
    major, _, rest = text.strip().removeprefix("v").partition(".")
    minor = "".join(c for c in rest.partition(".")[0] if c.isdigit())
    if not major.isdigit() or not minor:
        raise ValueError(f"not a Kubernetes version: {text!r}")
    release = (int(major), int(minor))
    known = [v for v in SCHEDULER_VERSIONS if _release(v) <= release]
    return known[-1] if known else SCHEDULER_VERSIONS[0]


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


SET = "set"
DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class SchedulerRelease:
    """The kube-scheduler release a profile scores as, and where it came from: ``set``
    (the profile names it), ``read from nodes (newest kubelet v1.36.2)``, or
    ``default`` (``DEFAULT_SCHEDULER_VERSION``: nothing set, no node says)."""

    version: str
    source: str

    def to_json(self) -> dict[str, str]:
        return {"version": self.version, "source": self.source}

    def describe(self) -> str:
        return f"kube-scheduler {self.version} ({self.source})"


def scheduler_release(
    profile: str, kubelet_versions: Iterable[str]
) -> tuple[str, SchedulerRelease | None]:
    """The profile as the cluster's kube-scheduler scores, and its release (None: the
    profile has no NodeResourcesBalancedAllocation term, ``fgd``). A release the
    profile names is kept (``set``); else the newest kubelet's minor, since by the
    version skew policy (kubernetes.io "Version Skew Policy") no kubelet is newer than
    kube-apiserver, and kube-scheduler runs at kube-apiserver's minor; else
    ``DEFAULT_SCHEDULER_VERSION``. Kubelet versions that do not parse are passed over."""
    base, _, version = profile.partition(":")
    base = DEFAULT_POLICY if base == "default" else base
    if base not in _FIT:
        return profile, None
    if version:
        return profile, SchedulerRelease(version, SET)
    newest = _newest(kubelet_versions)
    if newest is None:  # the unversioned name scores as the default release
        return profile, SchedulerRelease(DEFAULT_SCHEDULER_VERSION, DEFAULT)
    release = scheduler_version(newest)
    source = f"read from nodes (newest kubelet {newest})"
    return f"{base}:{release}", SchedulerRelease(release, source)


def _newest(versions: Iterable[str]) -> str | None:
    """The newest of the kubelet version strings (by major, minor, patch), as written."""
    found = []
    for text in set(versions):
        try:
            scheduler_version(text)
        except ValueError:
            continue
        numbers = text.strip().removeprefix("v").split(".")[:3]
        key = tuple(int(m.group()) if (m := re.match(r"\d+", n)) else 0 for n in numbers)
        found.append((key, text.strip()))
    return max(found)[1] if found else None


def versioned(profile: str, version: str) -> str:
    """The profile as the given kube-scheduler release scores (``kube-default:1.36``);
    a profile no release changes (``fgd``) stays as it is."""
    base = profile.partition(":")[0]
    return f"{base}:{scheduler_version(version)}" if base in _FIT else profile


def profile_named(name: str) -> str:
    """The profile's name when it is one of ``PROFILES``, or ``kube-default`` /
    ``most-allocated`` with a modelled release (``kube-default:1.36``); else
    ValueError naming them."""
    base, _, version = name.partition(":")
    if name in PROFILES or (base in _FIT and version in SCHEDULER_VERSIONS):
        return name
    versions = ", ".join(f"{p}:{v}" for p in _FIT for v in SCHEDULER_VERSIONS)
    raise ValueError(
        f"unknown scheduler profile {name!r}; valid: {', '.join(PROFILES)}, {versions}"
    )
