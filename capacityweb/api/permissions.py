"""Who may change what the whole cluster shares.

Reading is for every signed-in user (DEFAULT_PERMISSION_CLASSES). Node groups
and on-demand ingests are shared by every team: a wrong node group changes
every recommendation, and an ingest reads the cluster's API server. So those
writes are for operators: staff, or users granted the model's Django
permission (``topology.add_nodegroup``, ``topology.change_cluster`` for the
ingest…), the usual way to delegate in the admin.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, DjangoModelPermissions
from rest_framework.request import Request


class OperatorOrReadOnly(DjangoModelPermissions):
    """Safe methods for any signed-in user; writes for staff or holders of the model permission.

    POST on a detail action (``clusters/<id>/ingest/``) maps to the model's
    ``change`` permission: it acts on an existing cluster, it creates none.
    """

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": [],
        "OPTIONS": [],
        "HEAD": [],
    }

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method in SAFE_METHODS or user.is_staff:
            return True
        if getattr(view, "detail", False) and request.method == "POST":
            queryset = self._queryset(view)
            meta = queryset.model._meta
            return bool(user.has_perm(f"{meta.app_label}.change_{meta.model_name}"))
        return super().has_permission(request, view)


class OperatorOnly(OperatorOrReadOnly):
    """Reads too for operators only: staff, or holders of the model's ``view`` permission
    (writes as ``OperatorOrReadOnly``). For what holds internal addresses and says what
    answered there: the Prometheus sources (``visibility.sees_sources``)."""

    perms_map = {
        **OperatorOrReadOnly.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
    }

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if request.method in SAFE_METHODS and user and user.is_authenticated:
            return bool(user.is_staff) or DjangoModelPermissions.has_permission(self, request, view)
        return super().has_permission(request, view)
