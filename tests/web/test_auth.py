"""The session's user: read with capacityweb's backend, Django's still honoured."""

from __future__ import annotations

from typing import Any


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
