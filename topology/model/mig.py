"""NVIDIA MIG profile tables and the counter model that decides what coexists.

Pure. From the NVIDIA Multi-Instance GPU user guide ("Supported MIG
Profiles"): an A100 or H100 has 8 memory slices and 7 compute slices. A GPU
instance profile takes ``compute`` compute slices and ``memory_slices``
contiguous memory slices starting at one of its allowed ``starts``
(``nvidia-smi mig -lgipp`` prints these as ``{0,2,4}:2``)::

    memory slice   0   1   2   3   4   5   6   7
    7g.40gb        [=============================]   start 0
    4g.20gb        [=============]                   start 0
    3g.20gb        [=============] [=============]   starts 0, 4
    2g.10gb        [=====] [=====] [=====]           starts 0, 2, 4
    1g.10gb        [=====] [=====] [=====] [=====]   starts 0, 2, 4, 6
    1g.5gb         [=] [=] [=] [=] [=] [=] [=]       starts 0 … 6

The same geometry holds for A100-80GB and H100-80GB with doubled memory
(1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb). In the DRA
partitionable-devices shape (KEP-4815) each placement is one Device that
consumes ``memory-slice-<i>`` counters and ``compute`` from the GPU's
CounterSet; a mix is valid exactly when some choice of placements keeps every
counter non-negative. Media-extension (``+me``) profiles are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from topology.model.hardware import (
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    CounterConsumption,
    CounterSet,
    Device,
)

MEMORY_SLICES = 8
COMPUTE_SLICES = 7
COMPUTE_COUNTER = "compute"
GIB = 2**30


@dataclass(frozen=True, slots=True)
class MigProfile:
    name: str
    compute: int  # compute slices (of 7)
    memory_slices: int  # contiguous memory slices (of 8)
    starts: tuple[int, ...]  # allowed first memory slice

    def slices(self, start: int) -> range:
        return range(start, start + self.memory_slices)


def _geometry(small: str, small_double: str, two: str, three: str, four: str, seven: str):  # type: ignore[no-untyped-def]
    return (
        MigProfile(small, 1, 1, (0, 1, 2, 3, 4, 5, 6)),
        MigProfile(small_double, 1, 2, (0, 2, 4, 6)),
        MigProfile(two, 2, 2, (0, 2, 4)),
        MigProfile(three, 3, 4, (0, 4)),
        MigProfile(four, 4, 4, (0,)),
        MigProfile(seven, 7, 8, (0,)),
    )


A100_40GB = "A100-SXM4-40GB"
A100_80GB = "A100-80GB"
H100_80GB = "H100-80GB"

PROFILES: dict[str, tuple[MigProfile, ...]] = {
    A100_40GB: _geometry("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
    A100_80GB: _geometry("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    H100_80GB: _geometry("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
}
MEMORY_BYTES = {A100_40GB: 40 * GIB, A100_80GB: 80 * GIB, H100_80GB: 80 * GIB}


def mig_model(product: str | None) -> str | None:
    """The MIG table for a GPU product name (GFD label, DRA productName), or None.

    Accepts the spellings clusters show: ``A100-SXM4-40GB``,
    ``NVIDIA-A100-SXM4-80GB``, ``NVIDIA A100-PCIE-40GB``,
    ``NVIDIA-H100-80GB-HBM3``. H100 NVL (94 GB) and others have other tables.
    """
    if not product:
        return None
    name = product.upper().replace(" ", "-")
    if "A100" in name:
        return A100_80GB if "80GB" in name else A100_40GB
    if "H100" in name and "80GB" in name:
        return H100_80GB
    return None


MIG_RESOURCE_PREFIX = "nvidia.com/mig-"  # device plugin, mixed strategy: one resource a profile


def instance_share(model: str | None, name: str) -> float:
    """The part of its GPU one instance of profile ``name`` holds: the larger of its
    compute (of 7) and memory (of 8) slices. Unknown tables: compute from the name
    (``3g.…`` → 3 of 7)."""
    table = mig_model(model) or (model if model in PROFILES else None)
    if table is not None:
        try:
            mig = profile(table, name)
        except ValueError:
            pass  # not a profile of this table: read the name
        else:
            return max(mig.compute / COMPUTE_SLICES, mig.memory_slices / MEMORY_SLICES)
    compute, _, _ = name.partition("g.")
    return min(1.0, int(compute) / COMPUTE_SLICES) if compute.isdigit() else 1.0


def profile(model: str, name: str) -> MigProfile:
    for candidate in PROFILES[model]:
        if candidate.name == name:
            return candidate
    raise ValueError(f"MIG profile {name!r} does not exist on {model}")


def counter_set(gpu_name: str) -> CounterSet:
    counters = {f"memory-slice-{i}": 1 for i in range(MEMORY_SLICES)}
    counters[COMPUTE_COUNTER] = COMPUTE_SLICES
    return CounterSet(name=f"{gpu_name}-counter-set", counters=counters)


def partitionable_gpu(gpu_name: str, model: str) -> tuple[CounterSet, tuple[Device, ...]]:
    """A GPU's CounterSet and one partition Device per profile placement.

    ``model`` is a key of PROFILES or any product name ``mig_model`` knows.
    """
    key = model if model in PROFILES else mig_model(model)
    if key is None:
        raise ValueError(f"no MIG profile table for GPU model {model!r}")
    counters = counter_set(gpu_name)
    devices = tuple(
        _placement_device(gpu_name, key, mig, start, counters.name)
        for mig in PROFILES[key]
        for start in mig.starts
    )
    return counters, devices


def _placement_device(
    gpu_name: str, model: str, mig: MigProfile, start: int, set_name: str
) -> Device:
    consumed = {f"memory-slice-{i}": 1 for i in mig.slices(start)}
    consumed[COMPUTE_COUNTER] = mig.compute
    return Device(
        name=f"{gpu_name}-mig-{mig.name}-{start}",
        driver=GPU_RESOURCE,
        gpu=gpu_name,
        model=model,
        memory_bytes=MEMORY_BYTES[model] * mig.memory_slices // MEMORY_SLICES,
        profile=mig.name,
        capacity={"gpu_milli": WHOLE_GPU_MILLI},
        consumes=(CounterConsumption(counter_set=set_name, counters=consumed),),
    )


def max_instances(model: str, name: str) -> int:
    """How many instances of one profile a GPU holds (7 × 1g.5gb, 2 × 3g.20gb …)."""
    mig = profile(model, name)
    return min(len(_disjoint_starts(mig)), COMPUTE_SLICES // mig.compute)


def _disjoint_starts(mig: MigProfile) -> list[int]:
    taken: set[int] = set()
    chosen = []
    for start in mig.starts:
        if taken.isdisjoint(mig.slices(start)):
            taken.update(mig.slices(start))
            chosen.append(start)
    return chosen


def fits(model: str, profiles: Iterable[str]) -> bool:
    """Whether these MIG instances can coexist on one GPU of ``model``.

    Exact: a depth-first search over placements, largest profiles first,
    against the memory-slice and compute counters (at most 7 instances, so
    the search is tiny). Unknown profile names raise ValueError.
    """
    key = model if model in PROFILES else mig_model(model)
    if key is None:
        raise ValueError(f"no MIG profile table for GPU model {model!r}")
    wanted = sorted((profile(key, name) for name in profiles), key=lambda p: -p.memory_slices)
    if sum(p.compute for p in wanted) > COMPUTE_SLICES:
        return False
    return _place(wanted, frozenset())


def _place(remaining: list[MigProfile], used_slices: frozenset[int]) -> bool:
    if not remaining:
        return True
    first, rest = remaining[0], remaining[1:]
    for start in first.starts:
        slices = frozenset(first.slices(start))
        if used_slices.isdisjoint(slices) and _place(rest, used_slices | slices):
            return True
    return False
