"""Compare capacityweb with what the real kube-scheduler and cluster-autoscaler did.

The recorded cases are ``data/oracle-cases/`` (its SOURCES.md says how they were
recorded and what each outcome field means). This module turns one case into the
list of pods on which capacityweb disagrees with the real program, by the rules
below; ``test_oracle_cases`` holds the cases to that list, and docs/FIDELITY.md
("Agreement with the real programs") states the same rules and the measured rates.

kube-scheduler cases (``kube-scheduler/*.json``, recorded on v1.35.4, and
``kube-scheduler-hard-1.36/*.json``, on v1.36.2), evaluated with the scheduler side at
the release of the recorded outcome's ``kubernetesVersion`` (``profiles.versioned``:
NodeResourcesBalancedAllocation changed in 1.36), per pod of the input:

- a pod pending in the input agrees when (the scheduler bound it and it was not
  evicted later: status ``scheduled``) ⇔ (capacityweb's verdict is ``runs_now`` or
  ``preempts``). ``pending`` and ``preempted`` (bound from the pending set, then
  evicted) are "not bound";
- a pod running in the input agrees when (it was evicted: ``preempted``) ⇔ (some
  pending workload's ``preempts`` names it: a ``preempts`` verdict's victims, or a
  ``blocked`` one's evicted in vain during the preemption window);
- ``gated`` ⇔ verdict ``waiting``; ``other-scheduler`` ⇔ not ``runs_now``/``preempts``
  (another scheduler's pod is not placed by kube-scheduler's default profile);
  ``terminal`` ⇔ the pod is not a pending workload (Succeeded/Failed pods are dropped);
- a pending pod whose workload carries a score tie (``evaluate.ties``: with other
  picks among equally scored nodes its placement differs) agrees with either: our
  verdict, or placed ⇔ the tie's other outcome says placed (kube-scheduler's
  ``selectHost`` picks among tied nodes at random; we say both);
- a case agrees with the recorded outcome with the fewest disagreements (any
  recorded outcome is a real one: ties and map order are random upstream).

cluster-autoscaler cases (``cluster-autoscaler/*.json``): the case agrees when the
naive plan's node additions per group (summed over its additions, groups with 0 left
out) equal the ``totals`` of some recorded outcome. The recording ran
cluster-autoscaler without a kube-scheduler, so no pod was nominated for preemption:
the naive plan is made without the scheduler pass's nominations. Per pod, against the
outcome with those totals (else any) that has the fewest disagreements: helped
(``triggered``, ``fits-upcoming``, ``fits-existing``) ⇔ naive verdict ``scale_up``,
``runs_now`` or ``preempts``; not helped (``expendable``, ``no-scale-up``) ⇔ any other.
Which of several equal-priority pods takes the room on an existing or upcoming node is
random upstream (map order, unstable sorts), so "fits an existing node" and "triggered
a scale-up" are one class.

Gangs mean nothing to the default scheduler; the recorded cases hold none.

PriorityClass admission: every recorded pod that names a ``priorityClassName``
carries the ``spec.priority`` the API server filled in, and no PriorityClass in
the cases is ``globalDefault``, so pods without either have priority 0 as the
parser reads them: the comparison needs no priority fill of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from recommender.engine.autoscaler.plan import NAIVE, ScaleUpPlan
from recommender.engine.autoscaler.scale_up import scale_up
from recommender.engine.evaluate.evaluation import Evaluation, evaluate
from recommender.engine.scheduler.profiles import KUBE_DEFAULT, versioned
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster

CASES = Path(__file__).resolve().parents[2] / "data" / "oracle-cases"
SCHEDULER = "kube-scheduler"
HARD_SCHEDULER = "kube-scheduler-hard-1.36"
SCHEDULER_FOLDERS = (SCHEDULER, HARD_SCHEDULER)
AUTOSCALER = "cluster-autoscaler"
AT = datetime(2026, 12, 5, tzinfo=UTC)  # the day the cases were recorded
PLACED = frozenset({"runs_now", "preempts"})


@dataclass(frozen=True)
class Verdicts:
    """What one case came to: the pods compared and those that disagree."""

    case: str
    pods: int
    disagreements: tuple[str, ...]  # "ns/name: real STATUS, capacityweb VERDICT"
    totals_agree: bool = True  # the autoscaler's per-group additions (always for the scheduler)
    pending: int = 0  # kube-scheduler: pods pending in the input
    pending_disagreements: int = 0  # of the disagreements, those about pending pods


def case_names(program: str) -> list[str]:
    """The case names of one program, sorted (``sched-full-5000``)."""
    folder = CASES / program
    return sorted(p.name.removesuffix(".json") for p in folder.glob("*[0-9].json"))


def _load(program: str, case: str) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = CASES / program
    cluster = json.loads((folder / f"{case}.json").read_text())
    outcome = json.loads((folder / f"{case}.outcome.json").read_text())
    return cluster, outcome


def _cluster(program: str, case: str) -> tuple[Cluster, dict[str, Any]]:
    objects, outcome = _load(program, case)
    snapshot = parse_objects(((case, o) for o in objects["items"]), cluster_name=case)
    assert not snapshot.errors, snapshot.errors
    return snapshot.cluster, outcome


def scheduler_cases() -> list[tuple[str, str]]:
    """(folder, case) of every kube-scheduler case, folder by folder."""
    return [(folder, case) for folder in SCHEDULER_FOLDERS for case in case_names(folder)]


def _folder_of(case: str) -> str:
    (folder,) = [f for f in SCHEDULER_FOLDERS if (CASES / f / f"{case}.json").exists()]
    return folder


def recorded_version(outcome: dict[str, Any]) -> str:
    """The kube-scheduler release that produced the outcome (``v1.36.2 (vendored ...)``)."""
    (version,) = {r["kubernetesVersion"].split()[0] for r in outcome["distinctOutcomes"]}
    return str(version)


@cache
def evaluated(case: str) -> tuple[Evaluation, dict[str, Any]]:
    """capacityweb's evaluation of a kube-scheduler case, with kube-default scored as the
    recorded release scores, and the recorded outcome."""
    cluster, outcome = _cluster(_folder_of(case), case)
    policy = versioned(KUBE_DEFAULT, recorded_version(outcome))
    return evaluate(cluster, at=AT, policy=policy), outcome


@cache
def naive_plan(case: str) -> tuple[ScaleUpPlan, dict[str, Any]]:
    """The naive (cluster-autoscaler) plan of an autoscaler case, and the recorded outcome.

    The recording ran cluster-autoscaler alone: no kube-scheduler nominated a pod for
    preemption, so the plan is made with no nominations (``scheduled=()``), as for
    pending pods that carry no ``status.nominatedNodeName``."""
    cluster, outcome = _cluster(AUTOSCALER, case)
    pending = pending_workloads(cluster)
    state = ClusterState.from_cluster(cluster)
    plan = scale_up(cluster, pending, state=state, mode=NAIVE, at=AT, scheduled=())
    return plan, outcome


@cache
def scheduler_case(case: str) -> Verdicts:
    evaluation, outcome = evaluated(case)
    verdicts = {w.key: w.joint.verdict for w in evaluation.workloads}
    evicted = {v for w in evaluation.workloads for v in w.joint.preempts}
    tied = {w.key: w.score_tie.placed for w in evaluation.workloads if w.score_tie}
    best: list[str] | None = None
    pods = pending = 0
    for recorded in outcome["distinctOutcomes"]:
        pods = len(recorded["pods"])
        pending = sum(not _running(pod) for pod in recorded["pods"])
        found = list(_scheduler_disagreements(recorded["pods"], verdicts, evicted, tied))
        if best is None or len(found) < len(best):
            best = found
    about_pending = sum(not d.endswith((" kept", " evicted")) for d in best or ())
    return Verdicts(case, pods, tuple(best or ()), True, pending, about_pending)


def _running(pod: dict[str, Any]) -> bool:
    """Running in the input: bound there (``running``, or ``preempted`` from its node)."""
    return bool(pod.get("initialNodeName")) or pod["status"] == "running"


def _scheduler_disagreements(
    pods: list[dict[str, Any]], verdicts: dict[str, str], evicted: set[str], tied: dict[str, bool]
) -> Iterator[str]:
    for pod in pods:
        key = f"{pod['namespace']}/{pod['name']}"
        status = pod["status"]
        ours = verdicts.get(key, "absent")
        if _running(pod):
            agree = (status == "preempted") == (key in evicted)
            ours = "evicted" if key in evicted else "kept"
        elif status == "gated":
            agree = ours == "waiting"
        elif status == "terminal":
            agree = ours == "absent"
        elif status == "other-scheduler":
            agree = ours not in PLACED
        else:
            bound = status == "scheduled"
            agree = bound == (ours in PLACED) or (key in tied and bound == tied[key])
        if not agree:
            yield f"{key}: real {status}, capacityweb {ours}"


CA_STATUS = {
    "triggered": "helped",
    "fits-upcoming": "helped",
    "fits-existing": "helped",
    "expendable": "not helped",
    "no-scale-up": "not helped",
}


def _naive_kind(verdict: str) -> str:
    return "helped" if verdict in PLACED or verdict == "scale_up" else "not helped"


@cache
def autoscaler_case(case: str) -> Verdicts:
    plan, outcome = naive_plan(case)
    totals = naive_totals(case)
    recorded = outcome["distinctOutcomes"]
    matching = [r for r in recorded if _recorded_totals(r) == totals]
    naive = {key: _naive_kind(p.verdict) for key, p in plan.outcomes.items()}
    found: list[str] | None = None
    for chosen in matching or recorded:
        disagreements = [
            f"{key}: real {pod['status']}, capacityweb naive {naive.get(key, 'absent')}"
            for key, pod in sorted(chosen["pods"].items())
            if CA_STATUS[pod["status"]] != naive.get(key, "absent")
        ]
        if found is None or len(disagreements) < len(found):
            found = disagreements
    pods = len(recorded[0]["pods"])
    return Verdicts(case, pods, tuple(found or ()), totals_agree=bool(matching))


def naive_totals(case: str) -> dict[str, int]:
    """The naive plan's node additions per group (groups adding nothing left out)."""
    totals: dict[str, int] = {}
    for addition in naive_plan(case)[0].additions:
        totals[addition.node_group] = totals.get(addition.node_group, 0) + addition.count
    return {g: n for g, n in sorted(totals.items()) if n}


def recorded_totals(case: str) -> list[dict[str, int]]:
    """Every distinct per-group total recorded for an autoscaler case."""
    _, outcome = _load(AUTOSCALER, case)
    found: list[dict[str, int]] = []
    for recorded in outcome["distinctOutcomes"]:
        totals = _recorded_totals(recorded)
        if totals not in found:
            found.append(totals)
    return found


def _recorded_totals(recorded: dict[str, Any]) -> dict[str, int]:
    return {g: n for g, n in sorted(recorded["totals"].items()) if n}


@dataclass(frozen=True)
class Rates:
    pods: int
    pods_agreeing: int
    cases: int
    cases_agreeing: int
    pending: int = 0  # kube-scheduler: pods pending in the input, and those agreeing
    pending_agreeing: int = 0

    def text(self, program: str) -> str:
        pod_rate = 100 * self.pods_agreeing / self.pods
        case_rate = 100 * self.cases_agreeing / self.cases
        pending = ""
        if program != AUTOSCALER:
            pending_rate = 100 * self.pending_agreeing / self.pending
            agreeing = f"{self.pending_agreeing}/{self.pending}"
            pending = f", {agreeing} pending pods ({pending_rate:.1f} %)"
        return (
            f"{program}: {self.pods_agreeing}/{self.pods} pods agree ({pod_rate:.1f} %)"
            f"{pending}, {self.cases_agreeing}/{self.cases} cases ({case_rate:.1f} %)"
        )


def rates(program: str) -> Rates:
    """Pods and cases that agree over every recorded case of a program's folder
    (``kube-scheduler``, ``kube-scheduler-hard-1.36``, ``cluster-autoscaler``)."""
    results = [
        autoscaler_case(c) if program == AUTOSCALER else scheduler_case(c)
        for c in case_names(program)
    ]
    return Rates(
        pods=sum(r.pods for r in results),
        pods_agreeing=sum(r.pods - len(r.disagreements) for r in results),
        cases=len(results),
        cases_agreeing=sum(not r.disagreements and r.totals_agree for r in results),
        pending=sum(r.pending for r in results),
        pending_agreeing=sum(r.pending - r.pending_disagreements for r in results),
    )


@dataclass(frozen=True)
class RangeCoverage:
    """How much of cluster-autoscaler's recorded range the naive plan's outcomes give."""

    several: int  # cases with several distinct recorded totals
    recorded: int  # distinct totals recorded in those cases
    given: int  # of those, given by the naive plan or one of its other outcomes
    single: int  # cases with one recorded total
    single_with_others: int  # of those, cases where the plan names other outcomes

    def text(self) -> str:
        return (
            f"Of the {self.recorded} distinct totals recorded in the {self.several} cases with "
            f"several, the naive plan or one of its other outcomes gives {self.given}; of the "
            f"{self.single} cases with one recorded total, {self.single_with_others} get "
            "other outcomes"
        )


def range_coverage() -> RangeCoverage:
    several = recorded_count = given = single = single_with_others = 0
    for case in case_names(AUTOSCALER):
        plan, _ = naive_plan(case)
        ours = [naive_totals(case), *(dict(o.add_nodes) for o in plan.other_outcomes)]
        recorded = recorded_totals(case)
        if len(recorded) > 1:
            several += 1
            recorded_count += len(recorded)
            given += sum(totals in ours for totals in recorded)
        else:
            single += 1
            single_with_others += len(ours) > 1
    return RangeCoverage(several, recorded_count, given, single, single_with_others)
