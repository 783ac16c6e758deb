"""cluster-autoscaler waits for young pods (``core/static_autoscaler.go``
``filterOutYoungPods``; ``--new-pod-scale-up-delay`` default 0s in ``flags.go``; the pod
annotation ``cluster-autoscaler.kubernetes.io/pod-scale-up-delay``), by hand."""

from datetime import timedelta

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.young import go_duration_seconds, scale_up_delay
from tests.builders import make_group
from tests.engine.test_cluster_autoscaler import AT, MACHINE, ML_POD, naive
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster

CREATED = (AT - timedelta(minutes=5)).timestamp()  # 300 s before the evaluation


def young_cluster(delay: str | None) -> Cluster:
    p = ML_POD.named("p").requests(4, "1Gi").arrival(CREATED).set(scale_up_delay=delay).build()
    return Cluster(
        "c",
        pods=(p,),
        node_groups=(
            make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build(),
        ),
    )


def test_a_pod_younger_than_its_annotated_delay_gets_no_scale_up() -> None:
    # 300 s old, annotation 10m = 600 s: podAge > podScaleUpDelay is false -> left out
    plan = naive(young_cluster("10m"))
    assert plan.additions == ()
    assert "not more than its scale-up delay of 600s" in plan.outcomes["ml/p"].reasons[0]


def test_a_pod_older_than_its_delay_scales_up() -> None:
    # 300 s > 4m (240 s): scaled up for, one 8-cpu node
    assert sum(a.count for a in naive(young_cluster("4m")).additions) == 1


def test_an_annotation_below_the_flag_is_ignored() -> None:
    # flag 10m, annotation 1m: "less than newPodScaleUpDelay" -> the flag's 600 s stays
    settings = parse_flags(["--new-pod-scale-up-delay=10m"]).settings
    assert settings.new_pod_scale_up_delay_seconds == 600
    young = ML_POD.named("p").requests(4, "1Gi").set(scale_up_delay="1m").build()
    assert scale_up_delay(young, settings) == 600
    assert naive(young_cluster("1m"), settings).additions == ()


def test_an_unparsable_annotation_keeps_the_flags_delay() -> None:
    # time.ParseDuration("ten minutes") fails: logged, the flag's 0s is kept
    assert go_duration_seconds("ten minutes") is None
    assert (
        scale_up_delay(
            ML_POD.named("p").requests(1, "1Gi").set(scale_up_delay="ten minutes").build(),
            CaSettings(),
        )
        == 0
    )
    assert go_duration_seconds("1h30m") == 5400


def test_the_annotation_is_read_from_the_pod(tmp_path) -> None:  # type: ignore[no-untyped-def]
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n"
        "  annotations: {cluster-autoscaler.kubernetes.io/pod-scale-up-delay: 2m}\n"
        "spec: {containers: [{name: c}]}\nstatus: {phase: Pending}\n"
    )
    snapshot = parse_objects(read_objects(manifest), cluster_name="t")
    (parsed,) = snapshot.cluster.pods
    assert parsed.scale_up_delay == "2m"
