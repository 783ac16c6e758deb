"""cluster-autoscaler's command line and priority ConfigMap, read as upstream reads them.

Users know their autoscaler by its Deployment's ``command``/``args``; ``parse_flags``
reads that list into ``CaSettings`` the way the binary does:

- ``main.go`` registers the flags of ``config/flags/flags.go`` (Go ``flag``), klog's,
  the leader-election and logging flags, and parses them with pflag
  (``k8s.io/component-base/cli/flag`` ``InitFlags``): ``--name=value``,
  ``--name value``, a boolean alone (``--name``) is true, ``_`` in a name is ``-``
  (``WordSepNormalizeFunc``), the one-letter klog ``-v`` also with one dash; a
  repeated flag sets again (the last wins) except the multi-value flags
  (``--gpu-total``, ``--balancing-ignore-label``, ...), which append; arguments
  that are not flags are left over and the binary ignores them; an unknown flag or
  a value of the wrong type stops the binary (here: ``ValueError`` naming it).
- ``createAutoscalingOptions``: ``--cores-total``/``--memory-total`` are
  ``<min>:<max>`` (``parseMinMaxFlag``: integers, min >= 0, max >= min), memory in
  GiB (times ``units.GiB``); ``--gpu-total`` is ``<type>:<min>:<max>``
  (``parseSingleGpuLimit``); ``expander/factory/expander_factory.go``
  ``ExpanderStrategyFromStrings`` refuses an unknown or repeated expander and any
  expander after ``random``.

Every flag given (``flagtable``: each known flag's type) is one of: read (it sets
``CaSettings``), ignored (no effect on a scale-up decided from one snapshot:
scale-down, timings, logging, clients), or
unsupported (it changes scale-up and the model does not follow it: reported, never
silently matched). Unsupported only when the value differs from upstream's default.

``parse_priorities`` reads the ``priorities`` key of the
``cluster-autoscaler-priority-expander`` ConfigMap (``expander/priority/priority.go``
``parsePrioritiesYAMLString``: a YAML map priority -> list of regexes).

Pure: no Django, no I/O.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from recommender.engine.autoscaler import expander
from recommender.engine.autoscaler.flags import DEFAULT_CLOUD_PROVIDER, GPU_LABELS, CaSettings
from recommender.engine.autoscaler.flagtable import (
    BOOL,
    CA_FLAGS,
    DURATION,
    FLOAT,
    INT,
    MULTI,
    READ,
    UNSUPPORTED,
)
from recommender.engine.autoscaler.young import go_duration_seconds
from topology.model.hardware import UnsupportedField

CA_OBJECT = "cluster-autoscaler"
GIB = 2**30
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"
GRPC = "grpc"

# upstream's defaults of the flags the model reads, for "inEffect"
_DEFAULT_CORES_TOTAL = "0:320000"  # config.DefaultMaxClusterCores
_DEFAULT_MEMORY_TOTAL = "0:6400000"  # config.DefaultMaxClusterMemory (GiB)
PARSE_BOOL = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}  # Go strconv.ParseBool
_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)")


@dataclass(frozen=True, slots=True)
class CaFlags:
    """A cluster-autoscaler command line as the model takes it."""

    settings: CaSettings = CaSettings()
    args: tuple[str, ...] = ()  # as given
    in_effect: Mapping[str, Any] = field(default_factory=dict)  # read flags not at default
    given: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # flag -> values
    ignored: tuple[str, ...] = ()  # flags (and stray arguments) without effect here
    unsupported: tuple[UnsupportedField, ...] = ()

    def with_priorities(self, priorities: Mapping[int, tuple[str, ...]]) -> CaFlags:
        return replace(self, settings=replace(self.settings, priorities=priorities))

    def to_json(self) -> dict[str, Any]:
        return {
            "args": list(self.args),
            "inEffect": dict(self.in_effect),
            "priorities": {
                str(p): list(r) for p, r in sorted(self.settings.priorities.items(), reverse=True)
            },
            "ignored": list(self.ignored),
            "unsupported": [u.to_json() for u in self.unsupported],
        }


def split_args(text: str) -> tuple[str, ...]:
    """A command line as one string (a setting, a form field) split as a shell would."""
    try:
        return tuple(shlex.split(text))
    except ValueError as error:
        raise ValueError(f"cluster-autoscaler args: {error}") from None


def read_flags(args_text: str, priorities_text: str = "") -> CaFlags:
    """A command line given as one string and the priority ConfigMap's YAML (blank:
    none) as the model takes them; ValueError naming the flag or the ConfigMap."""
    flags = parse_flags(split_args(args_text))
    if priorities_text.strip():
        flags = flags.with_priorities(parse_priorities(priorities_text))
    return flags


def parse_flags(args: Sequence[str]) -> CaFlags:
    """``args`` (a Deployment's command and args, or args alone) as cluster-autoscaler
    reads them; ValueError naming the flag and the reason on what the binary refuses."""
    values, ignored = _tokens(list(args))
    settings, in_effect, unsupported = _read(values)
    for name, given in values.items():
        if name in READ:
            continue
        default, reason = UNSUPPORTED.get(name, ("", ""))
        if not reason:
            ignored.append(f"--{name}")
        elif _differs(name, given, default):
            shown = ",".join(given)
            unsupported.append(_unsupported(name, f"{shown}: {reason}"))
        else:
            ignored.append(f"--{name}")
    return CaFlags(
        settings=settings,
        args=tuple(args),
        in_effect=in_effect,
        given={name: tuple(v) for name, v in values.items()},
        ignored=tuple(ignored),
        unsupported=tuple(unsupported),
    )


def dra_note(flags: CaFlags, settings: CaSettings) -> UnsupportedField | None:
    """``--enable-dynamic-resource-allocation`` against what the profile's version
    models (``CaSettings.dra_claims_checked``: 1.34 false, 1.35+ true); None if alike."""
    given = flags.given.get("enable-dynamic-resource-allocation")
    if not given or PARSE_BOOL[given[-1]] == settings.dra_claims_checked:
        return None
    return _unsupported(
        "enable-dynamic-resource-allocation",
        f"{given[-1]}: cluster-autoscaler {settings.version} is modelled with "
        f"{str(settings.dra_claims_checked).lower()} (its default)",
    )


def _tokens(args: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """pflag's parse: flag name -> values in order; stray arguments."""
    if args and not args[0].startswith("-") and _is_binary(args[0]):
        args = args[1:]
    values: dict[str, list[str]] = {}
    stray: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            stray.extend(args[index:])
            break
        if not token.startswith("-") or token == "-":
            stray.append(f"{token} (not a flag: cluster-autoscaler ignores it)")
            continue
        name, has_value, value = token.lstrip("-").partition("=")
        if not token.startswith("--"):  # shorthand: only klog's -v has one letter
            if not name.startswith("v"):
                raise ValueError(f"{token}: unknown shorthand flag (long flags take --)")
            if name[1:]:  # -v4
                has_value, value = "=", name[1:]
            name = "v"
        name = name.replace("_", "-")
        kind = CA_FLAGS.get(name)
        if kind is None:
            raise ValueError(f"--{name}: unknown cluster-autoscaler flag")
        if not has_value:
            if kind == BOOL:
                value = "true"
            elif index < len(args):
                value = args[index]
                index += 1
            else:
                raise ValueError(f"--{name}: flag needs an argument")
        _check_type(name, kind, value)
        values[name] = [*values.get(name, []), value] if kind == MULTI else [value]
    return values, stray


def _is_binary(token: str) -> bool:
    return posixpath.basename(ntpath.basename(token)) == CA_OBJECT


def _check_type(name: str, kind: str, value: str) -> None:
    problem = ""
    if kind == BOOL and value not in PARSE_BOOL:
        problem = "a boolean (true or false)"
    elif kind == INT and _go_int(value) is None:
        problem = "an integer"
    elif kind == FLOAT:
        try:
            float(value)
        except ValueError:
            problem = "a number"
    elif kind == DURATION and not _DURATION.fullmatch(value):
        problem = "a duration such as 10s, 5m or 1h30m"
    if problem:
        raise ValueError(f"--{name}: {value!r} is not {problem}")


def _go_int(value: str) -> int | None:
    """strconv.ParseInt(value, 0, 64), as Go's flag.Int parses."""
    try:
        return int(value, 0)
    except ValueError:
        return None


def _differs(name: str, given: list[str], default: str | None) -> bool:
    if default is None:
        return any(given)
    value = given[-1]
    kind = CA_FLAGS[name]
    if kind == BOOL:
        return PARSE_BOOL[value] != PARSE_BOOL[default]
    if kind in (INT, FLOAT):
        return float(_go_int(value) if kind == INT else value) != float(default)  # type: ignore[arg-type]
    if kind == DURATION:
        zero = not re.search(r"[1-9]", value)  # 0, 0s, 0m0s, 0.0h: all zero
        return not zero if default == "0s" else value != default
    return value != default


def _unsupported(name: str, reason: str) -> UnsupportedField:
    return UnsupportedField(object=CA_OBJECT, field=f"--{name}", reason=reason, blocking=False)


def _read(
    values: Mapping[str, list[str]],
) -> tuple[CaSettings, dict[str, Any], list[UnsupportedField]]:
    """The read flags into CaSettings, with what they set (non-default) and what of
    them the model does not follow."""
    settings = CaSettings()
    in_effect: dict[str, Any] = {}
    unsupported: list[UnsupportedField] = []
    changes: dict[str, Any] = {}
    if "expander" in values:
        chain, dropped = _expanders(values["expander"][-1])
        changes["expanders"] = chain
        if dropped:
            unsupported.append(
                _unsupported(
                    "expander",
                    "grpc: an external expander is not modelled (the chain runs without it)",
                )
            )
        if chain != expander.DEFAULT_EXPANDERS:
            in_effect["--expander"] = values["expander"][-1]
    if "max-nodes-total" in values:
        changes["max_nodes_total"] = _go_int(values["max-nodes-total"][-1])
        if changes["max_nodes_total"]:
            in_effect["--max-nodes-total"] = changes["max_nodes_total"]
    for name, key, scale, default in (
        ("cores-total", "max_cores_total", 1, _DEFAULT_CORES_TOTAL),
        ("memory-total", "max_memory_total_bytes", GIB, _DEFAULT_MEMORY_TOTAL),
    ):
        if name in values:
            text = values[name][-1]
            _, maximum = _min_max(name, text)
            if maximum == 0:
                unsupported.append(
                    _unsupported(
                        name, f"{text}: a maximum of 0 (no scale-up at all) is not modelled"
                    )
                )
            changes[key] = maximum * scale
            if text != default:
                in_effect[f"--{name}"] = text
    provider = values.get("cloud-provider", [DEFAULT_CLOUD_PROVIDER])[-1]
    if "gpu-total" in values:
        limits = dict(_gpu_limit(text) for text in values["gpu-total"])
        label = GPU_LABELS.get(provider)
        if label is None:
            unsupported.append(
                _unsupported(
                    "gpu-total",
                    f"the GPU label of --cloud-provider={provider} is not known to the model: "
                    "GPU limits not applied",
                )
            )
        else:
            changes["max_gpus_total"] = limits
            changes["gpu_label"] = label
            in_effect["--gpu-total"] = values["gpu-total"]
    if provider != DEFAULT_CLOUD_PROVIDER:
        in_effect["--cloud-provider"] = provider
        changes["cloud_provider"] = provider
    if "balance-similar-node-groups" in values:
        changes["balance_similar_node_groups"] = PARSE_BOOL[
            values["balance-similar-node-groups"][-1]
        ]
        if changes["balance_similar_node_groups"]:
            in_effect["--balance-similar-node-groups"] = True
    if "new-pod-scale-up-delay" in values:
        text = values["new-pod-scale-up-delay"][-1]
        changes["new_pod_scale_up_delay_seconds"] = go_duration_seconds(text) or 0.0
        if changes["new_pod_scale_up_delay_seconds"]:
            in_effect["--new-pod-scale-up-delay"] = text
    if "enable-provisioning-requests" in values:
        enabled = PARSE_BOOL[values["enable-provisioning-requests"][-1]]
        changes["provisioning_requests"] = enabled
        if enabled:
            in_effect["--enable-provisioning-requests"] = True
    if "balancing-ignore-label" in values:
        changes["balancing_ignore_labels"] = tuple(values["balancing-ignore-label"])
        in_effect["--balancing-ignore-label"] = values["balancing-ignore-label"]
    if "expendable-pods-priority-cutoff" in values:
        cutoff = _go_int(values["expendable-pods-priority-cutoff"][-1])
        changes["expendable_pods_priority_cutoff"] = cutoff
        if cutoff != settings.expendable_pods_priority_cutoff:
            in_effect["--expendable-pods-priority-cutoff"] = cutoff
    return replace(settings, **changes), in_effect, unsupported


def _expanders(text: str) -> tuple[tuple[str, ...], bool]:
    """``ExpanderStrategyFromStrings``: each known, none twice, nothing after random."""
    names = text.split(",")
    known = (*expander.EXPANDERS, GRPC)
    for index, name in enumerate(names):
        if name not in known:
            raise ValueError(
                f"--expander: expander {name!r} not supported (known: {', '.join(known)})"
            )
        if name in names[:index]:
            raise ValueError(f"--expander: expander {name!r} was specified more than once")
        if index and names[index - 1] == expander.RANDOM:
            raise ValueError(f"--expander: {name!r} comes after random, which always picks one")
    chain = tuple(n for n in names if n != GRPC)
    return chain, len(chain) != len(names)


def _min_max(name: str, text: str) -> tuple[int, int]:
    """``parseMinMaxFlag``: ``<min>:<max>``, integers, 0 <= min <= max."""
    tokens = text.split(":", 1)
    if len(tokens) != 2:
        raise ValueError(f"--{name}: {text!r} is not <min>:<max>")
    low, high = (_decimal(name, t) for t in tokens)
    if low < 0:
        raise ValueError(f"--{name}: min must be greater or equal to 0")
    if high < low:
        raise ValueError(f"--{name}: max must be greater or equal to min")
    return low, high


def _gpu_limit(text: str) -> tuple[str, int]:
    """``parseSingleGpuLimit``: ``<type>:<min>:<max>``, 0 <= min <= max."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"--gpu-total: {text!r} is not <gpu_type>:<min>:<max>")
    low, high = (_decimal("gpu-total", t) for t in parts[1:])
    if low < 0 or high < 0:
        raise ValueError(f"--gpu-total: {text!r}: min and max must be 0 or more")
    if low > high:
        raise ValueError(f"--gpu-total: {text!r}: min is greater than max")
    return parts[0], high


def _decimal(name: str, token: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", token):
        raise ValueError(f"--{name}: {token!r} is not an integer")
    return int(token)


def parse_priorities(text: str) -> dict[int, tuple[str, ...]]:
    """The ConfigMap's ``priorities`` YAML: priority -> regexes of node group names
    (``parsePrioritiesYAMLString``); ValueError naming the ConfigMap and the reason."""
    where = f"ConfigMap {PRIORITY_CONFIGMAP}: data.priorities"
    if not text.strip():
        raise ValueError(f"{where}: empty")
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"{where}: not YAML ({error})") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{where}: not a map of priority to a list of regexes")
    priorities: dict[int, tuple[str, ...]] = {}
    for key, patterns in loaded.items():
        if isinstance(key, bool) or not isinstance(key, int):
            raise ValueError(f"{where}: key {key!r} is not an integer priority")
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ValueError(f"{where}: {key}: not a list of regexes")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"{where}: {key}: regex {pattern!r}: {error}") from None
        priorities[key] = tuple(patterns)
    return priorities
