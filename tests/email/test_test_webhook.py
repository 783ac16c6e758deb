"""The "send test webhook" action, on the API and the reservations page (issue 34): the
latest period's message, marked as a test, posted now to a real HTTP receiver on
127.0.0.1 (admitted by WEBHOOK_ALLOWED_NETWORKS, as in test_webhook.py), under the
address rules of a real post and the test emails' rate (``test-sends``, per user).

The subscription is conftest.py's daily 08:00 UTC one; its latest complete period at
the test's own time has no samples, so the message says so (its words are
test_digest_known.py's and test_webhook.py's concern).
"""

from __future__ import annotations

from typing import Any

import pytest
from digest_period import make_period
from rest_framework.throttling import SimpleRateThrottle

from tests.servers import free_port

pytestmark = pytest.mark.django_db

TEST_MARK = "[test — not a scheduled digest] capacityweb: "


def subscribed(client: Any, url: str) -> Any:
    period = make_period()
    period.subscription.webhook_url = url
    period.subscription.save(update_fields=["webhook_url"])
    client.force_login(period.user)
    return period


def api_url(period: Any) -> str:
    return f"/api/v1/subscriptions/{period.subscription.id}/test-webhook/"


def test_it_posts_a_test_message_to_the_subscriptions_webhook(client: Any, receiver: Any) -> None:
    period = subscribed(client, receiver.url)

    response = client.post(api_url(period))

    assert response.status_code == 200, response.content
    assert response.json() == {"status": "sent", "detail": "receiver answered HTTP 200"}
    [post] = receiver.posts
    assert post["text"].startswith(TEST_MARK)


def test_it_refuses_a_loopback_receiver_not_admitted_like_a_real_post(
    client: Any, receiver: Any, settings: Any
) -> None:
    period = subscribed(client, receiver.url)
    settings.WEBHOOK_ALLOWED_NETWORKS = []

    response = client.post(api_url(period))

    assert response.status_code == 400
    assert "127.0.0.1" in response.json()["webhook_url"]
    assert receiver.posts == []


def test_it_answers_400_for_a_subscription_without_a_webhook(client: Any, receiver: Any) -> None:
    period = subscribed(client, "")

    response = client.post(api_url(period))

    assert response.status_code == 400
    assert response.json() == {"webhook_url": "this subscription has no webhook_url"}


def test_it_answers_502_when_nothing_listens(client: Any, receiver: Any) -> None:
    period = subscribed(client, f"http://127.0.0.1:{free_port()}/hooks/digest")

    response = client.post(api_url(period))

    assert response.status_code == 502
    assert response.json()["detail"].startswith("webhook unreachable: ")


def test_it_reports_the_receivers_error_status(client: Any, receiver: Any) -> None:
    period = subscribed(client, receiver.url)
    receiver.status = 404

    response = client.post(api_url(period))

    assert response.json() == {"status": "receiver_error", "detail": "receiver answered HTTP 404"}


def test_it_throttles_test_webhooks_with_the_test_emails_rate(
    client: Any, receiver: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "test-sends": "2/hour"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    period = subscribed(client, receiver.url)
    client.post(f"/api/v1/subscriptions/{period.subscription.id}/test-email/")

    statuses = [client.post(api_url(period)).status_code for _ in range(2)]

    assert statuses == [200, 429]
    assert len(receiver.posts) == 1


def test_the_pages_button_posts_the_test_message_and_says_so(client: Any, receiver: Any) -> None:
    period = subscribed(client, receiver.url)
    cluster_id = period.cluster.id
    button = f"/clusters/{cluster_id}/subscriptions/{period.subscription.id}/test-webhook/"
    page = client.get(f"/clusters/{cluster_id}/reservations/").content.decode()
    assert f'action="{button}"' in page

    response = client.post(button, follow=True)

    assert "Test webhook: sent (receiver answered HTTP 200)." in response.content.decode()
    assert receiver.posts[0]["text"].startswith(TEST_MARK)
