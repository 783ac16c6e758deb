"""recommender.timelimit.soft_time_limit in the task's own thread."""

from __future__ import annotations

import time

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from recommender.timelimit import soft_time_limit


def spin(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def test_a_body_past_its_limit_is_stopped() -> None:
    started = time.monotonic()
    with pytest.raises(SoftTimeLimitExceeded), soft_time_limit(0.05):
        spin(5)
    assert time.monotonic() - started < 1


def test_a_swallowed_exception_is_raised_again() -> None:
    # what a finaliser run by the garbage collector mid-body does to the first one
    swallowed = []
    started = time.monotonic()
    with pytest.raises(SoftTimeLimitExceeded), soft_time_limit(0.05):
        try:
            spin(5)
        except SoftTimeLimitExceeded as error:
            swallowed.append(error)
        spin(5)
    assert len(swallowed) == 1
    assert time.monotonic() - started < 2


def test_a_body_within_its_limit_runs_to_its_end_and_nothing_is_raised_later() -> None:
    with soft_time_limit(0.2):
        spin(0.01)
    spin(0.5)  # past the limit and one redelivery: nothing pending, nothing raised
