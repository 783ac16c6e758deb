"""What a digest subscription may hold (issue 28): webhook URLs that reach public addresses
only (server-side request forgery), a bounded number of recipients, throttled test sends.

Every address below is an IP literal or ``localhost``: the host resolves without a DNS
server, and nothing is ever sent (the refusal comes first).
"""

import socket

import pytest

pytestmark = pytest.mark.django_db

INTERNAL_URLS = {  # the rule each one breaks, as the message names it
    "http://127.0.0.1:8000/admin/?delete=all": "127.0.0.1, a loopback address",
    "http://localhost/hook": "a loopback address",
    "http://169.254.169.254/latest/meta-data/": "169.254.169.254, a link-local address",
    "http://10.0.0.7/hook": "10.0.0.7, a private address",
    "http://192.168.1.1/hook": "192.168.1.1, a private address",
    "http://224.0.0.1/hook": "224.0.0.1, a multicast address",
    "http://240.0.0.1/hook": "240.0.0.1, a reserved address",
    "http://0.0.0.0:8000/hook": "0.0.0.0, an unspecified address",
    "http://100.64.0.1/hook": "100.64.0.1, an address that is not globally reachable",
    "http://[::1]/hook": "::1, a loopback address",
    "http://[fe80::1]/hook": "fe80::1, a link-local address",
    "http://[fd00::1]/hook": "fd00::1, a private address",
    "http://[::ffff:127.0.0.1]/hook": "::ffff:7f00:1, a loopback address",
    "http://[::ffff:169.254.169.254]/hook": "::ffff:a9fe:a9fe, a link-local address",
}


def subscription_body(cluster, **fields):
    return {"recipients": "a@example.test", "clusters": [cluster.id], **fields}


@pytest.mark.parametrize(("url", "rule"), sorted(INTERNAL_URLS.items()))
def test_it_refuses_a_webhook_url_that_resolves_to_an_internal_address(
    team_a_client, cluster, url, rule
):
    from reservations.models import Subscription

    response = team_a_client.post(
        "/api/v1/subscriptions/", subscription_body(cluster, webhook_url=url), format="json"
    )

    assert response.status_code == 400, response.content
    [message] = response.json()["webhook_url"]
    assert rule in message and "public addresses" in message
    assert not Subscription.objects.exists()


def test_it_refuses_an_internal_webhook_url_on_update(team_a_client, cluster):
    created = team_a_client.post(
        "/api/v1/subscriptions/", subscription_body(cluster), format="json"
    ).json()

    response = team_a_client.patch(
        f"/api/v1/subscriptions/{created['id']}/",
        {"webhook_url": "http://169.254.169.254/latest/meta-data/"},
        format="json",
    )

    assert response.status_code == 400
    assert list(response.json()) == ["webhook_url"]


def test_it_refuses_a_webhook_host_that_does_not_resolve(team_a_client, cluster, monkeypatch):
    def resolver(host, *args, **kwargs):  # NXDOMAIN, as a real resolver answers .invalid
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    response = team_a_client.post(
        "/api/v1/subscriptions/",
        subscription_body(cluster, webhook_url="https://hooks.nowhere.invalid/x"),
        format="json",
    )

    assert response.status_code == 400
    assert "hooks.nowhere.invalid does not resolve" in response.json()["webhook_url"][0]


def test_it_accepts_an_internal_receiver_in_webhook_allowed_networks(
    team_a_client, cluster, settings
):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.20.0.0/16"]

    response = team_a_client.post(
        "/api/v1/subscriptions/",
        subscription_body(cluster, webhook_url="http://10.20.3.4:8065/hooks/x"),
        format="json",
    )

    assert response.status_code == 201, response.content


def test_it_refuses_the_same_address_in_the_admin_form(cluster):
    from django.contrib.auth.models import User

    from reservations.admin import SubscriptionForm

    user = User.objects.create(username="ops")
    form = SubscriptionForm(
        data={
            "user": user.pk,
            "recipients": "ops@example.test",
            "clusters": [cluster.pk],
            "cadence": "daily",
            "timezone": "UTC",
            "hour": 8,
            "weekday": 0,
            "threshold_cost": 0,
            "webhook_url": "http://127.0.0.1:8000/admin/",
        }
    )

    assert not form.is_valid()
    assert "127.0.0.1, a loopback address" in form.errors["webhook_url"][0]


def test_it_refuses_more_recipients_than_digest_max_recipients(team_a_client, cluster):
    addresses = ", ".join(f"user{n}@example.test" for n in range(51))

    response = team_a_client.post(
        "/api/v1/subscriptions/", subscription_body(cluster, recipients=addresses), format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"recipients": ["51 addresses: at most 50 (DIGEST_MAX_RECIPIENTS)"]}


def test_it_accepts_exactly_digest_max_recipients(team_a_client, cluster):
    addresses = ", ".join(f"user{n}@example.test" for n in range(50))

    response = team_a_client.post(
        "/api/v1/subscriptions/", subscription_body(cluster, recipients=addresses), format="json"
    )

    assert response.status_code == 201


@pytest.fixture
def test_send_rate(settings, monkeypatch):
    """2 test sends per hour, bound the way DRF binds rates (on the class, at import)."""
    from rest_framework.throttling import SimpleRateThrottle

    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "test-sends": "2/hour"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def own_subscription(team_a_client, cluster):
    return team_a_client.post(
        "/api/v1/subscriptions/", subscription_body(cluster), format="json"
    ).json()["id"]


def test_it_throttles_test_emails_per_user_with_429(team_a_client, cluster, test_send_rate):
    from django.core import mail

    url = f"/api/v1/subscriptions/{own_subscription(team_a_client, cluster)}/test-email/"

    statuses = [team_a_client.post(url).status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    assert len(mail.outbox) == 2


def test_it_counts_test_emails_of_each_user_apart(
    team_a_client, team_b_client, cluster, test_send_rate
):
    url_a = f"/api/v1/subscriptions/{own_subscription(team_a_client, cluster)}/test-email/"
    url_b = f"/api/v1/subscriptions/{own_subscription(team_b_client, cluster)}/test-email/"
    for _ in range(2):
        team_a_client.post(url_a)

    assert team_b_client.post(url_b).status_code == 200


def test_it_counts_the_pages_test_email_button_against_the_same_rate(
    team_a_client, cluster, test_send_rate, client
):
    from django.contrib.auth.models import User
    from django.core import mail

    subscription_id = own_subscription(team_a_client, cluster)
    for _ in range(2):
        team_a_client.post(f"/api/v1/subscriptions/{subscription_id}/test-email/")
    client.force_login(User.objects.get(username="alice"))
    button = f"/clusters/{cluster.id}/subscriptions/{subscription_id}/test-email/"

    response = client.post(button, follow=True)

    assert "Test email not sent: too many test sends; try again in " in response.content.decode()
    assert len(mail.outbox) == 2


class Clock:
    """The throttle's clock (``timer``; tests/api/conftest.py stands it still), set by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ten_sends_an_hour_clock(settings, monkeypatch):
    """10 test sends per hour; the throttle's clock 3.5 minutes before a whole hour."""
    from rest_framework.throttling import SimpleRateThrottle

    from capacityweb.api.throttling import CountingScopedRateThrottle

    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "test-sends": "10/hour"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    clock = Clock(1_900_000_800.0 - 210)  # a multiple of 3,600 s minus 3.5 minutes
    monkeypatch.setattr(CountingScopedRateThrottle, "timer", clock)
    return clock


def send_ten_in_seven_minutes(client, url, clock) -> list[int]:
    """Five sends in the 3.5 minutes before the hour, five in the 3.5 minutes after."""
    statuses = []
    for second in (0, 40, 80, 120, 200, 220, 260, 300, 340, 400):
        clock.now = 1_900_000_800.0 - 210 + second
        statuses.append(client.post(url).status_code)
    return statuses


def test_it_refuses_an_eleventh_test_send_within_the_hour_across_the_hours_boundary(
    team_a_client, cluster, ten_sends_an_hour_clock
):
    """issue 42 item 6: a fixed hourly window let 10 more through after the hour struck."""
    clock = ten_sends_an_hour_clock
    url = f"/api/v1/subscriptions/{own_subscription(team_a_client, cluster)}/test-email/"
    assert send_ten_in_seven_minutes(team_a_client, url, clock) == [200] * 10
    clock.now = 1_900_000_800.0 + 200

    response = team_a_client.post(url)

    assert response.status_code == 429
    assert int(response["Retry-After"]) == 3600 - 410  # the first send leaves the hour


def test_it_lets_a_test_send_through_once_the_first_of_ten_is_an_hour_old(
    team_a_client, cluster, ten_sends_an_hour_clock
):
    clock = ten_sends_an_hour_clock
    url = f"/api/v1/subscriptions/{own_subscription(team_a_client, cluster)}/test-email/"
    send_ten_in_seven_minutes(team_a_client, url, clock)
    clock.now = 1_900_000_800.0 - 210 + 3600 + 1

    assert team_a_client.post(url).status_code == 200
