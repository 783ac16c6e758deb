"""Stored evaluations: one per snapshot, with its recommendations and per-workload verdicts.

    Snapshot ─1:1─ Evaluation ──< Recommendation   (what to add, where, the YAML)
                              ├─< WorkloadVerdict  (why each workload is where it is)
                              ├─< EvaluatedNode    (each GPU node: place, devices, allocation)
                              └─< WhatIfRequest    (one user's what-if: its state and answer)

``result`` keeps the whole evaluate() JSON; the columns copy the figures pages
and the API filter or sort on, so a page of figures (the overview) never loads
the JSON. ``stored_at`` changes whenever the evaluation is (re)written: responses
derived from the result are cached and validated (ETag) by it.

Two stages (issue #41, ``recommender.parts``): the evaluation task writes the critical
pass (every verdict, reason, plan, recommendation, total and the heatmap) with
``missing`` naming the deferred parts (the engine's ``DEFERRED``); each part's task then
fills its own keys of ``result`` in (relaxations, score-tie reasons, ``whatIf``,
``fragmentation``), for the write it was started for only (``stored_at`` unchanged: no
part touches what the heatmap or the breakdowns are cached from). Pages and the API say
"being worked out" for a part in ``missing``, or why it never came (``parts_failed``).
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from topology.models import Cluster, Snapshot


class Evaluation(models.Model):
    snapshot = models.OneToOneField(Snapshot, on_delete=models.CASCADE, related_name="evaluation")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="evaluations")
    created_at = models.DateTimeField(auto_now_add=True)
    taken_at = models.DateTimeField()
    result = models.JSONField()
    gpus = models.PositiveIntegerField(default=0)
    gpus_allocated = models.PositiveIntegerField(default=0)
    gpus_idle_reserved = models.PositiveIntegerField(default=0)
    pending_count = models.PositiveIntegerField(default=0)
    naive_cost_per_hour = models.FloatField(default=0.0)
    joint_cost_per_hour = models.FloatField(default=0.0)
    stranded_cost_per_hour = models.FloatField(default=0.0)
    stranded_gpus = models.PositiveIntegerField(
        default=0, help_text="GPUs the naive autoscaler adds that the scheduler cannot use"
    )
    idle_reserved_cost_per_hour = models.FloatField(default=0.0)
    model_gaps = models.PositiveIntegerField(
        default=0, help_text="workloads we run now that kube-scheduler found Unschedulable"
    )
    what_if_extra_gpus = models.FloatField(
        null=True, blank=True, help_text="more pending GPUs fgd would place; null: fgd chosen"
    )
    stored_at = models.DateTimeField(default=timezone.now)
    reservation_owners = models.JSONField(
        default=dict,
        blank=True,
        help_text="reservation name → owner namespaces, as evaluated (capacityweb.visibility)",
    )
    missing = models.JSONField(
        default=list,
        blank=True,
        help_text="deferred parts not stored yet (the engine's DEFERRED names), sorted",
    )
    parts_failed = models.JSONField(
        default=dict,
        blank=True,
        help_text="deferred part → why it was not worked out (failed, timed out, replaced)",
    )

    class Meta:
        indexes = [models.Index(fields=["cluster", "-taken_at"], name="evaluation_cluster_taken")]
        ordering = ["-taken_at"]
        get_latest_by = "taken_at"

    def __str__(self) -> str:
        return f"evaluation of {self.snapshot_id}"


class Recommendation(models.Model):
    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="recommendations"
    )
    node_group = models.CharField(max_length=200)
    count = models.PositiveIntegerField()
    current_size = models.PositiveIntegerField(
        default=0, help_text="nodes in the group when evaluated (the YAML raises minSize from it)"
    )
    placement = models.JSONField(default=dict)
    cost_per_hour = models.FloatField(default=0.0)
    workloads = models.JSONField(default=list)
    yaml = models.TextField(
        blank=True, help_text="the first action to apply alone (``actions``: all of them)"
    )
    actions = models.JSONField(
        default=list, help_text="the card's actions apart, as the page shows them: kind, role, text"
    )

    class Meta:
        ordering = ["evaluation", "id"]

    def __str__(self) -> str:
        return f"+{self.count} {self.node_group}"


class WorkloadVerdict(models.Model):
    class Verdict(models.TextChoices):
        RUNS_NOW = "runs_now", "Runs now"
        PREEMPTS = "preempts", "Runs after preempting"
        USES_RESERVATION = "uses_reservation", "Uses a reservation"
        RUNS_AFTER_SCALE_UP = "runs_after_scale_up", "Runs after scale-up"
        BLOCKED = "blocked", "Blocked"
        WAITING = "waiting", "Waiting (scheduling gate)"

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="verdicts")
    workload = models.CharField(max_length=400, help_text="namespace/name")
    namespace = models.CharField(max_length=200)
    kind = models.CharField(max_length=16)
    verdict = models.CharField(max_length=32, choices=Verdict.choices)
    gpus = models.PositiveIntegerField(default=0)
    requested_gpus = models.FloatField(
        default=0.0, help_text="GPUs asked for, shares and partitions as fractions (gpus: whole)"
    )
    reasons = models.JSONField(default=list)
    disagreements = models.JSONField(default=list)
    naive = models.JSONField(default=dict)
    joint = models.JSONField(default=dict)
    relaxations = models.JSONField(
        default=list,
        blank=True,
        help_text="what would unblock it, each verified by the engine (evaluation JSON key)",
    )
    naive_cost_per_hour = models.FloatField(
        default=0.0, help_text="price of the nodes the naive autoscaler adds for it"
    )
    joint_cost_per_hour = models.FloatField(
        default=0.0, help_text="price of the nodes the joint plan adds for it"
    )
    pending_since = models.DateTimeField(
        null=True,
        blank=True,
        help_text="taken_at of the first snapshot of the unbroken run of evaluations listing it",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "kind", "workload"], name="verdict_unique_workload"
            )
        ]
        indexes = [
            models.Index(fields=["evaluation", "verdict"], name="verdict_eval_verdict"),
            models.Index(fields=["evaluation", "namespace"], name="verdict_eval_namespace"),
            models.Index(fields=["workload", "evaluation"], name="verdict_workload_eval"),
        ]
        ordering = ["evaluation", "workload"]

    def __str__(self) -> str:
        return f"{self.workload}: {self.verdict}"


class EvaluatedNode(models.Model):
    """One GPU node as an evaluation saw it, written in bulk with the evaluation.

    The API lists and filters these rows in the database (``/api/v1/nodes/``);
    ``devices`` keeps the node's GPUs as the heatmap cells have them.
    ``reservations`` and ``teams`` are sorted name lists that the node filters match
    on the JSON text (as ``WorkloadVerdict.disagreements``), so they run on SQLite too:
    a node's teams are the namespaces of its pods and the owners of its GPUs'
    reservations. A null place, group or model is unknown (the node lacks the label),
    which an empty label value is not: hence nullable text columns.
    """

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="nodes")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=253)
    zone = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - see above
    block = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - see above
    rack = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - see above
    node_group = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - see above
    gpu_model = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001 - see above
    gpus = models.PositiveIntegerField(default=0)
    allocated_milli = models.PositiveIntegerField(
        null=True, blank=True, help_text="sum over the GPUs; null when any GPU's is unknown"
    )
    devices = models.JSONField(default=list)
    reservations = models.JSONField(default=list)
    teams = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "name"], name="node_unique_per_evaluation"
            )
        ]
        ordering = ["evaluation", "name"]

    def __str__(self) -> str:
        return f"{self.name}@{self.evaluation_id}"


class WhatIfRequest(models.Model):
    """One what-if asked for on the workload page or ``POST /api/v1/what-if/``, answered by
    a worker on the what-if queue (``recommender.whatif.service``, ``tasks.answer_what_if``).

        queued ─► working ─► done (answer) | failed (error_field, error)

    ``answer`` is the engine's JSON as stored, every team's reservations named: it is
    relabelled for whoever reads it (capacityweb.visibility), as pages do with results.
    """

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        WORKING = "working", "Working"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="what_ifs"
    )
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="what_ifs")
    workload = models.CharField(max_length=400, help_text="namespace/name")
    edit = models.JSONField(help_text="{kind, target, amount}, as the API takes it")
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    created_at = models.DateTimeField(default=timezone.now, help_text="the budget starts here")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    answer = models.JSONField(null=True, blank=True)
    error_field = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["state", "created_at"], name="whatif_state_created"),
            models.Index(fields=["user", "state"], name="whatif_user_state"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"what-if {self.pk} on {self.workload}: {self.state}"


class MoveReport(models.Model):
    """An evaluation's "move instead of buy" answer (``recommender.moves.reports``), written by the
    worker's ``find_moves`` task after the evaluation is stored: a deferred answer, so
    pages say "being worked out" until this row exists for the evaluation as stored
    (``evaluation_stored_at`` equal to its ``stored_at``; a re-stored evaluation drops
    its row in the same transaction).

    ``result`` is the engine's ``MoveReport.to_json()`` with every team's reservations
    named (relabelled for whoever reads it, as the evaluation's result); null when the
    search failed, ``error`` saying why. The figures are copied out for ``/metrics``,
    the API's list and the digest.
    """

    evaluation = models.OneToOneField(Evaluation, on_delete=models.CASCADE, related_name="moves")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    evaluation_stored_at = models.DateTimeField(help_text="the evaluation's stored_at it answers")
    stored_at = models.DateTimeField(default=timezone.now)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    workloads_searched = models.PositiveIntegerField(default=0)
    workloads_unblocked = models.PositiveIntegerField(
        default=0, help_text="workloads with a verified plan"
    )
    avoided_per_hour = models.FloatField(
        default=0.0, help_text="buy $/h avoided by the plans recommended over buying"
    )
    saved_per_hour = models.FloatField(
        default=0.0, help_text="on-demand nodes' $/h saved by reservation reconciliation"
    )
    team_savings = models.JSONField(
        default=dict, blank=True, help_text="namespace → $/h moving would save it"
    )
    cpu_seconds = models.FloatField(
        default=0.0, help_text="the search's CPU seconds (its thread's)"
    )

    class Meta:
        ordering = ["-evaluation__taken_at"]

    def __str__(self) -> str:
        return f"moves of evaluation {self.evaluation_id}"

    @property
    def savings_per_hour(self) -> float:
        return round(self.avoided_per_hour + self.saved_per_hour, 2)
