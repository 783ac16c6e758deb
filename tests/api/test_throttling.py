"""The counting throttle: exact under concurrent requests, one window at a time.

DRF's history throttle reads, appends and writes back a list, so concurrent
requests that read the same history all pass; the counter must not.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from django.contrib.auth.models import User
from rest_framework.test import APIRequestFactory, force_authenticate

from capacityweb.api.throttling import CountingScopedRateThrottle

START = 1_800_000_000.0  # a fixed clock, well inside one minute window (divisible by 60)


class ReportsView:
    throttle_scope = "reports"


def authenticated_request(user_id: int):
    from rest_framework.request import Request

    wsgi_request = APIRequestFactory().get("/api/v1/reports/waste/")
    user = User(id=user_id, username=f"user-{user_id}")
    force_authenticate(wsgi_request, user=user)
    request = Request(wsgi_request)
    request.user = user
    return request


def throttle_at(now: float) -> CountingScopedRateThrottle:
    throttle = CountingScopedRateThrottle()
    throttle.timer = lambda: now
    throttle.THROTTLE_RATES = {"reports": "100/minute"}
    return throttle


def allowed_of(user_id: int, now: float, attempts: int) -> int:
    request = authenticated_request(user_id)
    return sum(throttle_at(now).allow_request(request, ReportsView()) for _ in range(attempts))


def test_it_lets_exactly_the_rate_through_under_concurrent_requests():
    with ThreadPoolExecutor(max_workers=16) as pool:
        allowed = sum(pool.map(lambda _: allowed_of(1, START, 10), range(16)))

    assert allowed == 100  # of 160 attempts


def test_it_opens_the_next_window_and_counts_clients_apart():
    assert allowed_of(1, START, 120) == 100
    assert allowed_of(2, START, 5) == 5  # another user has their own counter
    assert allowed_of(1, START + 60, 5) == 5  # the next minute


def test_it_asks_to_retry_when_the_window_ends():
    throttle = throttle_at(START + 45)
    throttle.allow_request(authenticated_request(1), ReportsView())

    assert throttle.wait() == 15


def test_it_never_throttles_a_user_named_exempt(settings):
    settings.THROTTLE_EXEMPT_USERNAMES = ["user-3"]

    assert allowed_of(3, START, 150) == 150  # past the rate of 100, all in one window
    assert allowed_of(4, START, 150) == 100  # anyone else still has the rate
