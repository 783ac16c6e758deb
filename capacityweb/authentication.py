"""Who is asking: the session's user for pages, the token's user for the API, one plain
query each.

Every authenticated request reads its user. Django's ModelBackend runs
``User.objects.get(pk=...)`` and DRF's TokenAuthentication
``Token.objects.select_related("user").get(key=...)``; building and compiling those
queries was 15–25 % of the CPU of a cached page or report request in bench.http.
The queries here are the same, written out, and so are the answers (no user for
an unknown or inactive one; DRF's 401 "Invalid token." and "User inactive or
deleted.").
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, as DRF's; the user and token in one query."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        user_model = get_user_model()
        users, tokens = user_model._meta.db_table, Token._meta.db_table
        found = user_model.objects.raw(
            f"SELECT u.*, t.created AS token_created FROM {users} u"  # noqa: S608 - no input
            f" JOIN {tokens} t ON t.user_id = u.{user_model._meta.pk.column} WHERE t.key = %s",
            [key],
        )
        user = next(iter(found), None)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user, created=user.token_created)


class ModelBackend(DjangoModelBackend):
    """Django's ModelBackend (passwords, permissions); ``get_user`` in one plain query.

    Listed before Django's in AUTHENTICATION_BACKENDS: new sessions name this one,
    sessions made before it keep Django's. A failed password check ends the login
    here (PermissionDenied: Django's answer is then "no user"), so Django's entry,
    listed only for those sessions, does not hash the password a second time.
    """

    def authenticate(
        self, request: Any, username: Any = None, password: Any = None, **kwargs: Any
    ) -> Any:
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            raise PermissionDenied("wrong credentials")
        return user

    def get_user(self, user_id: Any) -> Any:
        user_model = get_user_model()
        try:
            pk = user_model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        found = user_model.objects.raw(
            f"SELECT * FROM {user_model._meta.db_table}"  # noqa: S608 - no input
            f" WHERE {user_model._meta.pk.column} = %s",
            [pk],
        )
        user = next(iter(found), None)
        return user if user is not None and self.user_can_authenticate(user) else None
