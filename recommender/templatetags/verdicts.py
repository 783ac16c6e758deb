"""``{% verdict_label verdict %}``: a verdict's label in plain words, linked to its term.

A ``waiting`` verdict whose reason is a queue's quota (``topology.kube.kueue.quotas``: "waiting for
quota in queue …") is labelled a quota wait, not a scheduling gate: Kueue gates its
pods, but what holds the workload is the queue's quota, and the fix is there.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from recommender.models import WorkloadVerdict
from recommender.templatetags.glossary import term
from topology.kube.kueue.quotas import QUOTA_WAIT_PREFIX

register = template.Library()
TERMED = {"waiting", "preempts"}


def is_quota_wait(verdict: Any) -> bool:
    reasons = verdict.reasons or []
    return verdict.verdict == "waiting" and any(
        isinstance(reason, str) and reason.startswith(QUOTA_WAIT_PREFIX) for reason in reasons
    )


@register.simple_tag
def verdict_label(verdict: Any) -> SafeString | str:
    if is_quota_wait(verdict):
        return term("quota", "Waiting for queue quota")
    if verdict.verdict in TERMED:
        return term(verdict.verdict, verdict.get_verdict_display())
    return verdict.get_verdict_display()


@register.filter
def verdict_words(value: str) -> str:
    """A verdict value ("runs_after_scale_up") in the words of ``WorkloadVerdict.Verdict``
    (a relaxation's or a what-if's verdict, which is no stored row)."""
    labels = dict(WorkloadVerdict.Verdict.choices)
    return str(labels.get(value, value))
