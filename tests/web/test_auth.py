"""The session's user: read with capacityweb's backend, Django's still honoured."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.hashers import MD5PasswordHasher
from django.http import HttpRequest


def login_request() -> HttpRequest:
    """``Client.login`` calls ``authenticate()`` without a request; django-axes (the first
    backend) needs one to count the attempt by address."""
    request = HttpRequest()
    request.META["REMOTE_ADDR"] = "127.0.0.1"
    return request


def test_it_signs_out_a_deactivated_user(signed_in: Any, user: Any) -> None:
    assert signed_in.get("/").status_code == 200
    user.is_active = False
    user.save()

    response = signed_in.get("/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_keeps_a_session_made_with_djangos_backend(client: Any, user: Any) -> None:
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")

    response = client.get("/")

    assert response.status_code == 200
    assert response.wsgi_request.user == user


def test_it_names_its_own_backend_in_new_sessions(client: Any, user: Any) -> None:
    assert client.login(request=login_request(), username="viewer", password="viewer-password-1")

    assert client.session["_auth_user_backend"] == "capacityweb.api.authentication.ModelBackend"
    assert client.get("/").wsgi_request.user == user


class CountingHasher(MD5PasswordHasher):
    """Django's MD5 hasher (fast), counting how often it hashes a password."""

    algorithm = "counting-md5"
    calls = 0

    def encode(self, password: str, salt: str) -> str:
        type(self).calls += 1
        return super().encode(password, salt)


def test_it_checks_a_wrong_password_once(client: Any, settings: Any, db: None) -> None:
    from django.contrib.auth.hashers import get_hasher
    from django.contrib.auth.models import User

    settings.PASSWORD_HASHERS = ["tests.web.test_auth.CountingHasher"]
    User.objects.create_user("frank", password="right-password-1")
    counting = type(get_hasher("counting-md5"))  # the class as Django imported it
    counting.calls = 0

    assert not client.login(request=login_request(), username="frank", password="wrong-password-1")

    assert counting.calls == 1  # not a second time by Django's backend, listed after
    assert client.login(request=login_request(), username="frank", password="right-password-1")


def stored_fields(user: Any) -> dict[str, Any]:
    return {f.attname: getattr(user, f.attname) for f in type(user)._meta.concrete_fields}


def test_it_reads_the_sessions_and_the_tokens_user_as_the_orm_does(user: Any) -> None:
    """Every column, with the database's converters (SQLite keeps datetimes as text)."""
    from datetime import datetime

    from django.contrib.auth.models import User
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from capacityweb.api.authentication import ModelBackend, TokenAuthentication

    User.objects.filter(pk=user.pk).update(last_login=timezone.now())
    expected = stored_fields(User.objects.get(pk=user.pk))
    token = Token.objects.create(user=user)

    from_session = ModelBackend().get_user(user.pk)
    from_token, read_token = TokenAuthentication().authenticate_credentials(token.key)

    assert stored_fields(from_session) == stored_fields(from_token) == expected
    assert isinstance(from_session.last_login, datetime)
    assert isinstance(from_token.date_joined, datetime)
    assert (read_token.key, read_token.created) == (token.key, token.created)
    assert not from_session._state.adding and from_session._state.db == "default"


def test_it_finds_no_user_for_an_unknown_id_or_token(user: Any) -> None:
    import pytest
    from rest_framework.exceptions import AuthenticationFailed

    from capacityweb.api.authentication import ModelBackend, TokenAuthentication

    assert ModelBackend().get_user(user.pk + 1000) is None
    assert ModelBackend().get_user("not-a-number") is None
    with pytest.raises(AuthenticationFailed, match="Invalid token"):
        TokenAuthentication().authenticate_credentials("no-such-token")
