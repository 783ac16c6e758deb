"""parse_objects never raises: whatever the dicts hold, bad ones become errors."""

from hypothesis import given, settings, strategies as st

from topology.kube.parse import parse_objects
from topology.model.hardware import Snapshot

KINDS = [
    "Node",
    "Pod",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceClass",
    "PodGroup",
    "Workload",
    "Topology",
    "NodeGroup",
    "Reservation",
    "List",
    "Other",
]
API_VERSIONS = [
    "v1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta1",
    "scheduling.x-k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "capacityweb.io/v1alpha1",
    "kueue.x-k8s.io/v1beta2",
]
FIELD_NAMES = [
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "labels",
    "containers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "nvidia.com/gpu",
    "devices",
    "nodeName",
    "driver",
    "attributes",
    "capacity",
    "value",
    "string",
    "int",
    "taints",
    "effect",
    "affinity",
    "nodeSelector",
    "tolerations",
    "resourceClaims",
    "minMember",
    "template",
    "allocatable",
    "owner",
    "namespaces",
    "nodeNames",
    "start",
    "end",
    "levels",
    "nodeLabel",
    "exactly",
    "selectors",
    "cel",
    "expression",
    "basic",
    "phase",
    "consumesCounters",
    "sharedCounters",
    "counters",
    "minSize",
    "maxSize",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["1Gi", "500m", "2", "-1", "1e999", "In", "Exists"]),
)
json_like = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=6)), children, max_size=5
        ),
    ),
    max_leaves=30,
)
objects = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS), "apiVersion": st.sampled_from(API_VERSIONS)},
    optional={
        "metadata": st.one_of(json_like, st.fixed_dictionaries({"name": st.text(max_size=5)})),
        "spec": json_like,
        "status": json_like,
    },
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(objects, json_like), max_size=6))
def test_it_never_raises_on_arbitrary_objects(items):
    snapshot = parse_objects([("fuzz", item) for item in items], cluster_name="fuzz")
    assert isinstance(snapshot, Snapshot)
    assert all(error.source == "fuzz" for error in snapshot.errors)
