"""The deferred parts of the shown evaluation on a page (``recommender.parts``).

``{{ evaluation|part_state:"relaxations" }}``: empty when the part is there, else
"being worked out" (its task has not stored it yet; the page's live socket re-renders it
when it has) or "not worked out: why". Never another evaluation's answer: the part
belongs to the evaluation shown (no query: ``missing`` and ``parts_failed`` are columns).
"""

from __future__ import annotations

from typing import Any

from django import template

from recommender import parts

register = template.Library()


@register.filter
def part_state(evaluation: Any, part: str) -> str:
    return parts.state_of(evaluation, part) or ""
