"""Who is asking: the session's user for pages, the token's user for the API, one plain
query each.

Every authenticated request reads its user. Django's ModelBackend runs
``User.objects.get(pk=...)`` and DRF's TokenAuthentication
``Token.objects.select_related("user").get(key=...)``; building and compiling those
queries was 15–25 % of the CPU of a cached page or report request in bench.http,
and a raw queryset still maps its columns to fields on every query. The queries
here are the same, written out once per process; the row becomes a user as the
ORM makes it (``Model.from_db``, the database's value converters). The answers
are the same too (no user for an unknown or inactive one; DRF's 401 "Invalid
token." and "User inactive or deleted.").
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connections
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, as DRF's; the user and token in one query."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        found = read_user(
            f"JOIN {Token._meta.db_table} t ON t.user_id = u.{{pk}} WHERE t.key = %s",
            [key],
            extra=(("t", Token._meta.get_field("created")),),
        )
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, (created,) = found
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user, created=created)


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
        try:
            pk = get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        found = read_user("WHERE u.{pk} = %s", [pk])
        user = found[0] if found is not None else None
        return user if user is not None and self.user_can_authenticate(user) else None


def read_user(
    condition: str, parameters: list[Any], *, extra: tuple[tuple[str, Any], ...] = ()
) -> tuple[Any, tuple[Any, ...]] | None:
    """The user ``u`` matched by ``condition`` (SQL after ``FROM <users> u``, ``{pk}``
    standing for its primary key column) and the values of the ``extra`` (table alias,
    model field) columns of that row; None if no row matches."""
    user_model = get_user_model()
    connection = connections[user_model.objects.db]
    fields = user_model._meta.concrete_fields
    columns = tuple(("u", field) for field in fields) + extra
    select, converters = _select(connection.alias, columns)
    pk = connection.ops.quote_name(user_model._meta.pk.column)
    sql = f"SELECT {select} FROM {user_model._meta.db_table} u {condition.format(pk=pk)}"
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for index, field_converters, expression in converters:
        for converter in field_converters:
            values[index] = converter(values[index], expression, connection)
    user = user_model.from_db(connection.alias, [f.attname for f in fields], values[: len(fields)])
    return user, tuple(values[len(fields) :])


@cache
def _select(
    alias: str, columns: tuple[tuple[str, Any], ...]
) -> tuple[str, list[tuple[int, list[Any], Any]]]:
    """The SELECT list of ``columns`` (table alias, model field) and, per column that has
    them, the value converters the ORM applies to it (e.g. SQLite's datetimes made aware),
    on the database ``alias``."""
    connection = connections[alias]
    select = ", ".join(f"{table}.{connection.ops.quote_name(f.column)}" for table, f in columns)
    converters = []
    for index, (table, field) in enumerate(columns):
        expression = field.get_col(table)
        found = connection.ops.get_db_converters(expression) + field.get_db_converters(connection)
        if found:
            converters.append((index, found, expression))
    return select, converters
