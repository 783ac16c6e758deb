"""The utilisation layer's figure: one cell per GPU, grey for unknown, a cross for idle now."""

from datetime import UTC, datetime, timedelta

from reservations.utilisation.charts import UNKNOWN_Z, colourscale, utilisation_figure
from reservations.utilisation.dcgm import GPU_UTIL, DcgmSeries, measure, report_json
from topology.model.hardware import Cluster, Gpu, GpuRequest, Node, Pod

T0 = datetime(2026, 12, 1, tzinfo=UTC)
STEP = 600.0
CLUSTER = Cluster(
    "c",
    nodes=(
        Node("a", gpus=(Gpu("gpu-0"), Gpu("gpu-1")), price_per_node_hour=20.0),
        Node("b", gpus=(Gpu("gpu-0"),)),
    ),
    pods=(Pod("ml", "nb", gpu=GpuRequest(1), node_name="b"),),
)


def series(host: str, gpu: str, value: float, pod: str = "") -> DcgmSeries:
    labels = {"Hostname": host, "gpu": gpu, "pod": pod, "namespace": "ml" if pod else ""}
    return DcgmSeries(
        GPU_UTIL, labels, tuple((T0.timestamp() + i * STEP, value) for i in range(12))
    )


def figure() -> dict:
    report = measure(
        CLUSTER,
        [series("a", "0", 80.0), series("b", "0", 0.0, "nb")],
        start=T0,
        end=T0 + timedelta(hours=2),
        step_seconds=STEP,
    )
    return utilisation_figure(report_json(report))


def test_it_puts_the_node_with_idle_hours_first_and_greys_the_gpu_without_data() -> None:
    heatmap = figure()["data"][0]
    # b: its GPU idle 2 h (0 %); a: gpu-0 at 80 %, gpu-1 without series (unknown)
    assert (heatmap["y"], heatmap["x"], heatmap["z"]) == (
        ["b", "a"],
        ["gpu-0", "gpu-1"],
        [[0.0, None], [80.0, UNKNOWN_Z]],
    )


def test_it_crosses_the_gpu_allocated_but_idle_now() -> None:
    crosses = figure()["data"][1]
    assert (crosses["x"], crosses["y"]) == (["gpu-0"], ["b"])


def test_it_keeps_grey_for_the_unknown_sentinel_only() -> None:
    scale = colourscale()
    # unknown (-10) sits at 0; 0 % at 10/110 is already vermillion
    assert (scale[0][1], scale[2]) == ("#BBBBBB", [10 / 110, "#D55E00"])
