"""The suite resolves no host name outside this machine (tests/conftest.py).

A test that reached a real resolver would depend on the network and could leak
what it asks for (a fuzzed webhook host, an example name) to whoever answers.
"""

from __future__ import annotations

import socket

import pytest

from reservations.webhook_guard import UnresolvedWebhookHost, resolve


def test_it_refuses_to_resolve_an_outside_name_and_records_it(outside_lookups: list[str]) -> None:
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("hooks.example.com", 443)

    assert outside_lookups == ["hooks.example.com"]
    outside_lookups.clear()  # recorded: the guard would fail this test at its end


def test_it_refuses_a_webhook_host_in_the_guard_without_a_lookup(
    outside_lookups: list[str],
) -> None:
    with pytest.raises(UnresolvedWebhookHost):
        resolve("a-fuzzed-host.example.org", 443)

    assert outside_lookups == ["a-fuzzed-host.example.org"]
    outside_lookups.clear()


def test_it_resolves_this_machines_names_as_before(outside_lookups: list[str]) -> None:
    answers = socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)

    assert answers
    assert outside_lookups == []
