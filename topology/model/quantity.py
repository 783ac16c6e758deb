"""Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity), exactly.

Pure. Re-exported by ``topology.kube.parse``; a module of its own so the DRA and CEL
parsers can use it without importing the object parser.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

# --- quantities -----------------------------------------------------------------

_BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
# Kubernetes itself caps quantities far below this; the bound keeps a hostile
# "1e999999999" from costing a huge integer.
_MAX_EXPONENT = 60
_MAX_DIGITS = 40


def parse_quantity(text: str | int | float) -> Fraction:
    """A Kubernetes resource.Quantity as an exact Fraction.

    Accepts the canonical forms of k8s.io/apimachinery resource.Quantity:
    plain numbers, decimal SI suffixes (m k M G T P E), binary suffixes
    (Ki … Ei) and decimal exponents (``1e3``). YAML ints/floats are accepted
    because manifests write ``cpu: 3``. Raises ValueError with a reason.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a quantity: {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise ValueError(f"not a quantity: {text!r}")
        return Fraction(Decimal(repr(text)))
    if not isinstance(text, str):
        raise ValueError(f"not a quantity: {type(text).__name__}")
    return _parse_text(text)


@lru_cache(maxsize=8192)
def _parse_text(text: str) -> Fraction:
    """Cached: snapshots repeat the same few quantity strings across thousands of pods."""
    if text.isdigit() and len(text) <= _MAX_DIGITS:
        return Fraction(int(text))
    match = _QUANTITY.match(text.strip())
    if match is None or len(match["number"]) > _MAX_DIGITS:
        raise ValueError(f"not a quantity: {text!r}")
    value = Fraction(Decimal(match["number"]))
    value *= _suffix_multiplier(match["suffix"] or "", text)
    return -value if match["sign"] == "-" else value


def _suffix_multiplier(suffix: str, text: str) -> Fraction:
    if suffix in _BINARY_SUFFIXES:
        return Fraction(_BINARY_SUFFIXES[suffix])
    if suffix in _DECIMAL_SUFFIXES:
        return _DECIMAL_SUFFIXES[suffix]
    exponent = int(suffix[1:])
    if abs(exponent) > _MAX_EXPONENT:
        raise ValueError(f"quantity exponent out of range: {text!r}")
    return Fraction(10) ** exponent


def cpu_milli(quantity: str | int | float | Fraction) -> int:
    """CPU in milli-cores, rounded up like Kubernetes' MilliValue()."""
    value = quantity if isinstance(quantity, Fraction) else parse_quantity(quantity)
    return _ceil(value * 1000)


def memory_bytes(quantity: str | int | float | Fraction) -> int:
    """Bytes (or any count), rounded up like Kubernetes' Value()."""
    value = quantity if isinstance(quantity, Fraction) else parse_quantity(quantity)
    return _ceil(value)


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


def whole_count(quantity: str | int | float | Fraction) -> int:
    """An integer count (pods, GPUs, extended resources), rounded up."""
    return memory_bytes(quantity)
