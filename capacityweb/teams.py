"""Who belongs to which team, and so which reservations they may see in detail.

A team is a Kubernetes namespace. A user is on the team of namespace ``ns``
when they are in the Django group ``team-ns`` (created in admin). Staff see
every team. Aggregates (report totals) are for everyone; details of a
reservation (its spec, nodes, owners) only for its owners' teams and staff.
"""

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

TEAM_GROUP_PREFIX = "team-"


def team_group_name(namespace: str) -> str:
    """The Django group whose members are the team of ``namespace``."""
    return f"{TEAM_GROUP_PREFIX}{namespace}"


def sees_all_teams(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))


def team_namespaces(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The namespaces whose team the user is on (from ``team-<namespace>`` groups)."""
    if not user.is_authenticated:
        return frozenset()
    names = user.groups.filter(name__startswith=TEAM_GROUP_PREFIX).values_list("name", flat=True)
    return frozenset(name.removeprefix(TEAM_GROUP_PREFIX) for name in names)


def team_label(owner_namespaces: Iterable[str]) -> str:
    """How reports name the team owning a reservation: its namespaces, sorted, joined by +."""
    return "+".join(sorted(owner_namespaces)) or "(no owner)"
