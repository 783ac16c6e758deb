"""What the digest says, as plain numbers: ``reservations.digest`` works them out,
``reservations.digest_known`` turns them into text (rendering only formats these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reservations.moves_digest import MoveSavings
from reservations.selectors import ReservationIdle
from reservations.utilisation.selectors import PeriodUtilisation


@dataclass(frozen=True)
class DigestFigures:
    """Everything the digest says, as plain numbers (rendering only formats these)."""

    period_start: datetime
    period_end: datetime
    timezone: str
    clusters: tuple[str, ...]
    team: str
    sampled_reserved_gpu_hours: float
    idle_gpu_hours: float
    idle_cost: float
    previous_idle_gpu_hours: float
    previous_idle_cost: float
    stranded_cost: float
    naive_cost: float
    joint_cost: float
    top_reservations: tuple[ReservationIdle, ...] = ()
    links: dict[str, str] = field(default_factory=dict)
    utilisation: PeriodUtilisation | None = None  # allocated but idle (third section)
    moves: MoveSavings | None = None  # per team, $/h moving would save (fourth section)
    previous_sampled_reserved_gpu_hours: float = 0.0
    has_evaluations: bool = False  # an evaluation covers the period: stranded $ is known

    @property
    def has_samples(self) -> bool:
        """Whether samples saw any reserved GPU in the period: without them, idle is unknown."""
        return self.sampled_reserved_gpu_hours > 0

    @property
    def has_previous_samples(self) -> bool:
        """The same for the period before: without them, the change is unknown."""
        return self.previous_sampled_reserved_gpu_hours > 0

    @property
    def idle_cost_change(self) -> float:
        return self.idle_cost - self.previous_idle_cost

    @property
    def idle_cost_change_percent(self) -> float | None:
        """Change versus the previous period in %; None when that period cost nothing."""
        if self.previous_idle_cost == 0:
            return None
        return 100.0 * self.idle_cost_change / self.previous_idle_cost
