"""How long until the autoscaler removes a node a reconciliation emptied, and from what.

cluster-autoscaler removes a node once it has been unneeded (empty counts) for
``--scale-down-unneeded-time`` (default 10m), and looks for scale-down candidates only
``--scale-down-delay-after-add`` (default 10m) after its last scale-up; with
``--scale-down-enabled=false`` it removes none (``cluster-autoscaler/config/flags/
flags.go``, defaults; ``core/scaledown/unneeded/nodes.go`` ``RemovableAt``: unneeded
since longer than the unneeded time). The ingest does not read the cluster-autoscaler
Deployment: the flags are read from its command line when the cluster's setting gives
it (``CaFlags``, as the evaluation ran with it), else the defaults are said, and that
they were not read. Karpenter's ``disruption.consolidateAfter`` (on each NodePool) is
never read. Per-node-group overrides (the cloud provider's autoscaling options) are
not read either.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recommender.engine.autoscaler.caflags import PARSE_BOOL, CaFlags
from recommender.engine.autoscaler.young import go_duration_seconds

DEFAULT_SECONDS = 600.0  # flags.go: scale-down-unneeded-time and -delay-after-add, 10m
UNNEEDED = "scale-down-unneeded-time"
DELAY_AFTER_ADD = "scale-down-delay-after-add"
ENABLED = "scale-down-enabled"
KARPENTER = "Karpenter: after the NodePool's disruption.consolidateAfter (not read)"


@dataclass(frozen=True, slots=True)
class ScaleDown:
    """cluster-autoscaler's scale-down timing for an emptied node."""

    unneeded_seconds: float = DEFAULT_SECONDS
    delay_after_add_seconds: float = DEFAULT_SECONDS
    enabled: bool = True
    read: bool = False  # from the cluster-autoscaler command line given for the cluster

    @classmethod
    def of(cls, flags: CaFlags | None) -> ScaleDown:
        """From the command line the evaluation ran with; the defaults when none was
        given (no flags, or a profile that reads none)."""
        if flags is None or not flags.args:
            return cls()
        given = flags.given

        def seconds(name: str) -> float:
            values = given.get(name)
            found = go_duration_seconds(values[-1]) if values else None
            return DEFAULT_SECONDS if found is None else found

        enabled = PARSE_BOOL[given[ENABLED][-1]] if ENABLED in given else True
        return cls(seconds(UNNEEDED), seconds(DELAY_AFTER_ADD), enabled, read=True)

    def note(self) -> str:
        """In words, with where the figures come from."""
        if not self.enabled:
            return (
                f"cluster-autoscaler removes no node (--{ENABLED}=false, read from its "
                f"command line): remove the emptied node yourself; {KARPENTER}"
            )
        unneeded = f"--{UNNEEDED}={duration(self.unneeded_seconds)}"
        after_add = f"--{DELAY_AFTER_ADD}={duration(self.delay_after_add_seconds)}"
        source = (
            "read from the cluster's cluster-autoscaler command line"
            if self.read
            else "its defaults: no cluster-autoscaler command line was given for the "
            "cluster and its Deployment is not read"
        )
        return (
            f"cluster-autoscaler removes an emptied node once it has been unneeded for "
            f"{unneeded}, and not within {after_add} of its last scale-up ({source}); "
            f"{KARPENTER}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "unneededSeconds": self.unneeded_seconds,
            "delayAfterAddSeconds": self.delay_after_add_seconds,
            "enabled": self.enabled,
            "read": self.read,
        }


def duration(seconds: float) -> str:
    """Go's duration text for whole seconds ("10m0s" shortened: "10m", "1m30s", "45s")."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else ""]
    parts.append(f"{secs}s" if secs or not (hours or minutes) else "")
    return "".join(parts)
