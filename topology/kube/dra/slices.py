"""Where a node's GPUs come from: DRA ResourceSlices, else device-plugin labels.

Pure. Two builders, in the precedence DESIGN.md gives:

- ``parse_slice``: a ResourceSlice spec (resource.k8s.io v1, or v1beta1 /
  v1beta2 with the ``basic:`` wrapper) → devices with typed, qualified
  attributes (a bare name gets the driver's domain), quantity capacities,
  shared counters and per-device counter consumption. Devices of one
  physical GPU (a whole GPU and its MIG/partition devices, joined by
  ``parentUUID`` / ``uuid`` / ``deviceID`` / counter set) share one Gpu.
- ``plugin_gpus``: ``nvidia.com/gpu`` allocatable plus GPU feature discovery
  labels (product, memory in MiB, count, MIG strategy single/mixed, sharing
  replicas) → Gpus and the units the kubelet advertises: whole GPUs, or
  MIG-single instances and time-slicing/MPS replicas (``Device.unit_gpu_milli``).

Every GPU Device carries capacity ``gpu_milli: 1000`` by convention; DRA
capacities are stored under qualified names (``gpu.nvidia.com/memory``) in
bytes or counts. Bare capacity-request names in claims are relative to the
allocated device's driver domain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from topology.kube.fields import ObjectContext
from topology.kube.providers import gke as gke_gpus
from topology.model import mig
from topology.model.hardware import (
    GPU_RESOURCE,
    WHOLE_GPU_MILLI,
    CounterConsumption,
    CounterSet,
    Device,
    Gpu,
)
from topology.model.quantity import memory_bytes

PRODUCT_LABEL = "nvidia.com/gpu.product"
MEMORY_LABEL = "nvidia.com/gpu.memory"
COUNT_LABEL = "nvidia.com/gpu.count"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
SHARING_LABEL = "nvidia.com/gpu.sharing-strategy"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
MIB = 2**20
GPU_TYPES = ("gpu", "mig", "amdgpu", "amdgpu-partition", "vgpu")
PARTITION_TYPES = ("mig", "amdgpu-partition")
# resource.k8s.io ResourceSliceMaxDevices: the API server refuses a larger slice
MAX_SLICE_DEVICES = 128


@dataclass(frozen=True, slots=True)
class SliceDevice:
    node_name: str | None  # per-device nodeName (perDeviceNodeSelection), else the slice's
    device: Device


@dataclass(frozen=True, slots=True)
class ParsedSlice:
    driver: str
    pool: str
    node_name: str | None
    devices: tuple[SliceDevice, ...]
    counter_sets: tuple[CounterSet, ...]
    generation: int = 0  # spec.pool.generation: only a pool's newest slices count
    slice_count: int = 1  # spec.pool.resourceSliceCount: the slices of that generation


# --- ResourceSlice ------------------------------------------------------------------


def current_slices(slices: list[tuple[Any, ParsedSlice]]) -> tuple[list[ParsedSlice], set[str]]:
    """The slices the structured allocator reads, and the incomplete pools' names.

    k8s.io/dynamic-resource-allocation ``structured/internal/stable/pools_stable.go``
    ``GatherPools``/``addSlice``: a slice of an older ``pool.generation`` than another
    of the same (driver, pool) is out-dated and ignored; a pool whose newest
    generation has fewer slices than its ``resourceSliceCount`` is incomplete. No
    request takes its devices (``allocator_stable.go`` ``allocateOne`` skips it), and
    a request for ``All`` devices fails ("resource pool … is currently being
    updated", ``validateDeviceRequest``)."""
    newest: dict[tuple[str, str], int] = {}
    for _, parsed in slices:
        key = (parsed.driver, parsed.pool)
        newest[key] = max(newest.get(key, parsed.generation), parsed.generation)
    current = [p for _, p in slices if p.generation == newest[(p.driver, p.pool)]]
    seen: dict[tuple[str, str], int] = {}
    for parsed in current:
        seen[(parsed.driver, parsed.pool)] = seen.get((parsed.driver, parsed.pool), 0) + 1
    incomplete = {
        f"{p.driver}/{p.pool}" for p in current if seen[(p.driver, p.pool)] != p.slice_count
    }
    return current, incomplete


def parse_slice(ctx: ObjectContext, spec: dict[str, Any]) -> ParsedSlice:
    driver = ctx.text(spec.get("driver"), "spec.driver", required=True)
    pool_spec = ctx.mapping(spec.get("pool"), "spec.pool")
    pool = ctx.text(pool_spec.get("name"), "spec.pool.name")
    node_name = ctx.text(spec.get("nodeName"), "spec.nodeName") or None
    if node_name is None and (spec.get("nodeSelector") or spec.get("allNodes")):
        field = "spec.nodeSelector" if spec.get("nodeSelector") else "spec.allNodes"
        ctx.fail(field, "devices shared by several nodes are not supported")
    listed = ctx.items(spec.get("devices"), "spec.devices")
    if len(listed) > MAX_SLICE_DEVICES:
        reason = f"must have at most {MAX_SLICE_DEVICES} items, got {len(listed)}"
        ctx.fail("spec.devices", reason)
    devices = [_slice_device(ctx, path, raw, driver, pool, node_name) for path, raw in listed]
    return ParsedSlice(
        driver=driver,
        pool=pool,
        node_name=node_name,
        devices=tuple(devices),
        counter_sets=_counter_sets(ctx, spec.get("sharedCounters"), "spec.sharedCounters"),
        generation=ctx.integer(pool_spec.get("generation"), "spec.pool.generation", minimum=0),
        slice_count=ctx.integer(
            pool_spec.get("resourceSliceCount"),
            "spec.pool.resourceSliceCount",
            default=1,
            minimum=1,
        ),
    )


def _slice_device(
    ctx: ObjectContext, path: str, raw: dict[str, Any], driver: str, pool: str, node: str | None
) -> SliceDevice:
    body = ctx.mapping(raw.get("basic"), f"{path}.basic") or raw  # v1beta1 wraps in basic:
    base = f"{path}.basic" if "basic" in raw else path
    own_node = ctx.text(raw.get("nodeName") or body.get("nodeName"), f"{path}.nodeName") or None
    if own_node is None and node is None and (raw.get("nodeSelector") or raw.get("allNodes")):
        ctx.fail(f"{path}.nodeSelector", "devices shared by several nodes are not supported")
    attributes = _attributes(ctx, body.get("attributes"), f"{base}.attributes", driver)
    capacity = _capacity(ctx, body.get("capacity"), f"{base}.capacity", driver)
    device = Device(
        name=ctx.text(raw.get("name"), f"{path}.name", required=True),
        driver=driver,
        model=_product(attributes, driver),
        memory_bytes=capacity.get(f"{driver}/memory"),
        profile=_profile(attributes, driver),
        attributes=attributes,
        capacity=capacity,
        consumes=_consumes(ctx, body.get("consumesCounters"), f"{base}.consumesCounters"),
        shareable=ctx.boolean(
            body.get("allowMultipleAllocations"), f"{base}.allowMultipleAllocations"
        ),
        pool=pool,
    )
    return SliceDevice(node_name=own_node or node, device=device)


def _qualified(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _attributes(
    ctx: ObjectContext, raw: Any, field: str, driver: str
) -> dict[str, str | int | bool]:
    out: dict[str, str | int | bool] = {}
    for name, value in ctx.mapping(raw, field).items():
        typed = ctx.mapping(value, f"{field}.{name}")
        kinds = [k for k in ("string", "int", "bool", "version") if k in typed]
        if len(kinds) != 1:
            ctx.fail(f"{field}.{name}", "needs exactly one of string, int, bool, version")
        kind = kinds[0]
        path = f"{field}.{name}.{kind}"
        if kind == "int":
            out[_qualified(name, driver)] = ctx.integer(typed[kind], path)
        elif kind == "bool":
            out[_qualified(name, driver)] = ctx.boolean(typed[kind], path)
        else:
            out[_qualified(name, driver)] = ctx.text(typed[kind], path)
    return out


def _capacity(ctx: ObjectContext, raw: Any, field: str, driver: str) -> dict[str, int]:
    out = {}
    for name, value in ctx.mapping(raw, field).items():
        path = f"{field}.{name}"
        quantity = ctx.mapping(value, path).get("value") if isinstance(value, dict) else value
        out[_qualified(name, driver)] = memory_bytes(ctx.quantity(quantity, f"{path}.value"))
    return out


def _counters(ctx: ObjectContext, raw: Any, field: str) -> dict[str, int]:
    out = {}
    for name, value in ctx.mapping(raw, field).items():
        path = f"{field}.{name}"
        quantity = ctx.mapping(value, path).get("value") if isinstance(value, dict) else value
        out[str(name)] = memory_bytes(ctx.quantity(quantity, f"{path}.value"))
    return out


def _counter_sets(ctx: ObjectContext, raw: Any, field: str) -> tuple[CounterSet, ...]:
    return tuple(
        CounterSet(
            name=ctx.text(item.get("name"), f"{path}.name", required=True),
            counters=_counters(ctx, item.get("counters"), f"{path}.counters"),
        )
        for path, item in ctx.items(raw, field)
    )


def _consumes(ctx: ObjectContext, raw: Any, field: str) -> tuple[CounterConsumption, ...]:
    return tuple(
        CounterConsumption(
            counter_set=ctx.text(item.get("counterSet"), f"{path}.counterSet", required=True),
            counters=_counters(ctx, item.get("counters"), f"{path}.counters"),
        )
        for path, item in ctx.items(raw, field)
    )


def _product(attributes: dict[str, str | int | bool], driver: str) -> str | None:
    value = attributes.get(f"{driver}/productName")
    return str(value) if value is not None else None


def _profile(attributes: dict[str, str | int | bool], driver: str) -> str | None:
    if attributes.get(f"{driver}/type") in PARTITION_TYPES or f"{driver}/profile" in attributes:
        value = attributes.get(f"{driver}/profile") or attributes.get(f"{driver}/partitionProfile")
        return str(value) if value is not None else None
    return None


# --- DRA devices → one node's GPUs ------------------------------------------------


def is_gpu_device(device: Device) -> bool:
    """GPU-ness of a DRA device: its type attribute, else a GPU driver name."""
    kind = device.attributes.get(f"{device.driver}/type")
    if kind is not None:
        return kind in GPU_TYPES
    return "gpu" in device.driver.split(".")[0] or device.model is not None


def _gpu_key(device: Device) -> str:
    """Devices of one physical GPU share this key (parent first, then self)."""
    domain = device.driver
    for attribute in ("parentUUID", "uuid", "deviceID"):
        value = device.attributes.get(f"{domain}/{attribute}")
        if value is not None:
            return f"{domain}:{value}"
    if device.consumes:
        return f"counters:{device.consumes[0].counter_set}"
    return f"device:{device.name}"


def dra_gpus(devices: list[Device]) -> tuple[tuple[Gpu, ...], tuple[Device, ...]]:
    """Group a node's DRA devices into physical Gpus; GPU devices get ``gpu`` and gpu_milli."""
    groups: dict[str, list[Device]] = {}
    for device in devices:
        if is_gpu_device(device):
            groups.setdefault(_gpu_key(device), []).append(device)
    names = {key: _gpu_name(members) for key, members in groups.items()}
    gpus = tuple(_gpu(names[key], members) for key, members in groups.items())
    placed = tuple(
        replace(
            device,
            gpu=names[_gpu_key(device)],
            capacity={"gpu_milli": WHOLE_GPU_MILLI, **device.capacity},
        )
        if is_gpu_device(device)
        else device
        for device in devices
    )
    return gpus, placed


def _gpu_name(members: list[Device]) -> str:
    whole = [d for d in members if d.profile is None]
    return (whole or members)[0].name


def _gpu(name: str, members: list[Device]) -> Gpu:
    whole = [d for d in members if d.profile is None] or members
    first = whole[0]
    root = first.attributes.get(PCIE_ROOT)
    return Gpu(
        name=name,
        model=next((d.model for d in members if d.model), None),
        memory_bytes=first.memory_bytes if first.profile is None else None,
        pcie_root=str(root) if root is not None else None,
    )


# --- device plugin + GPU feature discovery labels -------------------------------------


def plugin_gpus(
    labels: dict[str, str], gpu_allocatable: int
) -> tuple[tuple[Gpu, ...], tuple[Device, ...]]:
    """GPUs of a device-plugin node, from ``nvidia.com/gpu`` allocatable and GFD labels.

    kube-scheduler only counts ``nvidia.com/gpu`` (an extended resource): a node
    takes pods while their requests sum to at most its allocatable. So every
    unit the kubelet advertises becomes one Device a pod takes whole, on the
    physical Gpu it lives on (what the heatmap draws):

    - no MIG, no sharing: one whole Device per GPU;
    - time-slicing / MPS (``nvidia.com/gpu.replicas`` R > 1, NVIDIA
      k8s-device-plugin ``sharing.timeSlicing`` / ``sharing.mps``): allocatable
      is GPUs x R, so ``ceil(allocatable / R)`` physical GPUs each carry up to R
      replica units of 1/R of the GPU (see ``replica_units``);
    - MIG ``single``: ``nvidia.com/gpu`` counts MIG instances of one profile
      (product ``A100-SXM4-40GB-MIG-1g.5gb``, NVIDIA k8s-device-plugin
      ``internal/lm/mig-strategy.go``); each instance is a unit Device with
      that profile on its parent Gpu, holding the profile's share of it;
    - GKE's own labels (MIG partition size, time-sharing / MPS clients per GPU)
      read as the GFD labels they stand for (``topology.kube.providers.gke``);
    - MIG ``mixed``: ``nvidia.com/gpu`` counts the GPUs outside MIG mode;
      MIG instances stay extended resources (``nvidia.com/mig-<profile>``) and
      the remaining GPUs of ``nvidia.com/gpu.count`` appear as Gpus without
      whole Devices.
    """
    labels = gke_gpus.as_gfd(
        labels,
        product=PRODUCT_LABEL,
        replicas=REPLICAS_LABEL,
        sharing=SHARING_LABEL,
        mig_strategy=MIG_STRATEGY_LABEL,
    )
    product = labels.get(PRODUCT_LABEL) or None
    strategy = labels.get(MIG_STRATEGY_LABEL, "none")
    replicas = _label_int(labels, REPLICAS_LABEL) or _implied_replicas(labels, gpu_allocatable)
    if strategy == "single" and product and "-MIG-" in product:
        return _single_strategy(labels, product, gpu_allocatable, replicas)
    model = _model(product)
    physical = -(-gpu_allocatable // replicas)
    memory = (_label_int(labels, MEMORY_LABEL) or 0) * MIB or None
    gpus = [Gpu(name=f"gpu-{i}", model=model, memory_bytes=memory) for i in range(physical)]
    if replicas > 1:
        mps = labels.get(SHARING_LABEL) == "mps"
        devices = replica_units(gpus, replicas, gpu_allocatable, WHOLE_GPU_MILLI, mps=mps)
    else:
        devices = tuple(_whole(gpu) for gpu in gpus)
    if strategy == "mixed":
        total = max(_label_int(labels, COUNT_LABEL) or 0, physical)
        gpus += [
            Gpu(name=f"gpu-{i}", model=model, memory_bytes=memory) for i in range(physical, total)
        ]
    return tuple(gpus), devices


def _implied_replicas(labels: dict[str, str], gpu_allocatable: int) -> int:
    """Replicas when GFD gives no ``nvidia.com/gpu.replicas`` (older releases): a
    node without MIG that says it shares its GPUs (product ``-SHARED``, or a
    sharing strategy) and advertises a multiple of its physical
    ``nvidia.com/gpu.count`` advertises each GPU that many times."""
    physical = _label_int(labels, COUNT_LABEL)
    shared = (labels.get(PRODUCT_LABEL) or "").endswith("-SHARED") or labels.get(SHARING_LABEL) in (
        "time-slicing",
        "mps",
    )
    if labels.get(MIG_STRATEGY_LABEL, "none") != "none" or not physical or not shared:
        return 1
    if gpu_allocatable > physical and gpu_allocatable % physical == 0:
        return gpu_allocatable // physical
    return 1


def replica_units(
    gpus: list[Gpu], replicas: int, units: int, gpu_milli: int, *, mps: bool = False
) -> tuple[Device, ...]:
    """``units`` advertised replicas over ``gpus``, R per GPU, each holding 1/R of
    ``gpu_milli`` (the split adds up to it exactly: 1000 over 3 is 334, 333, 333).

    GPUs fill in order (replicas of an unhealthy GPU are withdrawn together, so a
    short allocatable misses whole GPUs at the end). The tuple is ordered replica
    by replica across GPUs, so taking the lowest free units spreads pods over the
    physical GPUs as the device plugin's default ``distributed`` allocation policy
    does (``internal/rm/allocate.go``). Under MPS each replica is limited to 1/R of
    the GPU memory; under time-slicing it sees all of it.
    """
    devices = []
    for replica in range(replicas):
        for index, gpu in enumerate(gpus):
            if index * replicas + replica >= units:
                continue
            share = gpu_milli // replicas + (1 if replica < gpu_milli % replicas else 0)
            memory = gpu.memory_bytes
            if mps and memory is not None:
                memory //= replicas
            devices.append(
                Device(
                    name=f"{gpu.name}-replica-{replica}",
                    driver=GPU_RESOURCE,
                    gpu=gpu.name,
                    model=gpu.model,
                    memory_bytes=memory,
                    capacity={"gpu_milli": WHOLE_GPU_MILLI},
                    unit_gpu_milli=share,
                )
            )
    return tuple(devices)


def _single_strategy(
    labels: dict[str, str], product: str, allocatable: int, replicas: int
) -> tuple[tuple[Gpu, ...], tuple[Device, ...]]:
    """MIG instances of one profile advertised as ``nvidia.com/gpu`` (possibly replicated).

    GFD overrides ``nvidia.com/gpu.count`` with the number of MIG devices and
    ``nvidia.com/gpu.memory`` with one device's memory in MB; the physical GPUs
    are the instances over the profile's instances per GPU (7 x 1g.5gb on an
    A100-40GB). Each instance holds its profile's share of the GPU: the larger of
    its compute (of 7) and memory (of 8) slices.
    """
    model, _, profile_name = product.partition("-MIG-")
    model = _model(model) or model
    profile_name = profile_name.removesuffix("-SHARED")
    table = mig.mig_model(model)
    try:
        per_gpu = mig.max_instances(table, profile_name) if table else 1
    except ValueError:
        per_gpu = 1
    instances = -(-allocatable // replicas)
    physical = -(-instances // per_gpu) if instances else 0
    memory = _mig_memory(labels, table, profile_name)
    share = round(mig.instance_share(table or model, profile_name) * WHOLE_GPU_MILLI)
    gpus = tuple(Gpu(name=f"gpu-{i}", model=model) for i in range(physical))
    devices = tuple(
        Device(
            name=f"gpu-{i // per_gpu}-mig-{profile_name}-{i % per_gpu}",
            driver=GPU_RESOURCE,
            gpu=f"gpu-{i // per_gpu}",
            model=model,
            memory_bytes=memory,
            profile=profile_name,
            capacity={"gpu_milli": WHOLE_GPU_MILLI},
            unit_gpu_milli=share,
        )
        for i in range(instances)
    )
    if replicas > 1:
        devices = _replicated(devices, replicas, allocatable)
    return gpus, devices


def _replicated(units: tuple[Device, ...], replicas: int, advertised: int) -> tuple[Device, ...]:
    """Time-sliced MIG instances: R replicas of each unit, each 1/R of the unit's share."""
    copies = []
    for index, unit in enumerate(units):
        share = unit.unit_gpu_milli or 0
        for replica in range(replicas):
            if index * replicas + replica < advertised:
                part = share // replicas + (1 if replica < share % replicas else 0)
                copies.append(
                    (
                        replica,
                        index,
                        replace(unit, name=f"{unit.name}-replica-{replica}", unit_gpu_milli=part),
                    )
                )
    return tuple(device for _, _, device in sorted(copies, key=lambda c: (c[0], c[1])))


def _mig_memory(labels: dict[str, str], table: str | None, profile_name: str) -> int | None:
    """One MIG device's memory: GFD's label (MB), else the profile's slices of the GPU."""
    labelled = _label_int(labels, MEMORY_LABEL)
    if labelled:
        return labelled * 10**6
    if table is None:
        return None
    try:
        slices = mig.profile(table, profile_name).memory_slices
    except ValueError:
        return None
    return mig.MEMORY_BYTES[table] * slices // mig.MEMORY_SLICES


def mig_resource_replicas(labels: Mapping[str, str], resource: str) -> int:
    """Replicas of a mixed-strategy MIG resource: GFD labels each resource it
    advertises ``<resource>.replicas`` (``nvidia.com/mig-1g.5gb.replicas``), R > 1
    when the instances are time-sliced (each advertised unit is then 1/R of one)."""
    return _label_int(dict(labels), f"{resource}.replicas") or 1


def _whole(gpu: Gpu) -> Device:
    return Device(
        name=gpu.name,
        driver=GPU_RESOURCE,
        gpu=gpu.name,
        model=gpu.model,
        memory_bytes=gpu.memory_bytes,
        capacity={"gpu_milli": WHOLE_GPU_MILLI},
    )


def _model(product: str | None) -> str | None:
    """The GPU model; the device plugin appends ``-SHARED`` when it renames shared GPUs."""
    if product and product.endswith("-SHARED"):
        return product[: -len("-SHARED")]
    return product


def _label_int(labels: dict[str, str], key: str) -> int | None:
    value = labels.get(key, "")
    return int(value) if value.isdigit() and len(value) < 10 else None
