"""What the autoscalers report of themselves: ProvisioningRequests and their
conditions, and the events the autoscaler events page lists.

kubernetes/autoscaler ``cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/
v1/types.go``: ``spec.provisioningClassName``, ``spec.podSets[].{podTemplateRef.name,
count}``, ``spec.parameters``, ``status.conditions`` (``Accepted``, ``Provisioned``,
``Failed``, ``BookingExpired``, ``CapacityRevoked``). A request's state as
cluster-autoscaler reads it:

- ``failed``: ``Failed=True`` (``conditions.go`` ``ShouldCapacityBeBooked``: never booked);
- ``booking expired``: ``BookingExpired=True`` (the booking ended, ``processors/provreq/
  processor.go``: 10 minutes after ``Provisioned``, or every pod consumed it);
- ``booked``: ``Provisioned=True`` and neither of the above: its capacity is found or
  bought and held for its pods (``bookCapacity`` schedules the request's pods in the
  snapshot);
- ``pending``: none of these: cluster-autoscaler picks it up and scales up for its pods
  (``processors/provreq/injector.go`` ``GetPodsFromNextRequest``).

Pure: no Django, no I/O; re-exported by ``topology.model.hardware``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
BEST_EFFORT_ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
PROCESSOR_INSTANCE = "processorInstance"  # provisioningrequest/supported_classes.go

PENDING = "pending"
BOOKED = "booked"
FAILED = "failed"
BOOKING_EXPIRED = "booking expired"
LIVE_STATES = (PENDING, BOOKED)


@dataclass(frozen=True, slots=True)
class RequestCondition:
    """One ``metav1.Condition`` as written (``last_transition``: RFC 3339 or "")."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition: str = ""


@dataclass(frozen=True, slots=True)
class RequestPodSet:
    template: str  # podTemplateRef.name (a PodTemplate in the request's namespace)
    count: int


@dataclass(frozen=True, slots=True)
class ProvisioningRequest:
    namespace: str
    name: str
    class_name: str
    pod_sets: tuple[RequestPodSet, ...] = ()
    parameters: Mapping[str, str] = field(default_factory=dict)
    conditions: tuple[RequestCondition, ...] = ()
    created: str = ""  # metadata.creationTimestamp as written

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def pods(self) -> int:
        return sum(p.count for p in self.pod_sets)

    def condition(self, kind: str) -> RequestCondition | None:
        return next((c for c in self.conditions if c.type == kind), None)

    def is_true(self, kind: str) -> bool:
        found = self.condition(kind)
        return found is not None and found.status == "True"

    @property
    def supported(self) -> bool:
        """A class cluster-autoscaler provisions, run without a check-capacity processor
        instance (``supported_classes.go`` ``SupportedProvisioningClass``)."""
        if self.class_name == BEST_EFFORT_ATOMIC:
            return True
        return self.class_name == CHECK_CAPACITY and not self.parameters.get(PROCESSOR_INSTANCE)

    @property
    def state(self) -> str:
        if self.is_true("Failed"):
            return FAILED
        if self.is_true("BookingExpired"):
            return BOOKING_EXPIRED
        if self.is_true("Provisioned"):
            return BOOKED
        return PENDING

    @property
    def live(self) -> bool:
        """Its capacity is asked for (pending) or held for it (booked)."""
        return self.state in LIVE_STATES

    def describe(self) -> str:
        """``ProvisioningRequest ns/name (class, state: Type=Status Reason: message; ...)``."""
        said = "; ".join(_condition_text(c) for c in self.conditions) or "no condition yet"
        return f"ProvisioningRequest {self.key} ({self.class_name}, {self.state}: {said})"


def _condition_text(condition: RequestCondition) -> str:
    text = f"{condition.type}={condition.status}"
    if condition.reason:
        text += f" {condition.reason}"
    if condition.message:
        text += f": {condition.message}"
    return text


@dataclass(frozen=True, slots=True)
class AutoscalerEvent:
    """One thing an autoscaler reported, as the events page lists it.

    ``source``: where it was read (``Event``, ``ProvisioningRequest``, ``NodeClaim``,
    ``cluster-autoscaler status``); ``object``: ``Kind/ns/name`` it is about;
    ``reason``: the Event's reason or the condition's ``Type=Status Reason``;
    ``time``: RFC 3339 as written ("" when the object carries none)."""

    source: str
    object: str
    reason: str
    message: str = ""
    type: str = ""  # Normal | Warning (Events); "" for conditions
    time: str = ""
    count: int = 1
    node_group: str = ""  # the node group it names, where it names one
