"""Property: for random nodes and volumes, the engine's verdict per node equals
VolumeZone's and VolumeBinding's (bound PV nodeAffinity) as upstream writes them.

The oracle below is a direct transcription of kube-scheduler's code, not of ours:
``volumezone/volume_zone.go`` Filter (skip a node with none of the four zone/region
labels; each PV label must be matched by the node's label of the same key, a beta
key falling back to the node's GA label; ``a__b`` is a set) and
``component-helpers/storage/volume`` CheckNodeAffinity (the PV's required terms
ORed, each term's expressions ANDed).
"""

from typing import Any

from hypothesis import given, settings, strategies as st

from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import as_dicts, node_object, pod_object, pv_object, pvc_object
from topology.kube.parse import parse_objects

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}
VALUES = ("a", "b", "c")

label_maps = st.dictionaries(st.sampled_from(TOPOLOGY_LABELS), st.sampled_from(VALUES), max_size=3)
pv_label_maps = st.dictionaries(
    st.sampled_from(TOPOLOGY_LABELS),
    st.lists(st.sampled_from(VALUES), min_size=1, max_size=2, unique=True).map("__".join),
    max_size=2,
)
expressions = st.fixed_dictionaries(
    {
        "key": st.sampled_from((ZONE, REGION)),
        "operator": st.sampled_from(("In", "NotIn")),
        "values": st.lists(st.sampled_from(VALUES), min_size=1, max_size=2, unique=True),
    }
)
terms = st.lists(
    st.fixed_dictionaries({"matchExpressions": st.lists(expressions, min_size=1, max_size=2)}),
    min_size=1,
    max_size=2,
)


def volume_zone_fits(pv_labels: dict[str, str], node_labels: dict[str, str]) -> bool:
    if not any(key in node_labels for key in TOPOLOGY_LABELS):
        return True
    for key in TOPOLOGY_LABELS:
        if key not in pv_labels:
            continue
        allowed = set(pv_labels[key].split("__"))
        value = node_labels.get(key, node_labels.get(GA.get(key, key)))
        if value is None or value not in allowed:
            return False
    return True


def node_affinity_fits(node_terms: list[dict[str, Any]] | None, labels: dict[str, str]) -> bool:
    if node_terms is None:
        return True

    def matches(expression: dict[str, Any]) -> bool:
        value = labels.get(expression["key"])
        if expression["operator"] == "In":
            return value is not None and value in expression["values"]
        return value is None or value not in expression["values"]

    return any(all(matches(e) for e in term["matchExpressions"]) for term in node_terms)


# a node of 2 cpu; the claim ns/c, bound to the volume pv; a pending pod of one cpu using it
NODE = node_object("").allocatable(cpu="2", memory="1Gi", pods="4")
CLAIM = pvc_object("ns", "c").annotation("pv.kubernetes.io/bind-completed", "yes")
POD = pod_object("ns", "").volume_claim("c", "d").requests(cpu="1")


def objects(
    nodes: list[dict[str, str]], pv_labels: dict[str, str], node_terms: list[Any] | None
) -> list[dict[str, Any]]:
    volume = pv_object("pv").labels(pv_labels).spec(claimRef={"namespace": "ns", "name": "c"})
    if node_terms is not None:
        volume = volume.spec(nodeAffinity={"required": {"nodeSelectorTerms": node_terms}})
    found = [NODE.named(f"n{i}").labels(labels) for i, labels in enumerate(nodes)]
    return as_dicts(*found, volume, CLAIM.spec(volumeName="pv"))


@settings(max_examples=300, deadline=None)
@given(
    node_labels=st.lists(label_maps, min_size=1, max_size=4),
    pv_labels=pv_label_maps,
    node_terms=st.one_of(st.none(), terms),
)
def test_every_node_the_engine_accepts_is_one_kube_scheduler_accepts(
    node_labels: list[dict[str, str]], pv_labels: dict[str, str], node_terms: list[Any] | None
) -> None:
    feasible = {
        f"n{i}"
        for i, labels in enumerate(node_labels)
        if volume_zone_fits(pv_labels, labels) and node_affinity_fits(node_terms, labels)
    }
    # one pending pod per node (each asks for 1 of a node's 2 cpu: at most 2 per node)
    pods = as_dicts(*(POD.named(f"p{i}") for i in range(len(node_labels))))
    snapshot = parse_objects(
        [("in.yaml", o) for o in objects(node_labels, pv_labels, node_terms) + pods],
        cluster_name="t",
    )
    assert snapshot.errors == ()
    cluster = snapshot.cluster
    result = place(cluster, pending_workloads(cluster), options=PlacementOptions())
    used = {b.node for o in result.outcomes for b in o.bindings}
    assert used <= feasible  # every placement passes the upstream filters
    placed = sum(o.placed for o in result.outcomes)
    assert placed == min(len(pods), 2 * len(feasible))  # and none is refused where it fits
