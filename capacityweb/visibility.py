"""Who may see which reservation's details: the one policy, for every page, API, CSV and
WebSocket message.

    A reservation's details (its name, nodes, owners, price and its own money figures)
    are shown to the teams that own it and to staff. Anyone else sees the GPUs it
    holds as "reserved (another team)", with GPU counts only.

::

    user ─► viewer_of ─► Viewer(sees_all, teams)
    evaluation.reservation_owners (name → namespaces, stored with the evaluation)
        └─► Viewer.labels(owners) ─► ReservationLabels ─► the redactions below:
              heatmap cells · idleReservations · a workload's reasons and joint plan
              · a node row · free text ("reservation NAME") · a whole evaluation result

A name the owners map does not know (an evaluation stored before owners were kept)
is hidden from everyone but staff: the policy fails closed. A snapshot's errors
(``snapshot_errors``) name the stored object that failed, so one about another team's
reservation reads "Reservation/reserved (another team)".

Money: no figure shown to a user who is not staff counts another team's
reservation, not even summed with others (``Viewer.idle_cost``): with one other team
holding reservations a cluster's idle $/h minus the user's own would be theirs, and
with several, the change as one reservation starts, ends or goes idle is that one's.
GPU counts stay cluster-wide (a cluster's idle reserved GPUs); the waste report and
stranded $/h count no reservation. Utilisation sources (internal addresses) and why a
measurement failed are for operators (``sees_sources``); others read "utilisation
source unavailable". Pure functions over plain dicts, no Django imports
beyond reading a user's groups in ``viewer_of``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from capacityweb.teams import sees_all_teams, team_namespaces

OTHER_TEAM = "reserved (another team)"
Owners = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Viewer:
    """Whose reservations a user sees in detail: all (staff) or their teams'."""

    sees_all: bool
    teams: frozenset[str] = frozenset()

    def sees(self, owners: Iterable[str] | None) -> bool:
        return self.sees_all or bool(self.teams & set(owners or ()))

    def idle_cost(self, samples: Iterable[tuple[float, Iterable[str] | None]]) -> float:
        """The $/h of the (cost per hour, owner namespaces) idle samples the viewer may
        see: every one for staff, their teams' for anyone else."""
        return sum(cost for cost, owners in samples if self.sees(owners))

    def key(self) -> str:
        """Names the viewer's view in cache keys: ``*`` for staff, else its sorted teams."""
        return "*" if self.sees_all else "teams:" + ",".join(sorted(self.teams))

    def labels(self, owners: Owners | None) -> ReservationLabels:
        return ReservationLabels(self, dict(owners or {}))


STAFF = Viewer(sees_all=True)


def viewer_of(user: Any) -> Viewer:
    """The user's viewer (one query for their team groups; none for staff)."""
    if sees_all_teams(user):
        return STAFF
    return Viewer(sees_all=False, teams=team_namespaces(user))


@dataclass(frozen=True)
class ReservationLabels:
    """One evaluation's reservation names as one viewer may read them."""

    viewer: Viewer
    owners: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def shows(self, name: str | None) -> bool:
        return name is None or self.viewer.sees_all or self.viewer.sees(self.owners.get(name))

    def label(self, name: str | None) -> str | None:
        return name if self.shows(name) else OTHER_TEAM

    def hidden(self, names: Iterable[str | None]) -> frozenset[str]:
        return frozenset(n for n in names if n is not None and not self.shows(n))

    def key(self) -> str:
        """Names what these labels hide, for cache keys: viewers who see the same names
        share a payload (``*``: nothing hidden beyond unknown names, staff: nothing)."""
        if self.viewer.sees_all:
            return "*"
        return "-" + ",".join(sorted(self.hidden(self.owners)))

    def names(self, names: Iterable[str]) -> list[str]:
        """Each name or its label, in order, the label once."""
        labelled: list[str] = []
        for name in names:
            shown = self.label(name) or ""
            if shown not in labelled:
                labelled.append(shown)
        return labelled

    def text(self, text: str) -> str:
        """Free text with every hidden reservation's name relabelled: the engine's phrases
        ("reuse idle reservation R", "paid node(s) of reservation R", "paid by reservation
        R") by pattern, whatever R is, and any known hidden name after "reservation " or
        "Reservation/" (an object named in an error)."""
        if self.viewer.sees_all or "eservation" not in text:
            return text
        text = ENGINE_PHRASES.sub(lambda m: m.group(1) + (self.label(m.group(2)) or ""), text)
        text = HELD_FOR.sub(
            lambda m: m.group(1) + ", ".join(self.names(n.strip() for n in m.group(2).split(","))),
            text,
        )
        for name in sorted(self.hidden(self.owners), key=len, reverse=True):
            text = re.sub(rf"{AFTER_MENTION}{re.escape(name)}(?![\w.-])", OTHER_TEAM, text)
        return text


# where a known name follows: "reservation R" in sentences, "Reservation/R" in errors
AFTER_MENTION = r"(?:(?<=reservation )|(?<=Reservation/))"
# "the room left in node group G ... is held for reservation(s) R1, R2: paid, ..."
# (recommender.engine.autoscaler.explain): other teams' reservations by definition
HELD_FOR = re.compile(r"(held for reservation\(s\) )([^:]+)(?=:)")
# the engine's mentions of a reservation by name (recommender.engine: joint, report), and
# its nodes' taint (RESERVATION_TAINT_KEY, autoscaler/options.py) in a toleration to add
# ("key=value:effect", joint.py) or a Filter's reason ("{key: value}", filters.py)
ENGINE_PHRASES = re.compile(
    r"(reuse idle reservation |of reservation |paid by reservation "
    r"|capacityweb\.io/reservation(?:=|: ))"
    r"(?!reserved \(another team\))([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)"
)


# --- redactions: plain dicts in, plain dicts out (the input is never changed) ---


def heatmap_cells(cells: Sequence[Mapping[str, Any]], labels: ReservationLabels) -> list[Any]:
    """Cells whose reservation is hidden carry ``OTHER_TEAM`` instead of its name."""
    if labels.viewer.sees_all:
        return list(cells)
    return [
        cell if labels.shows(cell.get("reservation")) else {**cell, "reservation": OTHER_TEAM}
        for cell in cells
    ]


def idle_reservations(
    items: Sequence[Mapping[str, Any]], labels: ReservationLabels
) -> list[dict[str, Any]]:
    """The viewer's reservations as they are; all others as one ``OTHER_TEAM`` entry with
    their idle GPUs summed and no cost (it would tell their price)."""
    shown = [dict(item) for item in items if labels.shows(item.get("name"))]
    others = [item for item in items if not labels.shows(item.get("name"))]
    if others:
        shown.append(
            {
                "name": OTHER_TEAM,
                "idleGpus": sum(int(item.get("idleGpus") or 0) for item in others),
                "costPerHour": None,
                "reservations": len(others),
            }
        )
    return shown


def held_nodes(
    items: Sequence[Mapping[str, Any]], labels: ReservationLabels
) -> list[dict[str, Any]]:
    """A node group's room held for paid, unprovisioned reservation nodes
    (``{"reservation", "nodes"}``): the viewer's reservations by name, every other one
    summed into one ``OTHER_TEAM`` entry."""
    shown = [dict(item) for item in items if labels.shows(item.get("reservation"))]
    others = sum(
        int(item.get("nodes") or 0) for item in items if not labels.shows(item.get("reservation"))
    )
    if others:
        shown.append({"reservation": OTHER_TEAM, "nodes": others})
    return shown


def workload(item: Mapping[str, Any], labels: ReservationLabels) -> dict[str, Any]:
    """A workload of the evaluation (or a verdict row's fields): reasons and joint plan."""
    redacted = dict(item)
    if "reasons" in item:
        redacted["reasons"] = [labels.text(str(reason)) for reason in item.get("reasons") or ()]
    if isinstance(item.get("joint"), Mapping):
        redacted["joint"] = joint_plan(item["joint"], labels)
    for key in ("naiveReasons",):
        if key in item:
            redacted[key] = [labels.text(str(reason)) for reason in item.get(key) or ()]
    if isinstance(item.get("naive"), Mapping) and "reasons" in item["naive"]:
        naive = item["naive"]
        redacted["naive"] = {**naive, "reasons": [labels.text(str(r)) for r in naive["reasons"]]}
    if "relaxations" in item:
        redacted["relaxations"] = [relaxation(r, labels) for r in item.get("relaxations") or ()]
    return redacted


def relaxation(item: Mapping[str, Any], labels: ReservationLabels) -> dict[str, Any]:
    """A relaxation (or a what-if answer): its texts, and a reservation edit's target."""
    redacted = _texts(dict(item), labels)
    for side in ("before", "after"):  # a what-if's plans: reservations named in a list
        if isinstance(item.get(side), Mapping):
            redacted[side] = joint_plan(redacted[side], labels)
    edit = item.get("edit")
    if isinstance(edit, Mapping) and edit.get("kind") == "reservation":
        redacted["edit"] = {**edit, "target": labels.label(str(edit.get("target")))}
    return dict(redacted)


def joint_plan(plan: Mapping[str, Any], labels: ReservationLabels) -> dict[str, Any]:
    redacted = dict(plan)
    if "reservations" in plan:
        redacted["reservations"] = labels.names(plan.get("reservations") or ())
    return redacted


def node_row(row: Mapping[str, Any], labels: ReservationLabels) -> dict[str, Any]:
    """An API node row: its GPUs' reservations relabelled, and its teams only those of its
    pods and of reservations the viewer sees."""
    if labels.viewer.sees_all:
        return dict(row)
    devices = [
        {**device, "reservation": labels.label(device.get("reservation"))}
        for device in row.get("devices") or ()
    ]
    pod_teams = {str(pod).split("/", 1)[0] for d in devices for pod in d.get("pods") or ()}
    owner_teams = {
        owner
        for name in row.get("reservations") or ()
        if labels.shows(name)
        for owner in labels.owners.get(name) or ()
    }
    return {
        **row,
        "devices": devices,
        "reservations": labels.names(row.get("reservations") or ()),
        "teams": sorted(team for team in row.get("teams") or () if team in pod_teams | owner_teams),
    }


def result(data: Mapping[str, Any], labels: ReservationLabels) -> dict[str, Any]:
    """A whole stored evaluation result as the viewer may read it."""
    if labels.viewer.sees_all:
        return dict(data)
    redacted = dict(data)
    if "heatmap" in data:
        redacted["heatmap"] = heatmap_cells(data.get("heatmap") or [], labels)
    if "idleReservations" in data:
        redacted["idleReservations"] = idle_reservations(data.get("idleReservations") or [], labels)
    if "workloads" in data:
        redacted["workloads"] = [workload(item, labels) for item in data.get("workloads") or []]
    for key in data.keys() - {"heatmap", "idleReservations", "workloads"}:
        redacted[key] = _texts(data[key], labels)  # recommendations, diagnoses, whatIf, ...
    return redacted


def snapshot_errors(
    errors: Sequence[Mapping[str, Any]], labels: ReservationLabels
) -> list[dict[str, Any]]:
    """A snapshot's errors (source, object, field, reason): one about a reservation the
    viewer may not see (its object ``Reservation/NAME``; a name the owners do not know
    fails closed) has NAME relabelled in every text; the other texts as ``labels.text``."""
    if labels.viewer.sees_all:
        return [dict(error) for error in errors]
    shown = []
    for error in errors:
        kind, _, name = str(error.get("object") or "").partition("/")
        hidden = name if kind == "Reservation" and name and not labels.shows(name) else None
        shown.append({key: _error_text(value, hidden, labels) for key, value in error.items()})
    return shown


def _error_text(value: Any, hidden: str | None, labels: ReservationLabels) -> Any:
    if not isinstance(value, str):
        return value
    if hidden is not None:
        value = re.sub(rf"(?<![\w.-]){re.escape(hidden)}(?![\w.-])", OTHER_TEAM, value)
    return labels.text(value)


def _texts(item: Any, labels: ReservationLabels) -> Any:
    """Every string inside ``item`` through ``labels.text``."""
    if isinstance(item, str):
        return labels.text(item)
    if isinstance(item, Mapping):
        return {key: _texts(value, labels) for key, value in item.items()}
    if isinstance(item, list | tuple):
        return [_texts(value, labels) for value in item]
    return item


SOURCE_UNAVAILABLE = "utilisation source unavailable"


def sees_sources(user: Any) -> bool:
    """Operators see the Prometheus sources and why a measurement failed: staff, or holders
    of ``reservations.view_prometheussource`` (as ``capacityweb.api.permissions.OperatorOnly``).
    A source's URL is an internal address and its failure says what answered there;
    everyone else reads ``SOURCE_UNAVAILABLE``."""
    if sees_all_teams(user):
        return True
    return bool(
        getattr(user, "is_authenticated", False)
        and user.has_perm("reservations.view_prometheussource")
    )


def utilisation_error(error: str, *, operator: bool) -> str:
    """A failed measurement's ``error`` as the viewer may read it (blank stays blank)."""
    return error if operator or not error else SOURCE_UNAVAILABLE


def utilisation_gpu(row: Mapping[str, Any], viewer: Viewer) -> dict[str, Any]:
    """A utilisation report's GPU row: priced by a reservation the viewer does not see
    (``price_owners``), its price and idle cost are unknown (null) to them; the owners
    themselves are never shown."""
    shown = {key: value for key, value in row.items() if key != "price_owners"}
    owners = row.get("price_owners")
    if owners is not None and not viewer.sees(owners):
        shown.update(price_per_gpu_hour=None, idle_cost=None)
    return shown


def request_viewer(request: Any) -> Viewer:
    """The request's user's viewer, worked out once per request."""
    viewer = getattr(request, "_reservation_viewer", None)
    if viewer is None:
        viewer = viewer_of(request.user)
        request._reservation_viewer = viewer
    return viewer
