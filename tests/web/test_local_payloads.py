"""The per-process heatmap payload store: bounded by bytes, least recently used out."""

from __future__ import annotations

from recommender.selectors import BytesLRU


def test_it_evicts_the_least_recently_used_payloads_past_its_byte_bound():
    payloads = BytesLRU(max_bytes=10)
    payloads.set("a", b"aaaa")
    payloads.set("b", b"bbbb")
    assert payloads.get("a") == b"aaaa"  # a is now the most recently used

    payloads.set("c", b"cccc")

    assert payloads.get("b") is None
    assert (payloads.get("a"), payloads.get("c"), payloads.size) == (b"aaaa", b"cccc", 8)


def test_it_keeps_no_payload_larger_than_its_bound_and_counts_a_replacement_once():
    payloads = BytesLRU(max_bytes=10)
    payloads.set("big", b"x" * 11)
    payloads.set("a", b"aaaa")
    payloads.set("a", b"aaaaaa")

    assert (payloads.get("big"), payloads.get("a"), payloads.size) == (None, b"aaaaaa", 6)
