"""Login brute force (issue 42 item 3): per-account and per-address lock-outs on
``/accounts/login/`` and ``/admin/login/`` (django-axes, ``AXES_*`` in settings), said on
the sign-in page. The test client signs in from REMOTE_ADDR, set per request."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db
LOGIN, ADMIN_LOGIN = "/accounts/login/", "/admin/login/"
PASSWORD = "right-password-1"


def make_account(username: str, *, staff: bool = False) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user(username, password=PASSWORD, is_staff=staff)


def sign_in(client: Any, path: str, username: str, password: str, address: str) -> Any:
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def signed_in(client: Any) -> bool:
    return "_auth_user_id" in client.session


def test_it_refuses_the_right_password_after_30_wrong_ones(client: Any) -> None:
    make_account("alice")
    for _ in range(30):
        sign_in(client, LOGIN, "alice", "wrong", "10.0.0.1")
    response = sign_in(client, LOGIN, "alice", PASSWORD, "10.0.0.1")
    assert (response.status_code, signed_in(client)) == (429, False)


def test_it_says_the_lock_out_on_the_sign_in_page(client: Any) -> None:
    make_account("alice")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, LOGIN, "alice", "wrong", "10.0.0.1")
    page = sign_in(client, LOGIN, "alice", PASSWORD, "10.0.0.1").content.decode()
    assert 'id="locked-out"' in page and "Too many failed sign-ins" in page
    assert 'name="password"' in page


def test_it_refuses_the_right_password_at_the_admin_after_30_wrong_ones(client: Any) -> None:
    make_account("root", staff=True)
    for _ in range(30):
        sign_in(client, ADMIN_LOGIN, "root", "wrong", "10.0.0.1")
    response = sign_in(client, ADMIN_LOGIN, "root", PASSWORD, "10.0.0.1")
    assert (response.status_code, signed_in(client)) == (429, False)


def test_it_locks_out_another_account_from_the_same_address(client: Any) -> None:
    make_account("alice"), make_account("bob")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, LOGIN, "alice", "wrong", "10.0.0.1")
    response = sign_in(client, LOGIN, "bob", PASSWORD, "10.0.0.1")
    assert (response.status_code, signed_in(client)) == (429, False)


def test_it_locks_out_an_account_guessed_from_many_addresses(client: Any) -> None:
    make_account("alice")
    for i in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, LOGIN, "alice", "wrong", f"10.0.1.{i}")
    response = sign_in(client, LOGIN, "alice", PASSWORD, "10.0.2.1")
    assert (response.status_code, signed_in(client)) == (429, False)


def test_it_lets_another_account_in_from_another_address(client: Any) -> None:
    make_account("alice"), make_account("bob")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, LOGIN, "alice", "wrong", "10.0.0.1")
    response = sign_in(client, LOGIN, "bob", PASSWORD, "10.0.0.2")
    assert (response.status_code, signed_in(client)) == (302, True)


def test_it_signs_in_after_fewer_failures_than_the_limit(client: Any) -> None:
    make_account("alice")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, LOGIN, "alice", "wrong", "10.0.0.1")
    response = sign_in(client, LOGIN, "alice", PASSWORD, "10.0.0.1")
    assert (response.status_code, signed_in(client)) == (302, True)
