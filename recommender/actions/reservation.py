"""A card paid by a reservation: what makes the pods land IN the reservation.

A reservation card's nodes are already paid for. Growing the node group they belong
to does not choose the reservation: the cloud may start on-demand nodes (paid on
top), and pods that do not tolerate the reserved nodes' taints stay pending anyway.
So the card never changes a pool's size; it gives what targets the reservation:

    Karpenter + EC2 capacity reservation ─► pod nodeSelector
        karpenter.sh/capacity-type: reserved,
        karpenter.k8s.aws/capacity-reservation-id: <id>
        (aws/karpenter-provider-aws: reserved capacity type, the node label
        ``karpenter.k8s.aws/capacity-reservation-id``; the EC2NodeClass selects the
        reservation with ``capacityReservationSelectorTerms``)
    EKS node group + EC2 reservation     ─► a launch template whose
        CapacityReservationSpecification targets the reservation (EC2
        ``CapacityReservationTarget.CapacityReservationId``); an open reservation is
        used only if EC2 happens to launch in its zone and type
    GKE + Compute Engine reservation     ─► pod nodeSelector
        cloud.google.com/reservation-name: <name>,
        cloud.google.com/reservation-affinity: specific
        (GKE "consuming reserved zonal resources"), or a node pool created with
        ``--reservation-affinity=specific --reservation=<name>``
    capacityweb.io Reservation           ─► the pods' selector and tolerations of the
        group's nodes; how the cloud starts the reserved nodes is not in the snapshot,
        and the card says so instead of guessing

In every case the pods get the tolerations of the group's taints they lack (the
reserved nodes carry them: without them the pods never land there).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

import yaml

from recommender.engine.autoscaler.reservation_pods import pod_template_fields
from topology.model.hardware import Cluster, NodeGroup, Pod, Reservation

AWS_SOURCE = "aws ec2 describe-capacity-reservations"
KARPENTER_SOURCE = "Karpenter EC2NodeClass status.capacityReservations"
GCP_SOURCE = "gcloud compute reservations list"
UNUSED_SUFFIX = (
    "-unused"  # topology.kube.providers.cloud_reservations names a reservation's unused part so
)
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
AWS_RESERVATION_LABEL = "karpenter.k8s.aws/capacity-reservation-id"
GCP_RESERVATION_LABEL = "cloud.google.com/reservation-name"
GCP_AFFINITY_LABEL = "cloud.google.com/reservation-affinity"


def reservation_text(
    reservation: Reservation | None,
    name: str,
    group: NodeGroup,
    count: int,
    pods: Iterable[Pod],
) -> str:
    """The card's one action: the pod-template fields that target the reservation,
    under comments saying why no pool is resized and how the cloud starts the nodes."""
    pods = tuple(pods)
    cloud_id = name.removesuffix(UNUSED_SUFFIX)
    source = reservation.source if reservation else None
    karpenter = group.autoscaler is not None and group.autoscaler.kind == "karpenter"
    selector = _selector(source, cloud_id, karpenter)
    how = _how(source, cloud_id, group, karpenter)
    lines = [
        f"# reservation {name} already pays for these {count} node(s) of {group.name}: start "
        "them IN the reservation.",
        f"# Do not grow {group.name} for them: a size change does not choose the reservation "
        "(the cloud may start on-demand nodes, paid on top).",
        *(f"# {line}" for line in how),
        "# add to the pod template of "
        + ", ".join(sorted({p.gang or p.key for p in pods}) or ["the pending pods"])
        + ":",
    ]
    spec = pod_template_fields(selector, group.template.taints, pods)
    if not spec:
        lines.append("# (nothing: the pods already select and tolerate the reserved nodes)")
        return "\n".join(lines) + "\n"
    body = yaml.safe_dump({"spec": spec}, sort_keys=False, default_flow_style=False)
    return "\n".join(lines) + "\n" + body


def _selector(source: str | None, cloud_id: str, karpenter: bool) -> dict[str, str]:
    if source in (AWS_SOURCE, KARPENTER_SOURCE) and karpenter:
        return {CAPACITY_TYPE_LABEL: "reserved", AWS_RESERVATION_LABEL: cloud_id}
    if source == GCP_SOURCE:
        return {GCP_AFFINITY_LABEL: "specific", GCP_RESERVATION_LABEL: cloud_id}
    return {}


def _how(source: str | None, cloud_id: str, group: NodeGroup, karpenter: bool) -> list[str]:
    if source in (AWS_SOURCE, KARPENTER_SOURCE) and karpenter:
        pool = group.autoscaler.name if group.autoscaler else group.name
        return [
            f"Karpenter launches into {cloud_id} for pods that select it, when NodePool {pool} "
            "allows karpenter.sh/capacity-type reserved and its EC2NodeClass selects the "
            "reservation (spec.capacityReservationSelectorTerms)."
        ]
    if source in (AWS_SOURCE, KARPENTER_SOURCE):
        return [
            f"A node of an EKS node group lands in {cloud_id} when its launch template's "
            "CapacityReservationSpecification targets it (CapacityReservationTarget."
            f"CapacityReservationId={cloud_id}: a node group of its own for the reservation), "
            "or by chance for an open reservation, if EC2 picks its zone and instance type."
        ]
    if source == GCP_SOURCE:
        return [
            f"GKE starts nodes in {cloud_id} for pods that select it (node auto-provisioning), "
            f"or in a node pool created with --reservation-affinity=specific "
            f"--reservation={cloud_id}."
        ]
    return [
        "How the cloud starts this reservation's nodes is not in the snapshot: start them "
        "from the reservation itself, then the pods below land on them."
    ]


def reservation_named(cluster: Cluster, name: str) -> Reservation | None:
    return next((r for r in cluster.reservations if r.name == name), None)
