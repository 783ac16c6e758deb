"""Typed, error-naming access to fields of a Kubernetes object dict.

Pure. Every parser in ``topology.kube.parse`` reads through an ``ObjectContext``
so a wrong type or a missing field becomes a ModelError naming source,
``Kind/ns/name`` and the dotted field path — never a KeyError or a silent
default.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, NoReturn

from topology.model.hardware import LabelRequirement, ModelError
from topology.model.quantity import cpu_milli, memory_bytes, parse_quantity, whole_count


@dataclass(frozen=True, slots=True)
class ObjectContext:
    source: str
    object: str  # Kind/ns/name or Kind/name

    def fail(self, field: str, reason: str) -> NoReturn:
        raise ModelError(self.source, self.object, field, reason)

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        """A mapping field; absent (None) reads as empty."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(field, f"must be an object, got {type_name(value)}")
        return value

    def sequence(self, value: Any, field: str) -> list[Any]:
        """A list field; absent (None) reads as empty."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(field, f"must be a list, got {type_name(value)}")
        return value

    def items(self, value: Any, field: str) -> list[tuple[str, dict[str, Any]]]:
        """``(field path, element)`` for a list of objects."""
        out = []
        for index, element in enumerate(self.sequence(value, field)):
            path = f"{field}[{index}]"
            out.append((path, self.mapping(element, path)))
        return out

    def text(self, value: Any, field: str, *, required: bool = False) -> str:
        if value is None or value == "":
            if required:
                self.fail(field, "required")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.fail(field, f"must be a string, got {type_name(value)}")
        return value if isinstance(value, str) else str(value)

    def integer(
        self,
        value: Any,
        field: str,
        *,
        default: int = 0,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int:
        if value is None:
            return default
        if isinstance(value, bool):
            self.fail(field, "must be an integer, got bool")
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value) < 19:
            value = int(value)
        if not isinstance(value, int):
            self.fail(field, f"must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            self.fail(field, f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            self.fail(field, f"must be at most {maximum}, got {value}")
        return value

    def number(
        self,
        value: Any,
        field: str,
        *,
        default: float = 0.0,
        minimum: float = 0.0,
        maximum: float = float("inf"),
    ) -> float:
        if value is None:
            return default
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                self.fail(field, f"must be a number, got {value!r}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            self.fail(field, f"must be a number, got {value!r}")
        if value < minimum or value in (float("inf"), float("-inf")):
            self.fail(field, f"must be a finite number >= {minimum:g}, got {value!r}")
        try:
            number = float(value)
        except OverflowError:  # an int past float's range (about 1.8e308)
            digits = len(str(abs(value)))  # JSON reads at most 4,300 digits
            reason = f"must be a finite number >= {minimum:g}, got an integer of {digits} digits"
            self.fail(field, reason)
        if number > maximum:
            self.fail(field, f"must be at most {maximum:g}, got {value!r}")
        return number

    def boolean(self, value: Any, field: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(field, f"must be true or false, got {value!r}")
        return value

    def quantity(self, value: Any, field: str) -> Fraction:
        try:
            return parse_quantity(value)
        except ValueError as error:
            self.fail(field, str(error))

    def labels(self, value: Any, field: str) -> dict[str, str]:
        """A string map (labels, nodeSelector); scalar values read as their text."""
        out = {}
        for key, item in self.mapping(value, field).items():
            if not isinstance(key, str) or not key:
                self.fail(field, f"keys must be non-empty strings, got {key!r}")
            if isinstance(item, bool):
                item = "true" if item else "false"
            out[key] = self.text(item, f"{field}.{key}")
        return out

    def timestamp(self, value: Any, field: str) -> datetime | None:
        """An RFC 3339 time (``2026-12-01T00:00:00Z``), timezone-aware (UTC if none), whose
        UTC instant is in years 1 to 9999 (what Python, hence Django, can read back)."""
        if value is None or value == "":
            return None
        if isinstance(value, datetime):
            moment = value
        else:
            try:
                moment = datetime.fromisoformat(self.text(value, field))
            except ValueError:
                self.fail(field, f"not an RFC 3339 time: {value!r}")
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        try:  # an offset can carry a time past datetime's years (Postgres then stores BC)
            moment.astimezone(UTC)
        except OverflowError:
            self.fail(field, f"{value!r}: outside years 1 to 9999 in UTC")
        return moment


def type_name(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def object_label(kind: str, namespace: str, name: str) -> str:
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def namespace_name(ctx: ObjectContext) -> tuple[str, str]:
    """A namespaced object's namespace and name, from its ``Kind/ns/name`` label."""
    _, namespace, name = ctx.object.split("/", 2)
    return namespace, name


# a node selector requirement's operators (label selectors take the first four)
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def node_requirement(
    ctx: ObjectContext, path: str, raw: dict[str, Any], operators: tuple[str, ...] = OPERATORS
) -> LabelRequirement:
    """One ``matchExpressions`` item: a node selector requirement (``operators``
    default: all six), or a label selector requirement (In, NotIn, Exists,
    DoesNotExist: ``topology.kube.core.podaffinity``)."""
    key = ctx.text(raw.get("key"), f"{path}.key", required=True)
    operator = ctx.text(raw.get("operator"), f"{path}.operator", required=True)
    if operator not in operators:
        ctx.fail(f"{path}.operator", f"must be one of {', '.join(operators)}, got {operator!r}")
    values = tuple(
        ctx.text(v, f"{path}.values[{i}]")
        for i, v in enumerate(ctx.sequence(raw.get("values"), f"{path}.values"))
    )
    if operator in ("In", "NotIn") and not values:
        ctx.fail(f"{path}.values", f"{operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values:
        ctx.fail(f"{path}.values", f"{operator} takes no values")
    if operator in ("Gt", "Lt") and (len(values) != 1 or not values[0].lstrip("-").isdigit()):
        ctx.fail(f"{path}.values", f"{operator} needs exactly one integer value")
    return LabelRequirement(key, operator, values)


def resource_amount(ctx: ObjectContext, resource: str, raw: Any, path: str) -> int:
    """A quantity in the model's base unit of ``resource`` (cpu milli, memory bytes, a count)."""
    quantity = ctx.quantity(raw, path)
    if resource == "cpu":
        return cpu_milli(quantity)
    if resource == "memory":
        return memory_bytes(quantity)
    return whole_count(quantity)
