"""Fixtures of the reliability tests: a signed-in user for live sockets."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def user(db: None) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("reliability", password="reliability-password-1")
