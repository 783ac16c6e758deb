"""The Prometheus source after the security review (issue 42 item 1): its URL takes no
user-info, query or fragment; credentials are write-only; no answer's body reaches a
report's ``error``; the sources and why a measurement failed are for operators only.

The "Prometheus" here is a stand-in HTTP server on 127.0.0.1 answering whatever a test
sets, recording each request's path and headers.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reservations.models import PrometheusSource, UtilisationReport
from reservations.utilisation.services import measure_cluster
from tests.utilisation.stored import stored_report
from topology.models import Cluster

pytestmark = pytest.mark.django_db
SOURCES = "/api/v1/prometheus-sources/"
REPORT = "/api/v1/reports/utilisation/"
SECRET = "internal-secret-7f3a"


@dataclass
class StandIn:
    url: str
    status: int = 200
    body: object = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server_state = StandIn(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            server_state.requests.append(
                (self.path, {k.lower(): v for k, v in self.headers.items()})
            )
            data = json.dumps(server_state.body).encode()
            self.send_response(server_state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server_state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server_state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def cluster(db):  # type: ignore[no-untyped-def]
    return Cluster.objects.create(name="prod-gpu", source_kind="files")


@pytest.fixture
def member(db):  # type: ignore[no-untyped-def]
    from tests.api.builders import make_user, token_client

    return token_client(make_user("alice", teams=("ml",)))


@pytest.fixture
def staff(db):  # type: ignore[no-untyped-def]
    from tests.api.builders import make_user, token_client

    return token_client(make_user("root", staff=True))


def measured_with(cluster: Cluster, url: str, **credentials: str) -> UtilisationReport:
    PrometheusSource.objects.create(
        cluster=cluster, url=url, query_timeout_seconds=5, **credentials
    )
    report = measure_cluster(cluster=cluster, now=datetime.now(UTC))
    assert report is not None
    return report


def failed_report(cluster: Cluster) -> UtilisationReport:
    report = stored_report(cluster)
    report.error = f"http://prom.internal:9090/api/v1/query_range: up: HTTP 500, {SECRET}"
    report.save(update_fields=["error"])
    return report


@pytest.mark.parametrize(
    "url",
    ["http://prom:9090/internal/path#", "http://prom:9090/#/api", "http://prom:9090/?x=1"],
)
def test_it_refuses_a_url_with_a_fragment_or_query_naming_the_field(staff, cluster, url) -> None:
    response = staff.post(SOURCES, {"cluster": cluster.pk, "url": url}, format="json")
    assert (response.status_code, list(response.json())) == (400, ["url"])
    assert not PrometheusSource.objects.exists()


def test_it_refuses_a_url_with_user_info_without_repeating_the_password(staff, cluster) -> None:
    response = staff.post(
        SOURCES,
        {"cluster": cluster.pk, "url": "http://admin:" + SECRET + "@prom:9090"},
        format="json",
    )
    assert (response.status_code, list(response.json())) == (400, ["url"])
    assert SECRET not in response.content.decode()


def test_it_never_returns_the_basic_auth_credentials(staff, cluster) -> None:
    created = staff.post(
        SOURCES,
        {
            "cluster": cluster.pk,
            "url": "http://prom:9090",
            "basic_auth_username": "admin",
            "basic_auth_password": SECRET,
        },
        format="json",
    )
    shown = staff.get(f"{SOURCES}{created.json()['id']}/")
    assert (created.status_code, shown.json()["has_basic_auth"]) == (201, True)
    assert "admin" not in shown.content.decode() and SECRET not in created.content.decode()
    assert SECRET not in shown.content.decode()


def test_it_sends_the_basic_auth_credentials_to_prometheus(stand_in, cluster) -> None:
    measured_with(cluster, stand_in.url, basic_auth_username="admin", basic_auth_password=SECRET)
    sent = stand_in.requests[0][1]["authorization"]
    assert sent == "Basic " + base64.b64encode(f"admin:{SECRET}".encode()).decode()


def test_it_does_not_put_a_json_answer_into_the_error(stand_in, cluster) -> None:
    stand_in.body = {"internal": SECRET}
    report = measured_with(cluster, stand_in.url)
    assert "HTTP 200, not a Prometheus answer" in report.error
    assert SECRET not in report.error


def test_it_names_a_prometheus_error_by_its_type_without_its_text(stand_in, cluster) -> None:
    stand_in.status = 400
    stand_in.body = {"status": "error", "errorType": "bad_data", "error": SECRET}
    report = measured_with(cluster, stand_in.url)
    assert "HTTP 400, Prometheus error bad_data" in report.error
    assert SECRET not in report.error


def test_it_refuses_a_stored_url_with_a_fragment_at_send_time(stand_in, cluster) -> None:
    # written around the API's validation (a row from before the rule)
    report = measured_with(cluster, f"{stand_in.url}/internal/path#")
    assert ("must not carry a fragment" in report.error, stand_in.requests) == (True, [])


def test_it_refuses_the_source_list_to_a_team_member(member, cluster) -> None:
    PrometheusSource.objects.create(cluster=cluster, url="http://prom.internal:9090")
    assert member.get(SOURCES).status_code == 403


def test_it_lists_the_sources_to_staff(staff, cluster) -> None:
    PrometheusSource.objects.create(cluster=cluster, url="http://prom.internal:9090")
    assert [s["url"] for s in staff.get(SOURCES).json()["results"]] == ["http://prom.internal:9090"]


def test_it_tells_a_team_member_only_that_the_source_is_unavailable(member, cluster) -> None:
    failed_report(cluster)
    (summary,) = member.get(REPORT).json()["clusters"]
    assert summary["error"] == "utilisation source unavailable"


def test_it_tells_staff_why_the_measurement_failed(staff, cluster) -> None:
    failed_report(cluster)
    (summary,) = staff.get(REPORT).json()["clusters"]
    assert SECRET in summary["error"]


def test_it_keeps_the_failure_off_a_team_members_utilisation_page(client, cluster) -> None:
    from tests.api.builders import make_user

    failed_report(cluster)
    client.force_login(make_user("alice", teams=("ml",)))
    page = client.get(f"/clusters/{cluster.pk}/utilisation/").content.decode()
    assert ("utilisation source unavailable" in page, SECRET in page) == (True, False)


def reserved_report(cluster: Cluster) -> UtilisationReport:
    """stored.py's cluster with node n1 reserved by team-a at 30 per GPU-hour: the idle
    notebook's GPU costs 2 GPU-hours x 30 = 60.0 (issue 42 item 2)."""
    from dataclasses import replace

    from reservations.utilisation.services import store_report
    from tests.utilisation.stored import END, MODEL, STEP, T0, series
    from topology.model.hardware import Reservation
    from topology.model.serialize import cluster_to_json
    from topology.models import Snapshot

    model = replace(
        MODEL,
        reservations=(
            Reservation(
                "team-a-n1",
                owner_namespaces=("team-a",),
                node_names=("n1",),
                price_per_gpu_hour=30.0,
            ),
        ),
    )
    Snapshot.objects.create(
        cluster=cluster, taken_at=END, content_hash="reserved", model_json=cluster_to_json(model)
    )
    return store_report(
        cluster=cluster,
        series=[series("0", "notebook", 0.0)],
        start=T0,
        end=END,
        now=END,
        source=UtilisationReport.Source.PROMETHEUS,
        step=STEP,
    )


def gpu_prices_seen(client, cluster) -> list[tuple[float | None, float | None]]:  # type: ignore[no-untyped-def]
    reserved_report(cluster)
    rows = client.get(REPORT, {"group_by": "gpu"}).json()["rows"]
    return [(row["price_per_gpu_hour"], row["idle_cost"]) for row in rows]


def test_it_hides_another_teams_reservation_price_per_gpu(cluster) -> None:
    from tests.api.builders import make_user, token_client

    team_b = token_client(make_user("bob", teams=("team-b",)))
    assert gpu_prices_seen(team_b, cluster) == [(None, None)]


def test_it_shows_the_owning_team_its_reservation_price_per_gpu(cluster) -> None:
    from tests.api.builders import make_user, token_client

    team_a = token_client(make_user("alice", teams=("team-a",)))
    assert gpu_prices_seen(team_a, cluster) == [(30.0, 60.0)]
