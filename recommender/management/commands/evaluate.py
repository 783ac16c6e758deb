"""``manage.py evaluate FILE|DIR|- [--format text|json] [--at TIME] [--scheduler-profile NAME]
[--autoscaler NAME] [--autoscaler-args "ARGS"] [--autoscaler-priorities FILE]``.

Thin on purpose: read_objects → parse_objects → evaluate → print. First what
was read (kinds read, ignored, rejected, pods found and synthesized from
controllers, gangs, queues, topology source, unsupported): nothing is dropped
silently. Bad input (unreadable file, invalid object, bad ``--at``, no object
at all) prints one ``file: Kind/ns/name: field: reason`` line each on stderr
and exits 2, after evaluating what could be read; no traceback ever reaches
the user. ``--at`` defaults to now (the only clock read, here in the shell,
never in the engine). ``--scheduler-profile`` (default: the SCHEDULER_PROFILE
setting, kube-default) is the scoring profile simulated, ``--autoscaler``
(default: the AUTOSCALER_PROFILE setting, cluster-autoscaler) the autoscaler the
naive side models; an unknown name exits 2 naming the valid ones.
``--autoscaler-args`` (default: the CLUSTER_AUTOSCALER_ARGS setting) is the
cluster-autoscaler's own command line, ``--autoscaler-priorities`` a file with its
priority expander ConfigMap's ``priorities`` YAML (``caflags``); a flag or value
cluster-autoscaler refuses exits 2 naming it. ``--timings`` prints to stderr the
process CPU seconds of each phase: reading and parsing, the critical pass
(``evaluation.critical_pass``), each deferred part (``fragmentation_part``,
``score_tie_part``, ``what_if_part``, ``naive_range_part``, ``relaxation_part``) and
the report, one ``timings PHASE SECONDS s cpu`` line each, then the critical and
deferred totals apart.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from recommender.actions.report import report_json, report_text
from recommender.engine.autoscaler.caflags import CaFlags, parse_priorities, read_flags
from recommender.engine.autoscaler.profiles import profile_names
from recommender.engine.evaluate.evaluation import (
    Evaluation,
    combined,
    critical_pass,
    fragmentation_part,
    naive_range_part,
    relaxation_part,
    score_tie_part,
    what_if_part,
)
from recommender.engine.evaluate.report import render_text
from recommender.engine.moves.report import moves_for, render_moves
from recommender.engine.scheduler.profiles import PROFILES, profile_named as scheduler_profile_named
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.kube.providers.prices import table_in
from topology.kube.summary import render_summary, snapshot_summary
from topology.model.hardware import ModelError

BAD_INPUT_EXIT_CODE = 2
NOTHING_TO_EVALUATE = "nothing to evaluate: no Kubernetes or capacityweb.io object was read"


class Command(BaseCommand):
    help = "Explain pending GPU work and what the autoscaler should add, for a snapshot file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="JSON/YAML file, directory of them, or - for stdin")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument(
            "--moves",
            action="store_true",
            help="also say what to move instead of buy (a moves key in the JSON)",
        )
        parser.add_argument("--at", help="evaluation instant, RFC 3339 (default: now)")
        parser.add_argument("--cluster-name", default="snapshot", help="name shown in reports")
        parser.add_argument(
            "--autoscaler",
            default=None,
            help="the autoscaler the naive side models: "
            + ", ".join(profile_names())
            + " (default: the AUTOSCALER_PROFILE setting)",
        )
        parser.add_argument(
            "--autoscaler-args",
            default=None,
            help="the cluster-autoscaler's command line, e.g. \"--expander=price "
            '--max-nodes-total=200" (default: the CLUSTER_AUTOSCALER_ARGS setting)',
        )
        parser.add_argument(
            "--autoscaler-priorities",
            default=None,
            help="file with the priority expander ConfigMap's data.priorities YAML",
        )
        parser.add_argument(
            "--extended-resource-toleration",
            choices=("auto", "on", "off"),
            default="auto",
            help="whether the API server runs the ExtendedResourceToleration admission "
            "(auto: where the nodes carry GKE's labels)",
        )
        parser.add_argument(
            "--scheduler-profile",
            help=f"scoring profile the cluster's scheduler runs: {', '.join(PROFILES)} "
            "(default: the SCHEDULER_PROFILE setting)",
        )
        parser.add_argument(
            "--timings",
            action="store_true",
            help="print each phase's process CPU seconds to stderr (critical and deferred apart)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.clock = PhaseClock()
        self.clock.lap("start-up")  # the interpreter, Django and the imports
        autoscaler = options["autoscaler"] or settings.AUTOSCALER_PROFILE
        if autoscaler not in profile_names():
            self.stderr.write(
                f"--autoscaler: unknown profile {autoscaler!r}; valid profiles: "
                + ", ".join(profile_names())
            )
            sys.exit(BAD_INPUT_EXIT_CODE)
        try:
            ca_flags = parse_ca_flags(options["autoscaler_args"], options["autoscaler_priorities"])
            at = parse_at(options["at"])
            profile = parse_profile(options["scheduler_profile"] or settings.SCHEDULER_PROFILE)
            refused: list[ModelError] = []
            objects = read_objects(
                options["path"],
                max_bytes=settings.MAX_SNAPSHOT_BYTES,
                max_objects=settings.MAX_SNAPSHOT_OBJECTS,
                skipped=refused,
            )
        except ModelError as error:
            self.fail([error])
        if not objects and not refused:  # an empty file is not an idle cluster: say so
            self.fail([ModelError(options["path"], "", "", NOTHING_TO_EVALUATE)])
        toleration = {"auto": None, "on": True, "off": False}[
            options["extended_resource_toleration"]
        ]
        snapshot = parse_objects(
            objects,
            cluster_name=options["cluster_name"],
            prices=table_in(settings.CURRENCY),
            extended_resource_toleration=toleration,
        )
        summary = snapshot_summary(snapshot, refused)
        self.clock.lap("read and parse")
        evaluation = self.evaluate(snapshot.cluster, at, profile, autoscaler, ca_flags)
        cluster, notices, currency = snapshot.cluster, snapshot.notices, settings.CURRENCY
        if options["format"] == "json":
            payload = report_json(evaluation, cluster, notices, currency)
            listed = {(u["object"], u["reason"]) for u in payload["unsupported"]}
            payload["unsupported"] += [
                u for u in summary["unsupported"] if (u["object"], u["reason"]) not in listed
            ]
            payload["input"] = summary["input"]
            if options["moves"]:
                payload["moves"] = moves_for(cluster, evaluation).to_json()
            self.stdout.write(json.dumps(payload, sort_keys=True, indent=2))
        else:
            self.stdout.write(render_summary(summary), ending="")
            text = render_text(evaluation, cluster.node_groups)
            self.stdout.write(text + "\n" + report_text(evaluation, cluster, notices, currency))
            if options["moves"]:
                self.stdout.write("\n" + render_moves(moves_for(cluster, evaluation), currency))
        self.clock.lap("report")
        if options["timings"]:
            for line in self.clock.lines():
                self.stderr.write(line)
        if refused or snapshot.errors:
            self.fail([*refused, *snapshot.errors])

    def evaluate(
        self, cluster: Any, at: datetime, profile: str, autoscaler: str, ca_flags: CaFlags
    ) -> Evaluation:
        """``evaluation.evaluate`` phase by phase: the critical pass, then each deferred
        part, combined (the same answer), each phase on the clock."""
        critical = critical_pass(
            cluster,
            at=at,
            policy=profile,
            autoscaler=autoscaler,
            ca_flags=ca_flags,
            currency=settings.CURRENCY,
        )
        self.clock.lap("critical", critical=True)
        fragmentation = fragmentation_part(critical)
        self.clock.lap("deferred fragmentation")
        ties = score_tie_part(critical)
        self.clock.lap("deferred score-ties")
        what_if = what_if_part(critical)
        self.clock.lap("deferred what-if")
        naive_range = naive_range_part(critical)
        self.clock.lap("deferred naive-range")
        found = relaxation_part(critical)
        self.clock.lap("deferred relaxations")
        return combined(
            critical,
            fragmentation=fragmentation,
            score_ties=ties,
            what_if=what_if,
            naive_range=naive_range,
            relaxations=found,
        )

    def fail(self, errors: list[ModelError]) -> None:
        for error in errors:
            self.stderr.write(str(error))
        sys.exit(BAD_INPUT_EXIT_CODE)


def parse_ca_flags(args: str | None, priorities_path: str | None) -> CaFlags:
    """The command line (or the setting) and the priorities file, read; a ModelError
    naming the option and the flag otherwise."""
    text = args if args is not None else settings.CLUSTER_AUTOSCALER_ARGS
    option = "--autoscaler-args" if args is not None else "CLUSTER_AUTOSCALER_ARGS"
    try:
        flags = read_flags(text)
    except ValueError as error:
        raise ModelError(option, "", "", str(error)) from None
    if priorities_path is None:
        return flags
    try:
        with open(priorities_path, encoding="utf-8") as file:
            return flags.with_priorities(parse_priorities(file.read()))
    except (OSError, ValueError) as error:
        raise ModelError(priorities_path, "", "", str(error)) from None


def parse_profile(name: str) -> str:
    try:
        return scheduler_profile_named(name)
    except ValueError as error:
        raise ModelError("--scheduler-profile", "", "", str(error)) from None


def parse_at(text: str | None) -> datetime:
    """RFC 3339 instant (``Z`` or an offset; naive means UTC), or now when absent."""
    if text is None:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ModelError("--at", "", "", f"not an RFC 3339 timestamp: {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class PhaseClock:
    """Process CPU seconds per phase (``--timings``), the critical pass's apart."""

    def __init__(self) -> None:
        self.started = 0.0  # process_time counts from the process's start
        self.phases: list[tuple[str, float, bool]] = []

    def lap(self, phase: str, *, critical: bool = False) -> None:
        now = time.process_time()
        self.phases.append((phase, now - self.started, critical))
        self.started = now

    def lines(self) -> list[str]:
        lines = [f"timings {phase} {seconds:.2f} s cpu" for phase, seconds, _ in self.phases]
        critical = sum(s for p, s, c in self.phases if c)
        deferred = sum(s for p, s, _ in self.phases if p.startswith("deferred "))
        lines.append(f"timings total critical {critical:.2f} s cpu, deferred {deferred:.2f} s cpu")
        return lines
