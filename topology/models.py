"""What the topology app stores: clusters, their snapshots, the node groups that can be added.

Cluster ──< Snapshot        one parsed state of the cluster (model_json), stored when its
   │                        content_hash differs from the cluster's latest snapshot's;
   │                        errors hold every rejected object
   └────< NodeGroup         what the autoscaler may add (DESIGN.md NodeGroup spec)
"""

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from topology.kube.providers.prices import PriceTable


class Cluster(models.Model):
    class SourceKind(models.TextChoices):
        FILES = "files", "Exported files"
        KUBE = "kube", "Kubernetes API"
        REPLAY = "replay", "Trace replay"

    name = models.CharField(max_length=200, unique=True)
    source_kind = models.CharField(max_length=16, choices=SourceKind.choices)
    source_settings = models.JSONField(default=dict, blank=True)
    topology_levels = models.JSONField(
        default=list, blank=True, help_text="Levels outermost first: [{key, name}]"
    )
    enabled = models.BooleanField(default=True)
    retention_days = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0)],
        help_text="Keep snapshots this many days (0.25 = 6 h); blank = SNAPSHOT_RETENTION_DAYS",
    )
    autoscaler_profile = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The autoscaler the report's naive side models (e.g. cluster-autoscaler); "
        "blank = AUTOSCALER_PROFILE",
    )
    # checked by recommender.engine.autoscaler.caflags when written through the API
    # (/api/v1/cluster-autoscalers/) and when evaluated
    autoscaler_args = models.TextField(
        blank=True,
        default="",
        help_text="The cluster-autoscaler's command line (its Deployment's args, as a shell "
        "would split them); blank = CLUSTER_AUTOSCALER_ARGS",
    )
    # instance type -> price per node-hour (or region -> price), in CURRENCY: this
    # cluster's own prices, before the bundled table (topology.kube.providers.prices.with_overrides)
    price_overrides = models.JSONField(
        default=dict,
        blank=True,
        help_text="Instance type → price per node-hour (or region → price) in the CURRENCY "
        "setting; wins over the bundled price table for this cluster's discovered groups",
    )
    autoscaler_priorities = models.TextField(
        blank=True,
        default="",
        help_text="The priority expander's ConfigMap (cluster-autoscaler-priority-expander) "
        "data.priorities YAML; blank = none",
    )
    # the names of recommender.engine.scheduler.profiles.PROFILES (topology may not
    # import the recommender app; a test keeps the two lists equal)
    scheduler_profile = models.CharField(
        max_length=32,
        blank=True,
        default="",
        choices=[
            ("kube-default", "kube-default"),
            ("most-allocated", "most-allocated"),
            ("fgd", "fgd"),
        ],
        help_text="Scoring profile the cluster's kube-scheduler runs; blank = SCHEDULER_PROFILE",
    )

    # how the last ingest went (topology.services.record_ingest_*): shown on the cluster's
    # pages and in /metrics; the previous snapshot stays while it is not "ok"
    class IngestState(models.TextChoices):
        OK = "ok", "ok"
        UNREACHABLE = "unreachable", "source unreachable, retrying"
        REFUSED = "refused", "source refused"

    ingest_state = models.CharField(
        max_length=16, choices=IngestState.choices, blank=True, default=""
    )
    ingest_message = models.TextField(blank=True, default="")
    ingest_since = models.DateTimeField(
        null=True, blank=True, help_text="When the ingest entered its current state"
    )
    ingest_kinds = models.JSONField(
        default=dict,
        blank=True,
        help_text="Kube source: per kind {state, version, reason} from the last read",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """A price override that is not a price is refused, naming the entry."""
        try:
            PriceTable(currency="", clouds=()).with_overrides(self.price_overrides, self.name)
        except ValueError as error:
            raise ValidationError({"price_overrides": str(error)}) from error

    @property
    def ingest_kind_problems(self) -> list[dict[str, str]]:
        """Kinds read as none or failing (not served, forbidden, failing), by kind."""
        return [
            {"kind": key, **status}
            for key, status in sorted((self.ingest_kinds or {}).items())
            if status.get("state") != "served"
        ]


class Snapshot(models.Model):
    """One ingested state of a cluster.

    ``evaluation_state`` says why a snapshot has no evaluation, when it never will
    without help: "skipped" (a newer snapshot of the cluster was waiting, and only the
    newest is evaluated) or "failed" (the evaluation raised or ran out of time;
    ``evaluation_note`` says which). Blank: evaluated, or waiting for its evaluation.
    """

    class EvaluationState(models.TextChoices):
        NONE = "", "evaluated or waiting"
        SKIPPED = "skipped", "skipped"
        FAILED = "failed", "failed"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="snapshots")
    taken_at = models.DateTimeField()
    content_hash = models.CharField(max_length=64)
    object_counts = models.JSONField(default=dict)
    model_json = models.JSONField()
    errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    evaluation_state = models.CharField(
        max_length=16, choices=EvaluationState.choices, default="", blank=True
    )
    evaluation_note = models.TextField(default="", blank=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "-taken_at"], name="snapshot_cluster_taken")]
        ordering = ["-taken_at"]
        get_latest_by = "taken_at"

    def __str__(self) -> str:
        return f"{self.cluster_id}@{self.taken_at:%Y-%m-%d %H:%M:%S}"


class NodeGroup(models.Model):
    """A node group of a cluster: written by a user (``project``: it overrides the
    source's group of the same name field by field), or read from the cluster's source
    (``source``: discovered from node labels, the cluster-autoscaler status, Karpenter
    NodePools, or a NodeGroup in the exported files), replaced by every ingest that
    stores a snapshot. Editing a ``source`` row makes it a ``project`` one."""

    class Origin(models.TextChoices):
        PROJECT = "project", "written by a user (overrides the source's)"
        SOURCE = "source", "read from the cluster's source at the last ingest"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="node_groups")
    name = models.CharField(max_length=200)
    spec = models.JSONField(help_text="capacityweb.io/v1alpha1 NodeGroup spec")
    price_per_node_hour = models.FloatField(default=0.0)
    min_size = models.PositiveIntegerField(default=0)
    max_size = models.PositiveIntegerField(default=0)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.PROJECT)
    source = models.CharField(
        max_length=300, blank=True, default="", help_text="Where the source's group was found"
    )
    current_size = models.PositiveIntegerField(default=0, help_text="Members at the last ingest")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="nodegroup_unique_name")
        ]
        ordering = ["cluster", "name"]

    def __str__(self) -> str:
        return self.name


class IngestLock(models.Model):
    """At most one ingest per cluster: a row that expires, so a killed worker cannot wedge it."""

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, primary_key=True, related_name="ingest_lock"
    )
    token = models.CharField(max_length=64)
    expires_at = models.DateTimeField()
    holder = models.CharField(max_length=200, blank=True, default="")  # who: shown on conflict

    def __str__(self) -> str:
        return f"ingest lock of {self.cluster_id} until {self.expires_at:%H:%M:%S}"
