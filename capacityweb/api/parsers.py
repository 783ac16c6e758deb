"""Request body parsers of the API: JSON with its nesting depth bounded before parsing.

Python's JSON decoder recurses once per level, so a body of 2,000 ``[`` raises
RecursionError: an anonymous 500 on any endpoint that reads JSON, the token
endpoint included. No request this API takes nests deeper than a handful of
levels (a NodeGroup's template is the deepest), so a body deeper than
``MAX_JSON_DEPTH`` is refused as a ParseError (400) before ``json.loads`` sees it.
So is a string holding a character Postgres cannot store (``holds_unstorable_character``).

The depth is counted on the text with string literals removed (a bracket inside
a string is not nesting): escapes first (so an escaped quote ends nothing), then
``"..."`` pairs, then a running sum over the remaining brackets; every step is a
C loop, linear in the body's size (a string pattern that handles escapes itself
retries from every quote of an unterminated string: quadratic).
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

MAX_JSON_DEPTH = (
    64  # the same bound as files read by `evaluate` and `ingest` (topology.ingest.files)
)
ESCAPE = re.compile(r"\\.", re.DOTALL)  # a backslash and the character it escapes
STRING_LITERAL = re.compile(r'"[^"]*"')  # once escapes are gone, quotes pair up
NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
UNSTORABLE_CHARACTER = re.compile("[\x00\ud800-\udfff]")
DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in the JSON ``text``."""
    without_strings = STRING_LITERAL.sub("", ESCAPE.sub("", text))
    brackets = NOT_A_BRACKET.sub("", without_strings)
    return max(accumulate(map(DEPTH_STEP.__getitem__, brackets)), default=0)


class DepthLimitedJSONParser(JSONParser):
    """DRF's JSONParser, refusing a body nested deeper than MAX_JSON_DEPTH before parsing."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = (stream.read() if stream is not None else b"").decode(encoding)
        except (UnicodeDecodeError, LookupError) as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if nesting_depth(text) > MAX_JSON_DEPTH:
            raise ParseError(f"JSON parse error - nesting deeper than {MAX_JSON_DEPTH} levels")
        parse_constant = json.strict_constant if self.strict else None
        try:
            data = json.loads(text, parse_constant=parse_constant)
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if holds_unstorable_character(data):
            raise ParseError(
                "JSON parse error - a string holds U+0000 or an unpaired surrogate (\\ud800-"
                "\\udfff), which text cannot hold"
            )
        return data


def holds_unstorable_character(data: Any) -> bool:
    """Whether a string (key or value) in ``data`` holds U+0000 or a lone surrogate: JSON
    escapes can say them, Python keeps them, Postgres text and jsonb refuse them, so a
    JSON field's value would fail at the INSERT (a 500 found by schemathesis), not here."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if UNSTORABLE_CHARACTER.search(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False
