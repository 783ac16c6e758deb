"""A cluster's Prometheus source, end to end against a real Prometheus.

Prometheus scrapes the stand-in dcgm-exporter (fixtures/dcgm-exporter-metrics.txt)
every second; the measurement runs the real range queries, the joins and the
window maths. Step 1 s, idle after 3 s, a 4 s window: [end - 4 s, end), queried from
end - 7 s (the look-back) to end - 1 s (the last point stands for [end - 1 s, end)).
Prices: dgx-1 40/h over 4 GPUs = 10 per GPU-hour; dgx-2 8/h for its one GPU.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from reservations import tasks
from reservations.models import PrometheusSource, UtilisationReport
from reservations.utilisation.dcgm import ENGINE_ACTIVE
from reservations.utilisation.services import measure_cluster
from tests.servers import free_port
from tests.utilisation.prometheus_server import RunningPrometheus, prometheus_scraping_dcgm
from topology.model.hardware import Cluster as Model, Gpu, GpuRequest, Node, Pod
from topology.model.serialize import cluster_to_json
from topology.models import Cluster, Snapshot

WINDOW, IDLE_FOR = 4, 3
H100, A100 = "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"
MODEL = Model(
    "dgx",
    nodes=(
        Node(
            "dgx-1", gpus=tuple(Gpu(f"gpu-{i}", H100) for i in range(4)), price_per_node_hour=40.0
        ),
        Node("dgx-2", gpus=(Gpu("gpu-0", A100),), price_per_node_hour=8.0),
    ),
    pods=(
        Pod("ml", "notebook-0", gpu=GpuRequest(1), node_name="dgx-1"),
        Pod("ml", "trainer-0", gpu=GpuRequest(1), node_name="dgx-1"),
        Pod("ml", "ghost-0", gpu=GpuRequest(1), node_name="dgx-1"),
        Pod("web", "infer-0", gpu=GpuRequest(1, milli_per_gpu=500), node_name="dgx-2"),
    ),
)


@pytest.fixture(scope="module")
def prometheus() -> Iterator[RunningPrometheus]:
    with prometheus_scraping_dcgm() as running:
        # enough scrapes for the look-back and the window, plus a margin
        while time.time() < running.first_scrape + IDLE_FOR + WINDOW + 3:
            time.sleep(0.2)
        yield running


@pytest.fixture
def short_windows(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UTILISATION_STEP_SECONDS = 1
    settings.UTILISATION_IDLE_FOR_SECONDS = IDLE_FOR
    settings.UTILISATION_WINDOW_SECONDS = WINDOW
    settings.UTILISATION_IDLE_BELOW_PERCENT = 5.0


def cluster_with_source(url: str) -> Cluster:
    cluster = Cluster.objects.create(name="dgx", source_kind=Cluster.SourceKind.FILES)
    Snapshot.objects.create(
        cluster=cluster,
        taken_at=datetime.now(UTC),
        content_hash="dgx",
        model_json=cluster_to_json(MODEL),
    )
    PrometheusSource.objects.create(cluster=cluster, url=url, query_timeout_seconds=5)
    return cluster


def measured(prometheus: RunningPrometheus) -> UtilisationReport:
    report = measure_cluster(cluster=cluster_with_source(prometheus.url), now=datetime.now(UTC))
    assert report is not None and report.error == ""
    return report


def pod_row(report: UtilisationReport, name: str) -> dict:
    return next(pod for pod in report.result["pods"] if pod["pod"] == name)


@pytest.mark.django_db
def test_it_prices_the_idle_notebook_from_real_promql(prometheus, short_windows) -> None:
    notebook = pod_row(measured(prometheus), "notebook-0")
    # 0 % for the whole 4 s window: 4/3600 GPU-hours x 10 per GPU-hour
    assert (notebook["idle_gpu_hours"], notebook["idle_cost"]) == (
        round(4 / 3600, 6),
        round(4 / 3600 * 10, 6),
    )


@pytest.mark.django_db
def test_it_counts_the_mig_instance_by_its_share(prometheus, short_windows) -> None:
    infer = pod_row(measured(prometheus), "infer-0")
    # 1 % engine activity, 3g.40gb = 1/2 of the A100: 4/3600 x 0.5 GPU-hours x 8
    assert (infer["gpus"], infer["idle_gpu_hours"], infer["idle_cost"]) == (
        0.5,
        round(2 / 3600, 6),
        round(2 / 3600 * 8, 6),
    )


@pytest.mark.django_db
def test_it_reads_the_busy_trainer_from_engine_activity(prometheus, short_windows) -> None:
    report = measured(prometheus)
    trainer = pod_row(report, "trainer-0")
    gpu = next(g for g in report.result["gpus"] if g["pods"] == ["ml/trainer-0"])
    # engine active 0.82 -> 82 % (preferred over GPU_UTIL's 87), 60 GiB of framebuffer
    assert (
        trainer["activity_mean_percent"],
        trainer["memory_mean_mib"],
        trainer["idle_gpu_hours"],
    ) == (
        82.0,
        61440.0,
        0.0,
    )
    assert gpu["activity_source"] == ENGINE_ACTIVE


@pytest.mark.django_db
def test_it_says_unknown_for_the_pod_the_exporter_does_not_report(
    prometheus, short_windows
) -> None:
    report = measured(prometheus)
    assert (pod_row(report, "ghost-0")["activity_mean_percent"], report.result["coverage"]) == (
        None,
        "4 of 5 GPUs have utilisation data",
    )


@pytest.mark.django_db
def test_it_does_not_count_the_gpu_no_pod_holds(prometheus, short_windows) -> None:
    report = measured(prometheus)
    free = next(g for g in report.result["gpus"] if g["node"] == "dgx-1" and g["gpu"] == "gpu-2")
    assert (free["pods"], free["idle_gpu_hours"], report.idle_gpu_hours) == (
        [],
        0.0,
        round(4 / 3600, 6) + round(2 / 3600, 6),
    )


@pytest.mark.django_db
def test_it_starts_the_next_window_where_the_last_ended(prometheus, short_windows) -> None:
    cluster = cluster_with_source(prometheus.url)
    first = measure_cluster(cluster=cluster, now=datetime.now(UTC))
    time.sleep(2.1)
    second = measure_cluster(cluster=cluster, now=datetime.now(UTC))
    assert first is not None and second is not None and second.window_start == first.window_end


@pytest.mark.django_db
def test_it_stores_why_utilisation_is_unknown_when_prometheus_is_down(short_windows) -> None:
    cluster = cluster_with_source(f"http://127.0.0.1:{free_port()}")
    report_id = tasks.measure_cluster_utilisation(cluster.pk)
    report = UtilisationReport.objects.get(pk=report_id)
    assert (
        report.idle_gpu_hours,
        "/api/v1/query_range: DCGM_FI_PROF_GR_ENGINE_ACTIVE" in report.error,
    ) == (
        None,
        True,
    )


@pytest.mark.django_db
def test_it_measures_nothing_for_a_cluster_without_a_source(short_windows) -> None:
    cluster = Cluster.objects.create(name="plain", source_kind=Cluster.SourceKind.FILES)
    assert measure_cluster(cluster=cluster, now=datetime.now(UTC)) is None


@pytest.mark.django_db
def test_it_does_not_store_the_body_of_a_non_prometheus_answer(short_windows) -> None:
    # the stand-in exporter answers 404 with an HTML body to /api/v1/query_range
    with prometheus_scraping_dcgm() as running:
        exporter = running.exporter_url
        report = measure_cluster(cluster=cluster_with_source(exporter), now=datetime.now(UTC))
    assert report is not None and "HTTP 404, not JSON (text/html" in report.error
    assert "<" not in report.error
