"""The session's user: read with capacityweb's backend, Django's still honoured."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.hashers import MD5PasswordHasher


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
    assert client.login(username="viewer", password="viewer-password-1")

    assert client.session["_auth_user_backend"] == "capacityweb.authentication.ModelBackend"
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

    assert not client.login(username="frank", password="wrong-password-1")

    assert counting.calls == 1  # not a second time by Django's backend, listed after
    assert client.login(username="frank", password="right-password-1")
