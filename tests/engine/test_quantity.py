"""Kubernetes quantity parsing, against the examples Kubernetes documents."""

from fractions import Fraction

import pytest

from topology.kube.parse import cpu_milli, memory_bytes, parse_quantity

# From the Kubernetes docs ("Resource units in Kubernetes" and the
# resource.Quantity reference): all of these are the same ~129 MB, 500m is
# half a CPU, 0.1 is 100m.
DOCUMENTED = [
    ("500m", Fraction(1, 2)),
    ("0.1", Fraction(1, 10)),
    ("1Gi", Fraction(2**30)),
    ("1e3", Fraction(1000)),
    ("128974848", Fraction(128974848)),
    ("129e6", Fraction(129_000_000)),
    ("129M", Fraction(129_000_000)),
    ("123Mi", Fraction(123 * 2**20)),
    ("1.5Ki", Fraction(1536)),
    ("2k", Fraction(2000)),
    ("1E", Fraction(10**18)),
    ("1Ei", Fraction(2**60)),
    ("1.5e-3", Fraction(15, 10000)),
    ("-2", Fraction(-2)),
]


@pytest.mark.parametrize(("text", "expected"), DOCUMENTED)
def test_it_parses_documented_quantities_exactly(text, expected):
    assert parse_quantity(text) == expected


def test_it_rounds_cpu_up_to_whole_millicores():
    assert cpu_milli("0.0001") == 1
    assert cpu_milli("500m") == 500
    assert cpu_milli(3) == 3000


def test_it_rounds_memory_up_to_whole_bytes():
    assert memory_bytes("1.5") == 2
    assert memory_bytes("129M") == 129_000_000


@pytest.mark.parametrize("text", ["", "1.2.3", "Gi", "1 Gi", "1GiB", "0x10", "1e", "abc", "1e9999"])
def test_it_rejects_malformed_quantities(text):
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_it_rejects_booleans_although_python_counts_them_as_ints():
    with pytest.raises(ValueError):
        parse_quantity(True)
