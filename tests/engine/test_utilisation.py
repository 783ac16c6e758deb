"""Allocated but idle from DCGM series: figures worked out by hand.

The window is [T0, T0 + 4 h) at a 10-minute step (24 points); a point at t stands for
[t, t + 10 min). Labels are the ones dcgm-exporter writes (render_metrics.go's
gpuMetricsFormat; pod/namespace/container in Kubernetes mode).
"""

from datetime import UTC, datetime, timedelta

import pytest

from reservations.utilisation.dcgm import (
    ENGINE_ACTIVE,
    FB_USED,
    GPU_UTIL,
    DcgmSeries,
    UtilisationSettings,
    measure,
    p95,
    report_json,
    series_from_matrix,
)
from tests.builders import make_node, make_pod, make_reservation
from topology.model.hardware import (
    Cluster,
    ModelError,
)

T0 = datetime(2026, 12, 1, tzinfo=UTC)
END = T0 + timedelta(hours=4)
STEP = 600.0
HOUR = UtilisationSettings(idle_below_percent=5.0, idle_for_seconds=3600.0)


# 64-cpu nodes of GPUs no device carries (DCGM reads the GPUs only)
GPU_NODE = make_node().allocatable(64, "256Gi", 110).gpus(0, devices=False)


CLUSTER = Cluster(
    "c",
    nodes=(
        GPU_NODE.named("gpu-a").gpus(2).price(20.0).build(),
        GPU_NODE.named("gpu-b").gpus(1).build(),
        GPU_NODE.named("gpu-c").gpus(1).build(),
    ),
    pods=(
        make_pod("notebook", "ml").gpus(1).on("gpu-a").build(),
        make_pod("trainer", "ml").gpus(1).on("gpu-a").build(),
        make_pod("infer", "web").gpus(1).on("gpu-b").build(),
        make_pod("unseen", "web").gpus(1).on("gpu-c").build(),
    ),
    reservations=(
        make_reservation("r", "web").nodes("gpu-b").start(T0).price_per_gpu_hour(2.5).build(),
    ),
)


def labels(host: str, gpu: str, pod: str = "", namespace: str = "", **extra: str) -> dict:
    return {
        "gpu": gpu,
        "UUID": f"GPU-{host}-{gpu}",
        "pci_bus_id": f"00000000:{gpu:0>2}:00.0",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA H100 80GB HBM3",
        "Hostname": host,
        "container": "main" if pod else "",
        "namespace": namespace,
        "pod": pod,
        **extra,
    }


def points(values: list[float], first: datetime = T0) -> tuple[tuple[float, float], ...]:
    return tuple((first.timestamp() + i * STEP, v) for i, v in enumerate(values))


def run(*series: DcgmSeries, settings: UtilisationSettings = HOUR):  # type: ignore[no-untyped-def]
    return measure(CLUSTER, series, start=T0, end=END, step_seconds=STEP, settings=settings)


def util(host: str, gpu: str, values: list[float], pod: str = "", ns: str = "", **kw):  # type: ignore[no-untyped-def]
    first = kw.pop("first", T0)
    return DcgmSeries(GPU_UTIL, labels(host, gpu, pod, ns, **kw), points(values, first))


def test_it_counts_an_allocated_gpu_below_the_threshold_for_an_hour_as_idle() -> None:
    report = run(util("gpu-a", "0", [0.0] * 24, "notebook", "ml"))
    # 24 points x 10 min = 4 h idle; gpu-a costs 20/h over 2 GPUs = 10 per GPU-hour
    gpu = report.gpus[0]
    assert (gpu.idle_gpu_hours, gpu.idle_cost) == (4.0, 40.0)


def test_it_does_not_count_an_idle_run_shorter_than_the_setting() -> None:
    # 5 idle points = 50 min < 1 h, then busy
    report = run(util("gpu-a", "0", [1.0] * 5 + [80.0] * 19, "notebook", "ml"))
    assert report.idle_gpu_hours == 0.0


def test_it_counts_a_run_of_exactly_the_setting() -> None:
    # 6 idle points = [T0, T0 + 60 min): exactly 1 h
    report = run(util("gpu-a", "0", [80.0] * 6 + [1.0] * 6 + [80.0] * 12, "notebook", "ml"))
    assert report.idle_gpu_hours == 1.0


def test_it_lengthens_a_run_with_look_back_points_but_counts_only_the_window() -> None:
    # idle from T0 - 50 min to T0 + 20 min (7 points, 70 min >= 1 h), busy after:
    # only [T0, T0 + 20 min) is in the window = 1/3 h
    values = [1.0] * 7 + [90.0] * 22
    report = run(util("gpu-a", "0", values, "notebook", "ml", first=T0 - timedelta(minutes=50)))
    assert report.idle_gpu_hours == pytest.approx(1 / 3, abs=1e-6)


def test_it_breaks_a_run_at_a_gap_in_the_series() -> None:
    # 4 idle points, a 30-minute hole (scrapes lost), 4 idle points: two 40-min runs
    series = DcgmSeries(
        GPU_UTIL,
        labels("gpu-a", "0", "notebook", "ml"),
        points([0.0] * 4) + points([0.0] * 4, T0 + timedelta(minutes=70)),
    )
    assert run(series).idle_gpu_hours == 0.0


def test_it_breaks_a_run_when_another_pod_takes_the_gpu() -> None:
    first = util("gpu-a", "0", [0.0] * 4, "notebook", "ml")
    second = util("gpu-a", "0", [0.0] * 4, "trainer", "ml", first=T0 + timedelta(minutes=40))
    # 40 min for each pod: neither reaches 1 h
    assert run(first, second).idle_gpu_hours == 0.0


def test_it_does_not_count_a_gpu_no_pod_holds() -> None:
    report = run(util("gpu-a", "1", [0.0] * 24))
    assert (report.idle_gpu_hours, report.gpus[0].activity_mean_percent) == (0.0, 0.0)


def test_it_prefers_engine_activity_over_gpu_util() -> None:
    # GPU_UTIL says 50 % (a kernel is resident), the engine is active 2 % of the time
    busy_util = util("gpu-a", "0", [50.0] * 24, "notebook", "ml")
    engine = DcgmSeries(ENGINE_ACTIVE, labels("gpu-a", "0", "notebook", "ml"), points([0.02] * 24))
    gpu = run(busy_util, engine).gpus[0]
    assert (gpu.activity_source, gpu.activity_mean_percent, gpu.idle_gpu_hours) == (
        ENGINE_ACTIVE,
        2.0,
        4.0,
    )


def test_it_prices_a_reserved_gpu_at_the_reservation_rate() -> None:
    report = run(util("gpu-b", "0", [0.0] * 12 + [70.0] * 12, "infer", "web"))
    # 2 h idle x 2.5 per GPU-hour of reservation r
    assert (report.gpus[0].idle_gpu_hours, report.gpus[0].idle_cost) == (2.0, 5.0)


def test_it_leaves_the_cost_unknown_when_the_gpu_has_no_price() -> None:
    report = run(util("gpu-c", "0", [0.0] * 24, "unseen", "web"))
    assert (report.gpus[0].idle_cost, report.idle_cost, report.unpriced_idle_gpu_hours) == (
        None,
        0.0,
        4.0,
    )


def test_it_counts_a_mig_instance_by_its_share_of_the_gpu() -> None:
    cluster = Cluster(
        "c", nodes=(GPU_NODE.named("gpu-m").gpus(1, "NVIDIA-A100-SXM4-80GB").price(8.0).build(),)
    )
    mig = DcgmSeries(
        ENGINE_ACTIVE,
        labels("gpu-m", "0", "notebook", "ml", GPU_I_PROFILE="3g.40gb", GPU_I_ID="2"),
        points([0.0] * 24),
    )
    report = measure(cluster, [mig], start=T0, end=END, step_seconds=STEP, settings=HOUR)
    # 3g.40gb: 3 of 7 compute, 4 of 8 memory slices -> the larger, 1/2 of the GPU;
    # 4 h x 1/2 = 2 GPU-hours x 8 per GPU-hour = 16
    gpu = report.gpus[0]
    assert (gpu.instance, gpu.share, gpu.idle_gpu_hours, gpu.idle_cost) == ("2", 0.5, 2.0, 16.0)


def test_it_says_unknown_not_zero_for_a_pod_without_series() -> None:
    report = run(util("gpu-a", "0", [30.0] * 24, "notebook", "ml"))
    unseen = next(pod for pod in report.pods if pod.name == "unseen")
    assert (unseen.activity_mean_percent, unseen.gpus, unseen.in_snapshot) == (None, 1.0, True)


def test_it_states_coverage_as_gpus_with_data_of_all() -> None:
    report = run(util("gpu-a", "0", [30.0] * 24, "notebook", "ml"), util("gpu-b", "0", [9.0] * 24))
    assert report.coverage == "2 of 4 GPUs have utilisation data"


def test_it_lists_a_series_of_a_node_the_snapshot_lacks() -> None:
    report = run(util("gpu-z", "3", [0.0] * 24, "x", "ml"))
    assert report.unmatched == ("Hostname=gpu-z gpu=3: no such node in the snapshot",)


def test_it_gives_mean_and_p95_of_activity_and_memory() -> None:
    activity = util("gpu-a", "0", [float(v) for v in range(1, 25)], "notebook", "ml")
    memory = DcgmSeries(
        FB_USED, labels("gpu-a", "0", "notebook", "ml"), points([1000.0] * 23 + [80000.0])
    )
    gpu = run(activity, memory).gpus[0]
    # 1..24: mean 12.5; nearest rank ceil(0.95 x 24) = 23 -> 23. Memory: p95 is the 23rd
    # of 23 x 1000 and one 80000 = 1000; mean (23 x 1000 + 80000) / 24 = 4291.667
    assert (
        gpu.activity_mean_percent,
        gpu.activity_p95_percent,
        gpu.memory_p95_mib,
        gpu.memory_mean_mib,
    ) == (12.5, 23.0, 1000.0, 4291.667)


def test_it_sums_idle_gpu_hours_and_cost_per_team() -> None:
    report = run(
        util("gpu-a", "0", [0.0] * 24, "notebook", "ml"),
        util("gpu-a", "1", [0.0] * 12 + [60.0] * 12, "trainer", "ml"),
    )
    ml = next(team for team in report.teams if team.team == "ml")
    # 4 h + 2 h at 10 per GPU-hour
    assert (ml.pods, ml.idle_gpu_hours, ml.idle_cost) == (2, 6.0, 60.0)


def test_it_marks_a_gpu_idle_now_when_its_last_point_ends_a_long_run() -> None:
    report = run(
        util("gpu-a", "0", [60.0] * 12 + [0.0] * 12, "notebook", "ml"),
        util("gpu-a", "1", [0.0] * 12 + [60.0] * 12, "trainer", "ml"),
    )
    assert (report.idle_gpus_now, report.idle_cost_per_hour_now) == (1.0, 10.0)


def test_it_serialises_unknown_as_null() -> None:
    data = report_json(run())
    unseen = next(pod for pod in data["pods"] if pod["pod"] == "unseen")
    assert (unseen["activity_mean_percent"], data["coverage"]) == (
        None,
        "0 of 4 GPUs have utilisation data",
    )


def test_it_nearest_rank_p95_of_one_value_is_that_value() -> None:
    assert p95([7.0]) == 7.0


def test_it_reads_a_prometheus_matrix_and_drops_nan_points() -> None:
    payload = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": GPU_UTIL, "gpu": "0", "Hostname": "gpu-a"},
                    "values": [[1764547200, "3"], [1764547260, "NaN"]],
                }
            ],
        },
    }
    (series,) = series_from_matrix(payload, source="q")
    assert (series.metric, series.samples) == (GPU_UTIL, ((1764547200.0, 3.0),))


def test_it_rejects_a_prometheus_error_naming_the_query() -> None:
    payload = {"status": "error", "errorType": "bad_data", "error": "parse error"}
    with pytest.raises(ModelError, match="^DCGM_FI_DEV_GPU_UTIL: status: parse error$"):
        series_from_matrix(payload, source=GPU_UTIL)


def test_it_reads_the_holder_from_exported_labels_when_the_scrape_renamed_them() -> None:
    # honor_labels false: the exporter pod's own labels win, the GPU's holder is exported_*
    renamed = labels("gpu-a", "0", "dcgm-exporter-x7k2p", "gpu-operator")
    renamed.update(exported_pod="notebook", exported_namespace="ml")
    report = run(DcgmSeries(GPU_UTIL, renamed, points([0.0] * 24)))
    assert report.gpus[0].pods == ("ml/notebook",)


def test_it_names_a_gang_members_workload_by_its_gang() -> None:
    member = make_pod("job-0", "ml").gpus(1).on("gpu-a").gang("ml/job").build()
    cluster = Cluster(
        "c", nodes=(GPU_NODE.named("gpu-a").gpus(2).price(20.0).build(),), pods=(member,)
    )
    report = measure(cluster, [], start=T0, end=END, step_seconds=STEP, settings=HOUR)
    assert [(pod.name, pod.workload) for pod in report.pods] == [("job-0", "ml/job")]


def test_it_sums_a_teams_known_cost_and_states_its_unpriced_hours_apart() -> None:
    report = run(
        util("gpu-b", "0", [0.0] * 24, "infer", "web"),
        util("gpu-c", "0", [0.0] * 24, "unseen", "web"),
    )
    web = next(team for team in report.teams if team.team == "web")
    # infer: 4 h x 2.5 (reservation r) = 10; unseen: 4 h on gpu-c, no price
    assert (web.idle_gpu_hours, web.idle_cost, web.unpriced_idle_gpu_hours) == (8.0, 10.0, 4.0)


def test_it_finds_a_node_by_its_hostname_label_when_the_name_differs() -> None:
    named = (
        make_node("ip-10-0-1-7.ec2.internal")
        .label("kubernetes.io/hostname", "ip-10-0-1-7")
        .gpus(1, devices=False)
        .price(4.0)
        .build()
    )
    cluster = Cluster("c", nodes=(named,))
    report = measure(
        cluster, [util("ip-10-0-1-7", "0", [50.0] * 24)], start=T0, end=END, step_seconds=STEP
    )
    assert (report.gpus[0].node, report.unmatched) == ("ip-10-0-1-7.ec2.internal", ())
