"""Writes: node groups and reservations validated by topology.kube.parse, subscriptions,
the ingest trigger, and the write/report throttles."""

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db

NODE_GROUP_SPEC = {
    "nodeSelector": {"cloud.google.com/gke-nodepool": "h100-pool"},
    "minSize": 0,
    "maxSize": 16,
    "pricePerNodeHour": 88.0,
    "template": {
        "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        "taints": [],
        "allocatable": {"cpu": "208", "memory": "1800Gi", "pods": "110", "nvidia.com/gpu": "8"},
    },
    "placement": [{"labels": {"topology.kubernetes.io/zone": "z1"}, "maxNewNodes": 2}],
}


def post_node_group(client, cluster, spec):
    return client.post(
        "/api/v1/node-groups/",
        {"cluster": cluster.id, "name": "h100-pool", "spec": spec},
        format="json",
    )


def test_it_stores_a_valid_node_group_with_columns_from_its_spec(staff_client, cluster):
    response = post_node_group(staff_client, cluster, NODE_GROUP_SPEC)

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["price_per_node_hour"], body["min_size"], body["max_size"]) == (88.0, 0, 16)


def test_it_rejects_a_bad_node_group_spec_naming_object_and_field(staff_client, cluster):
    from topology.models import NodeGroup

    response = post_node_group(staff_client, cluster, {**NODE_GROUP_SPEC, "maxSize": "lots"})

    assert response.status_code == 400
    [message] = response.json()["spec"]
    assert message.startswith("NodeGroup/h100-pool: spec.maxSize: ")
    assert not NodeGroup.objects.exists()


def test_it_rejects_a_bad_reservation_spec_and_stores_nothing(team_a_client, cluster):
    from reservations.models import Reservation

    response = team_a_client.post(
        "/api/v1/reservations/",
        {
            "cluster": cluster.id,
            "name": "team-a-h100",
            "spec": {
                "owner": {"namespaces": ["team-a"]},
                "nodeNames": ["gpu-a-1"],
                "pricePerGpuHour": "cheap",
            },
        },
        format="json",
    )

    assert response.status_code == 400
    [message] = response.json()["spec"]
    assert message.startswith("Reservation/team-a-h100: spec.pricePerGpuHour: ")
    assert not Reservation.objects.exists()


def test_it_stores_a_reservation_with_owners_price_and_window_from_its_spec(team_a_client, cluster):
    spec = {
        "owner": {"namespaces": ["team-a"]},
        "nodeNames": ["gpu-a-1"],
        "start": "2026-12-01T00:00:00Z",
        "end": "2027-01-01T00:00:00Z",
        "pricePerGpuHour": 2.5,
    }

    response = team_a_client.post(
        "/api/v1/reservations/",
        {"cluster": cluster.id, "name": "team-a-h100", "spec": spec},
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["owner_namespaces"] == ["team-a"]
    assert (body["price_per_gpu_hour"], body["start"]) == (2.5, "2026-12-01T00:00:00Z")


def test_it_rejects_a_subscription_with_an_unknown_time_zone(team_a_client, cluster):
    response = team_a_client.post(
        "/api/v1/subscriptions/",
        {"recipients": "a@example.test", "clusters": [cluster.id], "timezone": "Mars/Olympus"},
        format="json",
    )

    assert response.status_code == 400
    assert list(response.json()) == ["timezone"]


def test_it_rejects_a_subscription_with_a_bad_recipient(team_a_client, cluster):
    response = team_a_client.post(
        "/api/v1/subscriptions/",
        {"recipients": "a@example.test, not-an-address", "clusters": [cluster.id]},
        format="json",
    )

    assert response.json() == {"recipients": ["not-an-address: not an email address"]}


def test_it_accepts_an_ingest_request_from_staff_with_202(staff_client, cluster):
    response = staff_client.post(f"/api/v1/clusters/{cluster.id}/ingest/")

    assert response.status_code == 202
    assert response.json()["cluster"] == cluster.id


def test_it_refuses_an_ingest_request_from_a_team_member_with_403(team_a_client, cluster):
    response = team_a_client.post(f"/api/v1/clusters/{cluster.id}/ingest/")

    assert response.status_code == 403


def test_it_accepts_an_ingest_request_from_a_holder_of_change_cluster(cluster):
    from django.contrib.auth.models import Permission

    from tests.api.builders import make_user, token_client

    operator = make_user("operator", teams=("team-a",))
    operator.user_permissions.add(Permission.objects.get(codename="change_cluster"))

    response = token_client(operator).post(f"/api/v1/clusters/{cluster.id}/ingest/")

    assert response.status_code == 202


def test_it_refuses_a_node_group_from_a_team_member_and_stores_nothing(team_a_client, cluster):
    from topology.models import NodeGroup

    response = post_node_group(team_a_client, cluster, NODE_GROUP_SPEC)

    assert response.status_code == 403
    assert not NodeGroup.objects.exists()


def test_it_lets_a_team_member_read_node_groups(team_a_client, cluster):
    from topology.models import NodeGroup

    NodeGroup.objects.create(cluster=cluster, name="h100-pool", spec=NODE_GROUP_SPEC)

    response = team_a_client.get("/api/v1/node-groups/")

    assert response.status_code == 200
    assert [row["name"] for row in response.json()["results"]] == ["h100-pool"]


def rate_of(scope: str) -> int:
    count, _, _ = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"][scope].partition("/")
    return int(count)


def test_it_throttles_a_burst_of_writes_with_429(team_a_client, cluster):
    statuses = [
        team_a_client.post("/api/v1/subscriptions/", {}, format="json").status_code
        for _ in range(rate_of("writes") + 1)
    ]

    assert set(statuses[:-1]) == {400}
    assert statuses[-1] == 429


def test_it_throttles_password_guesses_at_the_token_endpoint_with_429(cluster, settings):
    from rest_framework.test import APIClient

    # A fast hasher: the counter expires in the cache a window (a minute) after it opens,
    # and 121 guesses with the real one took longer than that under load.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    guesser = APIClient()
    statuses = [
        guesser.post(
            "/api/v1/auth-token/", {"username": "dave", "password": f"guess-{n}"}
        ).status_code
        for n in range(rate_of("writes") + 1)
    ]

    assert set(statuses[:-1]) == {400}
    assert statuses[-1] == 429


def test_it_throttles_a_burst_of_report_requests_with_429(team_a_client, cluster):
    statuses = [
        team_a_client.get("/api/v1/reports/waste/").status_code
        for _ in range(rate_of("reports") + 1)
    ]

    assert set(statuses[:-1]) == {200}
    assert statuses[-1] == 429


def test_it_does_not_throttle_reads_of_lists(team_a_client, cluster):
    statuses = {
        team_a_client.get("/api/v1/clusters/").status_code for _ in range(rate_of("writes") + 1)
    }

    assert statuses == {200}


@pytest.mark.parametrize(
    ("spec_field", "value", "reason"),
    [
        # past float's range (about 1.8e308): float() raises OverflowError
        ("pricePerGpuHour", 10**400, "must be a finite number >= 0, got an integer of 401 digits"),
        # valid RFC 3339 times whose UTC instant lies outside years 1 to 9999
        ("start", "0001-01-01T00:00:00+01:00", "outside years 1 to 9999 in UTC"),
        ("end", "9999-12-31T23:00:00-05:00", "outside years 1 to 9999 in UTC"),
    ],
)
def test_it_refuses_a_reservation_value_out_of_range_naming_the_field(
    team_a_client, cluster, spec_field, value, reason
):
    """A PUT of such a spec was a 400 not naming the field (the price: "malformed object:
    OverflowError"), or stored the row and then answered 400 "Datetime value out of range."
    (DRF could not show its time): every later read of the reservations was a 500
    (psycopg: "timestamp too small (before year 1)")."""
    from builders import make_reservation

    reservation = make_reservation(cluster, "a-h100", "team-a")
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["a-h100"], spec_field: value}

    response = team_a_client.put(
        f"/api/v1/reservations/{reservation.id}/",
        {"cluster": cluster.id, "name": "a-h100", "spec": spec},
        format="json",
    )

    assert response.status_code == 400, response.content
    [message] = response.json()["spec"]
    assert message.startswith(f"Reservation/a-h100: spec.{spec_field}: "), message
    assert reason in message
    listed = team_a_client.get("/api/v1/reservations/")
    assert listed.status_code == 200
    assert [row["spec"] for row in listed.json()["results"]] == [reservation.spec]


def test_it_refuses_a_price_above_a_million_per_hour_that_no_evaluation_could_store(
    team_a_client, cluster
):
    """A reservation priced 1e308 per GPU-hour was stored; the cluster's next evaluation
    priced its idle GPUs at infinity, which Postgres's JSON refuses ("Token "Infinity" is
    invalid"): no evaluation of the cluster was stored after it, for every team."""
    from reservations.models import Reservation

    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["r1"], "pricePerGpuHour": 1e308}

    response = team_a_client.post(
        "/api/v1/reservations/",
        {"cluster": cluster.id, "name": "a-r1", "spec": spec},
        format="json",
    )

    assert response.status_code == 400, response.content
    assert response.json() == {
        "spec": ["Reservation/a-r1: spec.pricePerGpuHour: must be at most 1e+06, got 1e+308"]
    }
    assert not Reservation.objects.exists()


def test_it_refuses_a_node_group_priced_above_a_million_per_hour(staff_client, cluster):
    response = post_node_group(staff_client, cluster, {**NODE_GROUP_SPEC, "pricePerNodeHour": 2e6})

    assert response.status_code == 400, response.content
    assert response.json() == {
        "spec": ["NodeGroup/h100-pool: spec.pricePerNodeHour: must be at most 1e+06, got 2000000.0"]
    }


def test_an_evaluation_of_a_reservation_at_the_highest_price_is_stored(db):
    """At the bound, the figures stay finite: the scenario's idle reserved node (8 GPUs)
    at 1e6 per GPU-hour is stored and costs 8e6 per hour idle."""
    from tests.web.fixtures import ingest_and_evaluate, make_cluster, scenario_objects

    objects = scenario_objects("reservation-idle-nodes")
    for _, obj in objects:
        if obj.get("kind") == "Reservation":
            obj["spec"]["pricePerGpuHour"] = 1e6

    evaluation = ingest_and_evaluate(make_cluster(), objects)

    [sample] = evaluation.idle_samples.all()
    assert (sample.idle_gpus, sample.cost_per_hour) == (8, 8e6)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("maxSize", 10**9, "must be at most 100000, got 1000000000"),
        ("minSize", 100_001, "must be at most 100000, got 100001"),
        ("provisioningDelaySeconds", 10**9, "must be at most 604800, got 1000000000"),
    ],
)
def test_it_refuses_a_node_group_size_or_delay_past_any_real_cluster(
    staff_client, cluster, field, value, reason
):
    """The plans simulate up to maxSize new nodes: 10^9 was minutes of CPU per evaluation;
    a provisioning delay past a week is past cluster-autoscaler's --max-node-provision-time
    (15 minutes by default) by far."""
    from topology.models import NodeGroup

    spec = {**NODE_GROUP_SPEC, field: value}
    if field == "minSize":
        spec["maxSize"] = value
    response = post_node_group(staff_client, cluster, spec)

    assert response.status_code == 400
    [message] = response.json()["spec"]
    assert message.startswith(f"NodeGroup/h100-pool: spec.{field}: {reason}"), message
    assert not NodeGroup.objects.exists()
