"""The supported subset of DRA CEL selectors, compiled to AttributeSelectors.

Pure. Kubernetes evaluates full CEL; we compile only what we can evaluate
exactly, and refuse the rest with ``CelUnsupported`` so the pod is diagnosed
"unsupported" instead of silently matching. Supported, ANDed with ``&&``
(parentheses allowed around conjunctions)::

    device.driver == "gpu.nvidia.com"
    device.attributes["dom"].name  OP  literal        OP: == != < <= > >=
    device.attributes["dom"].name in ["a", "b"]
    device.attributes["dom"].flag                      (bool attribute is true)
    device.capacity["dom"].memory  OP  quantity("40Gi")
    device.capacity["dom"].memory.compareTo(quantity("40Gi")) OP 0
    device.capacity["dom"].memory.isGreaterThan(quantity("40Gi"))  (and isLessThan)

Literals: strings ('…' or "…"), integers, true/false. Not supported: ``||``,
``!``, string functions (``matches``, ``lowerAscii`` …), ``semver``, maps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from topology.model.hardware import AttributeSelector
from topology.model.quantity import memory_bytes, parse_quantity

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<number>-?[0-9]+)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,])
    )""",
    re.VERBOSE,
)
_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_MAX_EXPRESSION_CHARS = 10_000


class CelUnsupported(ValueError):
    """The expression is outside the supported subset (the message is the pod's reason)."""


def compile_selector(expression: str) -> tuple[AttributeSelector, ...]:
    """The ANDed terms of ``expression``; raises CelUnsupported beyond the subset."""
    if len(expression) > _MAX_EXPRESSION_CHARS:
        raise CelUnsupported(f"CEL expression not supported: longer than {_MAX_EXPRESSION_CHARS}")
    parser = _Parser(_tokens(expression), expression)
    terms = parser.conjunction()
    if not parser.done():
        parser.unsupported()
    return tuple(terms)


@dataclass(slots=True)
class _Token:
    kind: str
    text: str


def _tokens(expression: str) -> list[_Token]:
    tokens, position = [], 0
    stripped = expression.rstrip()
    while position < len(stripped):
        match = _TOKEN.match(stripped, position)
        if match is None or match.end() == position:
            raise CelUnsupported(f"CEL expression not supported: {_short(expression)}")
        kind = match.lastgroup or "op"
        tokens.append(_Token(kind, match.group(kind)))
        position = match.end()
    return tokens


def _short(expression: str) -> str:
    text = " ".join(expression.split())
    return text if len(text) <= 120 else text[:117] + "..."


class _Parser:
    def __init__(self, tokens: list[_Token], expression: str) -> None:
        self.tokens = tokens
        self.position = 0
        self.expression = expression

    def unsupported(self) -> None:
        raise CelUnsupported(f"CEL expression not supported: {_short(self.expression)}")

    def done(self) -> bool:
        return self.position >= len(self.tokens)

    def peek(self) -> str:
        return self.tokens[self.position].text if not self.done() else ""

    def take(self, expected: str | None = None) -> _Token:
        if self.done() or (expected is not None and self.peek() != expected):
            self.unsupported()
        token = self.tokens[self.position]
        self.position += 1
        return token

    def conjunction(self) -> list[AttributeSelector]:
        terms = self.term()
        while self.peek() == "&&":
            self.take("&&")
            terms += self.term()
        return terms

    def term(self) -> list[AttributeSelector]:
        if self.peek() == "(":
            self.take("(")
            terms = self.conjunction()
            self.take(")")
            return terms
        return [self.comparison()]

    def comparison(self) -> AttributeSelector:
        target, name = self.operand()
        if target == "capacity" and self.peek() == ".":
            return self.capacity_method(name)
        op = self.peek()
        if op == "in":
            self.take()
            return AttributeSelector(target, name, "in", self.string_list())
        if op not in _COMPARISONS:
            if target == "attribute":  # a bare bool attribute
                return AttributeSelector(target, name, "==", True)
            self.unsupported()
        self.take()
        value = self.capacity_literal() if target == "capacity" else self.literal()
        return AttributeSelector(target, name, op, value)

    def operand(self) -> tuple[str, str]:
        if self.take().text != "device":
            self.unsupported()
        self.take(".")
        field = self.take().text
        if field == "driver":
            return "driver", ""
        if field not in ("attributes", "capacity"):
            self.unsupported()
        self.take("[")
        domain = self.string()
        self.take("]")
        self.take(".")
        name = self.take()
        if name.kind != "ident":
            self.unsupported()
        return ("attribute" if field == "attributes" else "capacity"), f"{domain}/{name.text}"

    def capacity_method(self, name: str) -> AttributeSelector:
        self.take(".")
        method = self.take().text
        self.take("(")
        value = self.quantity_call()
        self.take(")")
        if method == "isGreaterThan":
            return AttributeSelector("capacity", name, ">", value)
        if method == "isLessThan":
            return AttributeSelector("capacity", name, "<", value)
        if method != "compareTo":
            self.unsupported()
        op = self.take().text
        if op not in _COMPARISONS or self.take().text != "0":
            self.unsupported()
        return AttributeSelector("capacity", name, op, value)

    def quantity_call(self) -> int:
        if self.take().text != "quantity":
            self.unsupported()
        self.take("(")
        text = self.string()
        self.take(")")
        try:
            return memory_bytes(parse_quantity(text))
        except ValueError:
            self.unsupported()
            raise  # unreachable: unsupported() raises

    def capacity_literal(self) -> int:
        if self.peek() == "quantity":
            return self.quantity_call()
        value = self.literal()
        if isinstance(value, bool) or not isinstance(value, int):
            self.unsupported()
        return int(value)

    def literal(self) -> str | int | bool:
        token = self.take()
        if token.kind == "string":
            return _unquote(token.text)
        if token.kind == "number":
            return int(token.text)
        if token.text in ("true", "false"):
            return token.text == "true"
        self.unsupported()
        raise AssertionError  # unreachable

    def string(self) -> str:
        token = self.take()
        if token.kind != "string":
            self.unsupported()
        return _unquote(token.text)

    def string_list(self) -> tuple[str, ...]:
        self.take("[")
        values = [] if self.peek() == "]" else [self.literal()]
        while self.peek() == ",":
            self.take(",")
            values.append(self.literal())
        self.take("]")
        return tuple(str(v) for v in values)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])
