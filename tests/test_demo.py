"""The demo login and the `rundemo` server that `make run` ends in."""

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.http import HttpRequest
from django.test import Client

from capacityweb.services import ensure_demo_user
from tests.conftest import REPO_ROOT, environment_without_services, run_manage, stop_process
from tests.servers import free_port, wait_for_http


def login_request() -> HttpRequest:
    """``Client.login`` calls ``authenticate()`` without a request; django-axes (the first
    backend) needs one to count the attempt by address."""
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = "127.0.0.1"
    return request


@pytest.mark.django_db
def test_it_creates_the_demo_user_able_to_log_in(client: Client) -> None:
    ensure_demo_user(password="first-password-123")
    assert client.login(request=login_request(), username="demo", password="first-password-123")


@pytest.mark.django_db
def test_it_resets_the_demo_password_when_the_user_exists(client: Client) -> None:
    ensure_demo_user(password="first-password-123")
    ensure_demo_user(password="second-password-456")
    assert get_user_model().objects.filter(username="demo").count() == 1
    assert client.login(request=login_request(), username="demo", password="second-password-456")


@pytest.mark.django_db
def test_it_sends_anonymous_visitors_of_home_to_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_it_renders_the_login_page(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in response.content


@pytest.fixture(scope="module")
def rundemo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A zero-config `rundemo` process on a free port, migrated SQLite of its own."""
    database_path = tmp_path_factory.mktemp("rundemo") / "db.sqlite3"
    environment = environment_without_services(DATABASE_URL=f"sqlite:///{database_path}")
    migrated = run_manage("migrate", "-v0", environment=environment)
    assert migrated.returncode == 0, migrated.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "rundemo", "--port", str(port)],
        cwd=REPO_ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{url}/health/live", server)
        yield url
    finally:
        stop_process(server)


def test_it_serves_readiness_from_rundemo(rundemo_url: str) -> None:
    with urllib.request.urlopen(f"{rundemo_url}/health/ready?deep=1", timeout=10) as response:
        assert response.status == 200


def test_it_serves_the_local_plotly_bundle_from_rundemo(rundemo_url: str) -> None:
    with urllib.request.urlopen(f"{rundemo_url}/static/vendor/plotly.min.js", timeout=10) as r:
        assert r.status == 200
        assert b"plotly" in r.read(4096).lower()


DEMO_AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def demo_workloads(db: None) -> dict[str, dict[str, Any]]:
    from capacityweb.demo import load_demo

    _cluster, evaluation = load_demo(now=DEMO_AT)
    return {w["name"]: w for w in evaluation.result["workloads"]}


def test_it_shows_a_gang_split_across_blocks_that_never_scales(
    demo_workloads: dict[str, dict[str, Any]],
) -> None:
    # 2 x 8 GPUs in one block; 8 free GPUs on case-split-0 (block 0) and case-split-1
    # (block 1). CA's filter-out-schedulable fits each member alone: it adds nothing,
    # no group can add a node there, and the gang can never start.
    split = demo_workloads["team-s/split-train"]
    assert split["naive"]["addNodes"] == {}
    assert split["naive"]["schedulableAfter"] is False
    assert split["joint"]["addNodes"] == {}
    assert split["disagreements"] == ["never-scales", "topology"]


def test_it_shows_a_gang_larger_than_its_group_may_grow(
    demo_workloads: dict[str, dict[str, Any]],
) -> None:
    # 3 x 8 GPUs, group case-partial-pool of 8-GPU nodes with max size 2: CA buys two
    # nodes for two members; the third never fits, so the joint plan buys nothing.
    pretrain = demo_workloads["team-p/pretrain"]
    assert pretrain["naive"]["addNodes"] == {"case-partial-pool": 2}
    assert pretrain["naive"]["schedulableAfter"] is False
    assert pretrain["joint"]["addNodes"] == {}
    assert pretrain["disagreements"] == ["partial-gang"]


def test_it_shows_a_kueue_job_waiting_for_quota_and_buys_nothing_for_it(
    demo_workloads: dict[str, dict[str, Any]],
) -> None:
    # team-q-cq: nominal 8 GPUs, all 8 used by team-q/admitted-0; the suspended Job
    # needs 8 more. Kueue keeps its pods gated, so neither autoscaler buys for it.
    train = demo_workloads["team-q/train"]
    assert train["verdict"] == "waiting"
    assert train["reasons"] == [
        "waiting for quota in queue ClusterQueue/team-q-cq (needs 8 nvidia.com/gpu, free 0)"
    ]
    assert train["naive"]["addNodes"] == {}
    assert train["joint"]["addNodes"] == {}
    assert train["disagreements"] == []


def test_it_keeps_trace_pods_off_the_hand_made_case_nodes(db: None) -> None:
    from capacityweb.demo import load_demo
    from topology.model.serialize import cluster_from_json

    _cluster, evaluation = load_demo(now=DEMO_AT)
    model = cluster_from_json(evaluation.snapshot.model_json)
    on_case_nodes = {
        (p.namespace, p.name) for p in model.pods if (p.node_name or "").startswith("case-")
    }
    assert on_case_nodes == {("team-q", "admitted-0")}


@pytest.mark.django_db
def test_it_deletes_demo_snapshots_older_than_demo_retention_hours(settings: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from capacityweb.demo import configure_demo
    from topology.models import Snapshot
    from topology.tasks import delete_old_snapshots

    settings.DEMO_RETENTION_HOURS = 2
    cluster = configure_demo(now=DEMO_AT)
    now = timezone.now()
    for hours, digest in ((3, "old"), (1, "recent"), (0, "newest")):
        Snapshot.objects.create(
            cluster=cluster, taken_at=now - timedelta(hours=hours), content_hash=digest,
            model_json={},
        )  # fmt: skip
    delete_old_snapshots()
    kept = set(Snapshot.objects.filter(cluster=cluster).values_list("content_hash", flat=True))
    assert kept == {"recent", "newest"}


@pytest.mark.django_db
def test_it_schedules_the_demo_retention_every_ten_minutes() -> None:
    from django_celery_beat.models import PeriodicTask

    from capacityweb.demo import configure_demo

    configure_demo(now=DEMO_AT)
    entry = PeriodicTask.objects.get(task="topology.tasks.delete_old_snapshots")
    assert (entry.enabled, entry.interval.every, entry.interval.period) == (True, 600, "seconds")


def demo_figures(evaluation: Any) -> tuple[Any, ...]:
    return (
        evaluation.snapshot.content_hash,
        evaluation.gpus,
        evaluation.gpus_allocated,
        evaluation.pending_count,
        sorted(w["name"] for w in evaluation.result["workloads"]),
    )


@pytest.mark.django_db
def test_it_gives_the_same_demo_when_loaded_again_minutes_later() -> None:
    """The replay moves a tick a minute (20 pods leave, 20 arrive): a second load three
    minutes later read tick 3 of the first load's clock (fewer trace pods pending: 28
    workloads instead of 34). A load restarts the demo: the same state every time."""
    from datetime import timedelta

    from capacityweb.demo import load_demo
    from topology.models import Snapshot

    _cluster, first = load_demo(now=DEMO_AT)
    figures = demo_figures(first)
    cluster, again = load_demo(now=DEMO_AT + timedelta(minutes=3))

    assert demo_figures(again) == figures
    assert list(Snapshot.objects.filter(cluster=cluster)) == [again.snapshot]


@pytest.mark.django_db
def test_it_keeps_every_demo_node_group_within_its_max_size() -> None:
    from capacityweb.demo import load_demo

    _cluster, evaluation = load_demo(now=DEMO_AT)
    groups = evaluation.snapshot.model_json["cluster"]["node_groups"]

    assert [g["name"] for g in groups if g["current_size"] > g["max_size"]] == []
