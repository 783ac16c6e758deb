"""When a kube read is a new snapshot: the model, its errors and each kind's state."""

from __future__ import annotations

from topology import services


def _hash(states: dict[str, str]) -> str:
    kinds = {key: {"state": state} for key, state in states.items()}
    return services.content_hash({"nodes": []}, [], services._kinds_read(kinds, {"Node": 2}))


def test_a_kind_turning_forbidden_is_news_and_a_brief_failure_is_not():
    served = _hash({"Node": "served", "PodGroup": "served"})
    assert _hash({"Node": "served", "PodGroup": "forbidden"}) != served
    assert _hash({"Node": "served", "PodGroup": "not served"}) != served
    # failing keeps the kind's last read: the same content, said on the ingest state
    assert _hash({"Node": "served", "PodGroup": "failing"}) == served
