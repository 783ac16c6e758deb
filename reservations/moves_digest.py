"""The digest's fourth section: per team, the $/h that moving running pods would save
instead of buying (``recommender.moves.reports``: verified moves beside the buy plans, and
on-demand nodes emptied into the team's own reservations).

The figures are those of each subscribed cluster's latest move report as of the
period's end (the latest evaluation taken before it whose report is stored for it as
it is stored), summed per team (namespace) over the clusters; a subscription for one
team sees that team's row. Without a report: "not enough data yet", never $0.00.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import F, OuterRef, Subquery

from recommender.models import MoveReport
from topology.model.money import format_money

# digest_known's NOT_ENOUGH_DATA words (it imports DigestFigures, which holds MoveSavings)
NO_MOVE_SEARCH = "not enough data yet (no move search of the clusters covers this period)"


@dataclass(frozen=True)
class MoveSavings:
    """Per team, $/h moving would save, dearest first; ``known``: a report covers it."""

    known: bool
    teams: tuple[tuple[str, float], ...] = ()

    @property
    def total(self) -> float:
        return round(sum(amount for _, amount in self.teams), 2)


def period_move_savings(
    *, cluster_ids: Iterable[int], end: datetime, team: str = ""
) -> MoveSavings:
    """The clusters' latest move reports before ``end``, summed per team (one query)."""
    latest = (
        MoveReport.objects.filter(
            cluster_id=OuterRef("cluster_id"),
            evaluation__taken_at__lt=end,
            evaluation_stored_at=F("evaluation__stored_at"),
            result__isnull=False,
        )
        .order_by("-evaluation__taken_at", "-id")
        .values("id")[:1]
    )
    rows = MoveReport.objects.filter(cluster_id__in=list(cluster_ids), id=Subquery(latest))
    saved: dict[str, float] = {}
    known = False
    for savings in rows.values_list("team_savings", flat=True):
        known = True
        for namespace, amount in (savings or {}).items():
            if not team or namespace == team:
                saved[namespace] = saved.get(namespace, 0.0) + float(amount)
    ordered = sorted(saved.items(), key=lambda item: (-item[1], item[0]))
    return MoveSavings(known, tuple((n, round(a, 2)) for n, a in ordered if a > 0))


def moves_context(savings: MoveSavings | None) -> dict[str, Any]:
    known = savings is not None and savings.known
    return {
        "moves": savings,
        "moves_known": known,
        "moves_unknown_reason": NO_MOVE_SEARCH,
        "moves_total": format_money(savings.total if savings else 0.0, settings.CURRENCY),
    }
