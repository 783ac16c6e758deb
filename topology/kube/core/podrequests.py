"""A pod's effective requests, as kube-scheduler sums them, after the API server's
validation of every container's quantities.

Pure: no Django, no I/O. ``topology.kube.core.pods`` reads Pods (and controller
templates) through ``pod_requests``; ``topology.kube.core.daemons`` DaemonSet templates too.

Sum (``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests`` /
``AggregateContainerRequests``, also ``pkg/api/v1/resource/helpers.go``)::

    containers summed + restartable init containers (sidecars, KEP-753)
    max with each init container i:  init[i] + sidecars declared before i
    pod-level spec.resources.requests (KEP-2837) replace cpu / memory
    + spec.overhead

Validation (``pkg/apis/core/validation/validation.go``
``ValidateResourceRequirements``, ``ValidateResourceQuantityValue``), which a pod
must pass to exist at all; a pod breaking it is an input error naming the field:

- every quantity >= 0 ("must be greater than or equal to 0");
- extended resources (a domain other than ``*kubernetes.io``) are integers
  ("must be an integer");
- request <= limit ("must be less than or equal to R limit of L"), and for
  resources that cannot be overcommitted (extended resources, hugepages)
  request == limit ("must be equal to R limit of L"), a request without a limit
  being refused ("Limit must be set for non overcommitable resources").

Requests default to limits first, as the API server's defaulting does
(``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Pod``).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.quantity import cpu_milli, whole_count

# IsSupportedPodLevelResource (component-helpers resource/helpers.go)
POD_LEVEL_RESOURCES = ("cpu", "memory")
SIDECAR = "Always"


def pod_requests(ctx: ObjectContext, spec: dict[str, Any]) -> Counter[str]:
    """Effective requests in base units (cpu milli, counts and bytes otherwise)."""
    total: Counter[str] = Counter()
    for path, container in ctx.items(spec.get("containers"), "spec.containers"):
        total.update(container_requests(ctx, container, path))
    sidecars: Counter[str] = Counter()
    init_peak: Counter[str] = Counter()
    for path, container in ctx.items(spec.get("initContainers"), "spec.initContainers"):
        values = container_requests(ctx, container, path)
        if container.get("restartPolicy") == SIDECAR:  # runs alongside from now on
            total.update(values)
            sidecars.update(values)
            running = Counter(sidecars)
        else:  # runs to completion beside the sidecars started before it
            running = Counter(values) + sidecars
        init_peak = _max(init_peak, running)
    merged = _max(total, init_peak)
    for key, value in _pod_level(ctx, spec).items():
        merged[key] = value  # replaces the containers' figure
    for key, value in ctx.mapping(spec.get("overhead"), "spec.overhead").items():
        merged[str(key)] += _base_units(str(key), ctx.quantity(value, f"spec.overhead.{key}"))
    return merged


def _max(a: Counter[str], b: Counter[str]) -> Counter[str]:
    return Counter({k: max(a[k], b[k]) for k in {*a, *b}})


def _pod_level(ctx: ObjectContext, spec: dict[str, Any]) -> dict[str, int]:
    """``spec.resources`` (pod-level, KEP-2837): its requests (defaulting to its
    limits) of cpu and memory replace the containers' sum."""
    resources = ctx.mapping(spec.get("resources"), "spec.resources")
    if not resources:
        return {}
    values = validated(ctx, resources, "spec.resources")
    return {k: v for k, v in values.items() if k in POD_LEVEL_RESOURCES}


def container_requests(ctx: ObjectContext, container: dict[str, Any], path: str) -> Counter[str]:
    resources = ctx.mapping(container.get("resources"), f"{path}.resources")
    return validated(ctx, resources, f"{path}.resources")


def validated(ctx: ObjectContext, resources: dict[str, Any], base: str) -> Counter[str]:
    """Requests (defaulted to limits) in base units, after the API server's checks."""
    limits = _quantities(ctx, resources.get("limits"), f"{base}.limits")
    requests = _quantities(ctx, resources.get("requests"), f"{base}.requests")
    for key, request in requests.items():
        _check_request(ctx, f"{base}.requests.{key}", key, request, limits.get(key))
    values: Counter[str] = Counter()
    for key, quantity in {**limits, **requests}.items():
        values[key] = _base_units(key, quantity)
    return values


def _quantities(ctx: ObjectContext, raw: Any, field: str) -> dict[str, Fraction]:
    found = {}
    for key, value in ctx.mapping(raw, field).items():
        name, where = str(key), f"{field}.{key}"
        quantity = ctx.quantity(value, where)
        if quantity < 0:
            ctx.fail(where, f"must be greater than or equal to 0, got {value}")
        if is_integer_resource(name) and quantity.denominator != 1:
            ctx.fail(where, f"must be an integer, got {value}")
        found[name] = quantity
    return found


def _check_request(
    ctx: ObjectContext, where: str, key: str, request: Fraction, limit: Fraction | None
) -> None:
    if limit is None:  # leniency, see the module docstring
        return
    if request != limit and not overcommit_allowed(key):
        ctx.fail(where, f"must be equal to {key} limit of {_text(limit)}")
    if request > limit:
        ctx.fail(where, f"must be less than or equal to {key} limit of {_text(limit)}")


def is_native(name: str) -> bool:
    """``IsNativeResource``: no domain, or a ``kubernetes.io`` one."""
    domain = name.partition("/")[0] if "/" in name else ""
    return not domain or domain == "kubernetes.io" or domain.endswith(".kubernetes.io")


def is_integer_resource(name: str) -> bool:
    """``IsIntegerResourceName`` for container resources: the extended ones."""
    return not is_native(name) and not name.startswith("requests.")


def overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not hugepages."""
    return is_native(name) and not name.startswith("hugepages-")


def _base_units(key: str, quantity: Fraction) -> int:
    return cpu_milli(quantity) if key == "cpu" else whole_count(quantity)


def _text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))
