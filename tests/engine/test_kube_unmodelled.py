"""Pod fields that change scheduling but are not modelled are never dropped silently:
filters become blocking ``unsupported`` reasons, scores are listed as score only."""

from datetime import UTC, datetime

from recommender.engine.evaluate.evaluation import evaluate
from tests.builders.objects import GPU, as_dicts, node_object, pod_object
from topology.kube.core.podspec import EPHEMERAL_REASON
from topology.kube.parse import parse_objects
from topology.model.hardware import SCORE_ONLY, HostPort

AT = datetime(2026, 12, 2, tzinfo=UTC)
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}


WEB = pod_object("ml", "p").label("app", "web").requests({GPU: "1"})
GPU_NODE = node_object("n1").hostname().allocatable(cpu="8", memory="64Gi").gpus(8)


def parse(*objects):
    return parse_objects([("in.yaml", o) for o in as_dicts(*objects)], cluster_name="t")


def test_it_leaves_required_pod_affinity_terms_to_the_model_not_to_unsupported():
    # required (anti-)affinity is modelled (topology.kube.core.podaffinity, scheduler.interpod)
    for kind in ("podAffinity", "podAntiAffinity"):
        cluster = parse(WEB.pod_spec(affinity={kind: {REQUIRED: [TERM]}})).cluster
        assert cluster.pods[0].unsupported == ()
        assert cluster.unsupported == ()
        assert cluster.pods[0].pod_terms != parse(WEB).cluster.pods[0].pod_terms


def test_it_lists_preferred_terms_as_score_only_without_blocking():
    weighted = [{"weight": 10, "podAffinityTerm": TERM}]
    node_pref = [{"weight": 1, "preference": {"matchExpressions": []}}]
    spec_affinity = {
        "podAffinity": {PREFERRED: weighted},
        "podAntiAffinity": {PREFERRED: weighted},
        "nodeAffinity": {PREFERRED: node_pref},
    }
    cluster = parse(WEB.pod_spec(affinity=spec_affinity)).cluster
    assert cluster.pods[0].unsupported == ()
    assert [(u.field, u.reason, u.blocking) for u in cluster.unsupported] == [
        (f"spec.affinity.nodeAffinity.{PREFERRED}", SCORE_ONLY, False),
        (f"spec.affinity.podAffinity.{PREFERRED}", SCORE_ONLY, False),
        (f"spec.affinity.podAntiAffinity.{PREFERRED}", SCORE_ONLY, False),
    ]


def test_it_models_do_not_schedule_spread_and_lists_schedule_anyway():
    constraints = [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
    ]
    cluster = parse(WEB.pod_spec(topologySpreadConstraints=constraints)).cluster
    assert cluster.pods[0].unsupported == ()
    assert [(u.field, u.blocking) for u in cluster.unsupported] == [
        ("spec.topologySpreadConstraints[0]", False),
    ]


def test_it_reads_host_ports_as_node_ports_does_and_blocks_nothing_for_them():
    ports = [
        {"containerPort": 80},
        {"containerPort": 8080, "hostPort": 8080},
        {"containerPort": 53, "hostPort": 53, "hostIP": "10.0.0.1", "protocol": "UDP"},
    ]
    sidecar = {"name": "s", "restartPolicy": "Always", "ports": [{"hostPort": 9100}]}
    cluster = parse(
        WEB.pod_spec(containers=[{"name": "c", "ports": ports}], initContainers=[sidecar])
    ).cluster
    assert cluster.pods[0].unsupported == () and cluster.unsupported == ()
    # sidecars first, then containers (upstream GetHostPorts); defaults 0.0.0.0 and TCP
    assert cluster.pods[0].host_ports == (
        HostPort("0.0.0.0", "TCP", 9100),
        HostPort("0.0.0.0", "TCP", 8080),
        HostPort("10.0.0.1", "UDP", 53),
    )


def test_it_keeps_a_plain_pod_free_of_unsupported_fields():
    assert parse(WEB).cluster.unsupported == ()


def test_it_counts_kinds_it_does_not_model_on_the_cluster_and_in_the_json():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "ml"}}
    cluster = parse(GPU_NODE, namespace, service, service | {"metadata": {"name": "t"}}).cluster
    # Namespaces are read (namespaceSelector of inter-pod terms): not ignored
    assert cluster.ignored == {"Service (v1)": 2}
    document = evaluate(cluster, at=AT).to_json()
    assert document["ignored"] == [{"kind": "Service", "apiVersion": "v1", "count": 2}]


def test_it_reports_a_blocked_unsupported_pod_and_its_field_in_the_json():
    volumes = [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]
    cluster = parse(GPU_NODE, WEB.pod_spec(volumes=volumes)).cluster
    document = evaluate(cluster, at=AT).to_json()
    (workload,) = document["workloads"]
    assert workload["verdict"] == "blocked"
    assert workload["reasons"] == [f"unsupported: {EPHEMERAL_REASON}"]
    assert workload["naive"]["addNodes"] == {} and workload["joint"]["addNodes"] == {}
    assert document["unsupported"] == [
        {"object": "Pod/ml/p", "field": "spec.volumes[0].ephemeral", "reason": EPHEMERAL_REASON}
    ]


def test_it_reports_an_unknown_preferred_level_as_kueue_would():
    annotated = WEB.annotation("kueue.x-k8s.io/podset-preferred-topology", "x/rack")
    document = evaluate(parse(GPU_NODE, annotated).cluster, at=AT).to_json()
    (workload,) = document["workloads"]
    assert workload["verdict"] == "blocked"
    assert workload["reasons"][0].startswith(
        "preferred topology x/rack is not a level of the cluster's Topology"
    )


def test_it_leaves_init_container_host_ports_alone_as_node_ports_does():
    init = [{"name": "i", "ports": [{"containerPort": 80, "hostPort": 80}]}]
    cluster = parse(WEB.pod_spec(initContainers=init)).cluster
    assert cluster.pods[0].unsupported == () and cluster.unsupported == ()
    assert cluster.pods[0].host_ports == ()  # a plain init container has exited by then


def test_it_blocks_inline_disks_whose_conflicts_volume_restrictions_checks():
    volumes = [
        {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}},
        {"name": "e", "emptyDir": {}},
    ]
    cluster = parse(WEB.pod_spec(volumes=volumes)).cluster
    assert cluster.pods[0].unsupported == (
        "inline awsElasticBlockStore volume (VolumeRestrictions disk conflict) is not modelled",
    )
    assert [u.field for u in cluster.unsupported] == ["spec.volumes[0].awsElasticBlockStore"]
