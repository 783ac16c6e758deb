"""A cluster with a snapshot and one stored utilisation report, worked out by hand.

The snapshot is taken at the window's end (the latest, which the report joins to).

Model: node n1, 2 GPUs at 20/node-hour (10 per GPU-hour); pods ml/notebook (gpu-0),
ml/trainer (gpu-1), web/ghost (bound, no series). Window [T0, T0 + 2 h), 10-min step:
notebook at 0 % for 2 h = 2 idle GPU-hours, 20.0; trainer at 60 %, not idle.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reservations.models import UtilisationReport
from reservations.utilisation.dcgm import FB_USED, GPU_UTIL, DcgmSeries
from reservations.utilisation.services import store_report
from topology.model.hardware import Cluster as Model, Gpu, GpuRequest, Node, Pod
from topology.model.serialize import cluster_to_json
from topology.models import Cluster, Snapshot

T0 = datetime(2026, 3, 1, tzinfo=UTC)
END = T0 + timedelta(hours=2)
STEP = 600.0
MODEL = Model(
    "prod-gpu",
    nodes=(Node("n1", gpus=(Gpu("gpu-0"), Gpu("gpu-1")), price_per_node_hour=20.0),),
    pods=(
        Pod("ml", "notebook", gpu=GpuRequest(1), node_name="n1"),
        Pod("ml", "trainer", gpu=GpuRequest(1), node_name="n1"),
        Pod("web", "ghost", gpu=GpuRequest(1), node_name="n1"),
    ),
)


def series(gpu: str, pod: str, value: float, metric: str = GPU_UTIL) -> DcgmSeries:
    labels = {"gpu": gpu, "Hostname": "n1", "pod": pod, "namespace": "ml", "container": "c"}
    points = tuple((T0.timestamp() + i * STEP, value) for i in range(12))
    return DcgmSeries(metric, labels, points)


def stored_report(
    cluster: Cluster, *, source: str = UtilisationReport.Source.PROMETHEUS, end: datetime = END
) -> UtilisationReport:
    Snapshot.objects.get_or_create(
        cluster=cluster,
        content_hash=f"utilisation-{end.isoformat()}",
        defaults={"taken_at": end, "model_json": cluster_to_json(MODEL)},
    )
    offset = end - END
    data = [
        series("0", "notebook", 0.0),
        series("1", "trainer", 60.0),
        series("0", "notebook", 2048.0, FB_USED),
    ]
    shifted = [
        DcgmSeries(s.metric, s.labels, tuple((t + offset.total_seconds(), v) for t, v in s.samples))
        for s in data
    ]
    return store_report(
        cluster=cluster,
        series=shifted,
        start=T0 + offset,
        end=end,
        now=end,
        source=source,
        step=STEP,
    )
