"""Fluent builders of the engine's model dataclasses, for every engine test.

As kube-scheduler's one test-wrapper package (``pkg/scheduler/testing/wrappers.go``:
``MakeNode().Name("n1").Capacity(...).Label(...).Obj()``), each builder starts from the
dataclass's own defaults, sets only what the test says, and ``build()`` returns the
frozen object::

    make_node("n1").allocatable(cpu=64, memory="512Gi", pods=110).gpus(8, "H100").build()
    make_pod("p", "ml").requests(cpu="500m", memory="1Gi").gpus(1).on("n1").build()
    make_group("pool", template).selector({"pool": "x"}).size(0, 4).price(10.0).build()
    make_gang("train", 3, "ml").required("cloud.google.com/gce-topology-block").build()

Builders never change: each call returns a new one, so a test module can name a shape
once and derive every node of it (``H100 = make_node().allocatable(...).gpus(8, "H100")``,
then ``H100.named("n1").label(BLOCK, "b2").build()``).

Quantities are Kubernetes quantities (``64``, ``"500m"``, ``"512Gi"``) or plain numbers
of base units (cpu cores, memory bytes). Pure: no Django, so ``-p no:django`` runs it.
These build model objects; ``tests.builders.objects`` builds the Kubernetes objects
the parser reads (``node_object``, ``pod_object``…), for tests of ``parse_objects``.
"""

from tests.builders.groups import (
    GroupBuilder,
    QueueBuilder,
    ReservationBuilder,
    make_group,
    make_queue,
    make_reservation,
)
from tests.builders.nodes import GpuSpec, NodeBuilder, make_node
from tests.builders.pods import (
    ClaimBuilder,
    GangBuilder,
    PodBuilder,
    make_claim,
    make_gang,
    make_pod,
)

__all__ = [
    "ClaimBuilder",
    "GangBuilder",
    "GpuSpec",
    "GroupBuilder",
    "NodeBuilder",
    "PodBuilder",
    "QueueBuilder",
    "ReservationBuilder",
    "make_claim",
    "make_gang",
    "make_group",
    "make_node",
    "make_pod",
    "make_queue",
    "make_reservation",
]
