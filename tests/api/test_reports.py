"""The idle-reservations and waste reports: figures, grouping, CSV, bad parameters.

Rows (all 2026-03): evaluations e1 03-01 00:00 (naive 10, joint 4, stranded 6 $/h),
e2 03-01 12:00 (2, 2, 0), e3 03-02 00:00 (latest; its heatmap maps ra → h100-pool/H100,
rb → a100-pool/A100). Samples: ra (team-a) e1: 8 reserved, 2 idle, $5/h; e2: 8, 6, $15/h.
rb (team-b, ends 03-01 18:00) e1: 4, 4, $4/h.

Range [03-01 06:00, 03-02 00:00), by hand:
  ra: e1 carries in 06:00→12:00 6 h × 2 = 12 GPU-h, $30; e2 12:00→24:00 12 h × 6 = 72 GPU-h,
      $180 → 84 GPU-h, $210; reserved 8 × 18 h = 144 GPU-h
  rb: clipped at its end 18:00: 12 h × 4 = 48 GPU-h, $48; reserved 48 GPU-h
  waste: 6 h at e1 (60, 24, 36) + 12 h at e2 (24, 24, 0) → naive $84, joint $48,
      stranded $36, savings $36; one evaluation (e2) taken inside the range

Read by staff, who see every reservation; a team member's view of other teams'
reservations is tests/test_visibility.py's.
"""

import pytest
from builders import add_sample, at, make_evaluation, make_reservation

pytestmark = pytest.mark.django_db

RANGE = {"start": "2026-03-01T06:00:00Z", "end": "2026-03-02T00:00:00Z"}
PERIOD_HEADER = "currency,period_start,period_end,period_hours"
PERIOD = "USD,2026-03-01T06:00:00Z,2026-03-02T00:00:00Z,18.0"  # settings.CURRENCY: USD
HEATMAP = [
    {"node": "n1", "gpu": "0", "reservation": "ra", "nodeGroup": "h100-pool", "model": "H100"},
    {"node": "n2", "gpu": "0", "reservation": "rb", "nodeGroup": "a100-pool", "model": "A100"},
]


@pytest.fixture
def samples(cluster):
    e1 = make_evaluation(
        cluster, at(1, 0), naive_cost_per_hour=10, joint_cost_per_hour=4, stranded_cost_per_hour=6
    )
    e2 = make_evaluation(
        cluster, at(1, 12), naive_cost_per_hour=2, joint_cost_per_hour=2, stranded_cost_per_hour=0
    )
    make_evaluation(cluster, at(2, 0), result={"heatmap": HEATMAP})
    ra = make_reservation(cluster, "ra", "team-a", price_per_gpu_hour=2.5)
    rb = make_reservation(cluster, "rb", "team-b", price_per_gpu_hour=1.0, end=at(1, 18))
    add_sample(ra, e1, reserved=8, idle=2, cost_per_hour=5.0)
    add_sample(ra, e2, reserved=8, idle=6, cost_per_hour=15.0)
    add_sample(rb, e1, reserved=4, idle=4, cost_per_hour=4.0)
    return cluster


def idle_rows(client, **params):
    response = client.get("/api/v1/reports/idle-reservations/", {**RANGE, **params})
    assert response.status_code == 200, response.content
    rows = response.json()["rows"]
    return [(row["group"], row["idle_gpu_hours"], row["idle_cost"]) for row in rows]


def test_it_integrates_idle_gpu_hours_and_cost_per_reservation(staff_client, samples):
    assert idle_rows(staff_client) == [("prod-gpu/ra", 84.0, 210.0), ("prod-gpu/rb", 48.0, 48.0)]


def test_it_totals_reserved_and_idle_gpu_hours(staff_client, samples):
    response = staff_client.get("/api/v1/reports/idle-reservations/", RANGE)

    totals = response.json()["totals"]
    assert (totals["reserved_gpu_hours"], totals["idle_gpu_hours"], totals["idle_cost"]) == (
        192.0,
        132.0,
        258.0,
    )


def test_it_groups_idle_cost_by_team(staff_client, samples):
    assert idle_rows(staff_client, group_by="team") == [
        ("team-a", 84.0, 210.0),
        ("team-b", 48.0, 48.0),
    ]


def test_it_groups_idle_cost_by_node_group_of_the_latest_evaluation(staff_client, samples):
    assert idle_rows(staff_client, group_by="node_group") == [
        ("h100-pool", 84.0, 210.0),
        ("a100-pool", 48.0, 48.0),
    ]


def test_it_groups_idle_cost_by_gpu_model(staff_client, samples):
    assert [row[0] for row in idle_rows(staff_client, group_by="gpu_model")] == ["H100", "A100"]


def test_it_serves_the_idle_report_as_csv_with_stable_columns(staff_client, samples):
    response = staff_client.get("/api/v1/reports/idle-reservations/", {**RANGE, "format": "csv"})

    assert response["Content-Type"].startswith("text/csv")
    assert response.content.decode().splitlines() == [
        "group,reservations,reserved_gpu_hours,idle_gpu_hours,idle_cost," + PERIOD_HEADER,
        "prod-gpu/ra,1,144.0,84.0,210.0," + PERIOD,
        "prod-gpu/rb,1,48.0,48.0,48.0," + PERIOD,
    ]


def test_it_keeps_the_csv_header_when_the_report_is_empty(staff_client, samples):
    from topology.models import Cluster

    empty = Cluster.objects.create(name="empty", source_kind="files")
    response = staff_client.get(
        "/api/v1/reports/idle-reservations/", {**RANGE, "cluster": empty.id, "format": "csv"}
    )

    assert response.content.decode().splitlines() == [
        "group,reservations,reserved_gpu_hours,idle_gpu_hours,idle_cost," + PERIOD_HEADER
    ]


def test_it_integrates_naive_joint_and_stranded_cost_in_the_waste_report(staff_client, samples):
    response = staff_client.get("/api/v1/reports/waste/", RANGE)

    assert response.json()["rows"] == [
        {
            "cluster": "prod-gpu",
            "evaluations": 1,
            "naive_cost": 84.0,
            "joint_cost": 48.0,
            "stranded_cost": 36.0,
            "savings": 36.0,
            "currency": "USD",
            "period_start": RANGE["start"],
            "period_end": RANGE["end"],
            "period_hours": 18.0,
        }
    ]


def test_it_serves_the_waste_report_as_csv_for_accept_text_csv(staff_client, samples):
    response = staff_client.get("/api/v1/reports/waste/", RANGE, HTTP_ACCEPT="text/csv")

    assert response.content.decode().splitlines() == [
        "cluster,evaluations,naive_cost,joint_cost,stranded_cost,savings," + PERIOD_HEADER,
        "prod-gpu,1,84.0,48.0,36.0,36.0," + PERIOD,
    ]


def test_it_says_the_currency_of_the_idle_report_in_its_setting(staff_client, samples, settings):
    settings.CURRENCY = "EUR"
    response = staff_client.get("/api/v1/reports/idle-reservations/", RANGE)

    assert {row["currency"] for row in response.json()["rows"]} == {"EUR"}
    assert response.json()["totals"]["currency"] == "EUR"


def test_it_gives_each_waste_row_the_period_it_covers(staff_client, samples):
    totals = staff_client.get("/api/v1/reports/waste/", RANGE).json()["totals"]

    period = (totals["period_start"], totals["period_end"], totals["period_hours"])
    assert period == (RANGE["start"], RANGE["end"], 18.0)


def test_it_rejects_a_range_that_ends_before_it_starts(staff_client, samples):
    response = staff_client.get(
        "/api/v1/reports/waste/", {"start": RANGE["end"], "end": RANGE["start"]}
    )

    assert response.status_code == 400
    assert response.json() == {"end": ["end must be after start"]}


def test_it_rejects_an_unknown_grouping(staff_client, samples):
    response = staff_client.get("/api/v1/reports/idle-reservations/", {"group_by": "colour"})

    assert response.status_code == 400
    assert list(response.json()) == ["group_by"]


def test_each_report_filterset_has_filters_of_its_own(samples):
    """The filters are copied one level deep per instance (ReportParameters), not shared."""
    from reservations.filters import IdleReportFilterSet
    from reservations.models import IdleSample

    first = IdleReportFilterSet({**RANGE, "group_by": "team"}, IdleSample.objects.all())
    second = IdleReportFilterSet({**RANGE, "group_by": "colour"}, IdleSample.objects.all())

    assert first.is_valid() and not second.is_valid()
    assert first.report_arguments()["group_by"] == "team"
    for name, base in IdleReportFilterSet.base_filters.items():
        assert len({id(base), id(first.filters[name]), id(second.filters[name])}) == 3
        assert (first.filters[name].parent, second.filters[name].parent) == (first, second)
    assert first.qs.count() == IdleSample.objects.count() == 3  # parameters filter no rows


# --- the report cache: an unchanged report is not recomputed, a changed one is at once ---


def test_it_does_not_recompute_an_unchanged_idle_report(staff_client, samples):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    first = idle_rows(staff_client)
    with CaptureQueriesContext(connection) as queries:
        again = idle_rows(staff_client)

    assert again == first
    assert not [q for q in queries.captured_queries if "taken_at" in q["sql"]]


def test_it_reports_a_new_sample_at_once(staff_client, samples):
    from reservations.models import Reservation

    idle_rows(staff_client)
    e2 = Reservation.objects.get(name="ra").idle_samples.get(idle_gpus=6).evaluation
    add_sample(Reservation.objects.get(name="rb"), e2, reserved=4, idle=0, cost_per_hour=0.0)

    # rb idle only 06:00→12:00 now: 6 h × 4 = 24 GPU-h, $24
    assert idle_rows(staff_client)[1] == ("prod-gpu/rb", 24.0, 24.0)


def test_it_reports_a_renamed_reservation_and_pruned_samples_at_once(staff_client, samples):
    from reservations.models import IdleSample, Reservation

    idle_rows(staff_client)
    Reservation.objects.filter(name="rb").update(name="rb-renamed")
    assert idle_rows(staff_client)[1][0] == "prod-gpu/rb-renamed"

    IdleSample.objects.filter(reservation__name="rb-renamed").delete()  # retention pruning
    assert idle_rows(staff_client)[1] == ("prod-gpu/rb-renamed", 0.0, 0.0)


def test_it_groups_by_the_node_groups_of_a_newer_evaluation_at_once(staff_client, samples):
    idle_rows(staff_client, group_by="node_group")
    moved = [{**cell, "nodeGroup": "moved-pool"} for cell in HEATMAP]
    make_evaluation(samples, at(2, 6), result={"heatmap": moved})

    assert [row[0] for row in idle_rows(staff_client, group_by="node_group")] == ["moved-pool"]
