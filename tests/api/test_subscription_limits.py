"""What a digest subscription may hold (issue 28): webhook URLs that reach public addresses
only (server-side request forgery), a bounded number of recipients, throttled test sends.

Every address below is an IP literal or ``localhost``: the host resolves without a DNS
server, and nothing is ever sent (the refusal comes first).
"""

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


def test_it_refuses_a_webhook_host_that_does_not_resolve(team_a_client, cluster):
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
