"""The workload page's interactive what-if (``recommender.whatif``): one edit of the
snapshot, and the workload's joint plan before and after it, each from the whole
critical pass (``evaluation.critical_pass``) with the evaluation's own arguments.

So "as it is" is the verdict the page shows (issue 46 item 8: a workload read Blocked
on the page and "runs after scale-up" as it is, when it was planned alone), and the
answer after the edit counts the workloads ahead of it as the page's verdict does: a
raised max the workloads ahead take does not read as this workload's way out.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from recommender.engine.autoscaler.caflags import CaFlags
from recommender.engine.autoscaler.plan import WorkloadPlan
from recommender.engine.autoscaler.profiles import DEFAULT_PROFILE
from recommender.engine.evaluate import edits
from recommender.engine.evaluate.edits import Edit
from recommender.engine.evaluate.evaluation import critical_pass
from recommender.engine.evaluate.relaxations import EditAnswer
from recommender.engine.scheduler.workloads import pending_workloads
from topology.model.hardware import Cluster
from topology.model.money import DEFAULT_CURRENCY


def answer_edit(
    cluster: Cluster,
    workload_key: str,
    edit: Edit,
    *,
    at: datetime,
    policy: str,
    autoscaler: str = DEFAULT_PROFILE,
    ca_flags: CaFlags | None = None,
    currency: str = DEFAULT_CURRENCY,
) -> EditAnswer:
    """The workload's joint plan in the whole evaluation of the snapshot, without and
    with ``edit``: EditError when the workload is not pending, or the edit names
    nothing there (both before any plan is made)."""
    if not any(w.key == workload_key for w in pending_workloads(cluster)):
        raise edits.EditError("workload", f"{workload_key} is not pending in the snapshot")
    edited = edits.apply(cluster, workload_key, edit)
    arguments = {
        "at": at,
        "policy": policy,
        "autoscaler": autoscaler,
        "ca_flags": ca_flags,
        "currency": currency,
    }
    before = _joint_plan(cluster, workload_key, arguments)
    after = _joint_plan(edited, workload_key, arguments)
    if before is None:
        raise edits.EditError("workload", f"{workload_key} is not pending in the snapshot")
    if after is None:
        raise edits.EditError("workload", f"{workload_key} is not pending after the edit")
    return EditAnswer(workload_key, edit, edit.text(cluster, workload_key), before, after)


def _joint_plan(cluster: Cluster, key: str, arguments: dict[str, Any]) -> WorkloadPlan | None:
    evaluated = critical_pass(cluster, **arguments).evaluation
    return next((w.joint for w in evaluated.workloads if w.key == key), None)
