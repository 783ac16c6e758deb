"""System checks of the digest's settings (``manage.py check``, and at every start).

A scheduled digest has no request to take the dashboard's address from: without
``DASHBOARD_BASE_URL`` the links in its emails and webhook posts are paths
(``/clusters/1/reservations/``), which a mail client or Slack cannot open. The email
says so at its foot; this warning says so before any is sent. It is raised when DEBUG
is off (a deployment, where digests go out); the zero-config DEBUG default keeps its
commands quiet, and the digest task logs the same words whenever it sends path links.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Warning, register

RELATIVE_LINKS_ID = "reservations.W001"
RELATIVE_LINKS = (
    "DASHBOARD_BASE_URL is not set: links in digest emails and webhook posts are paths "
    "on the capacityweb server (e.g. /clusters/1/reservations/), which mail clients "
    "and chat apps cannot open."
)
RELATIVE_LINKS_HINT = (
    "Set DASHBOARD_BASE_URL to the dashboard's address as the recipients reach it, "
    "e.g. https://capacity.example.com"
)


def links_are_paths() -> bool:
    from reservations.digest import dashboard_base_url

    return not dashboard_base_url()


@register()
def dashboard_base_url_check(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    if settings.DEBUG or not links_are_paths():
        return []
    return [Warning(RELATIVE_LINKS, hint=RELATIVE_LINKS_HINT, id=RELATIVE_LINKS_ID)]
