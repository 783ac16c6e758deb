"""What a ``gcloud`` action shown to apply must pass (issue 43): each command one gcloud
accepts as it is, with the arguments its reference requires and nothing it does not know.

Checked against the Google Cloud documentation (GKE "Autoscaling a cluster" and "Resizing
a cluster" how-tos; the container API's ``NodePoolAutoscaling``):

- ``gcloud container node-pools update NAME --cluster C (--location|--zone|--region) L
  --enable-autoscaling`` with the pool's bounds: ``--total-min-nodes``/``--total-max-nodes``
  (the whole pool, GKE >= 1.24) or ``--min-nodes``/``--max-nodes`` (per zone), never both
  kinds ("mutually exclusive"), each a whole number, ``0 <= min <= max``;
- ``gcloud container clusters resize CLUSTER --node-pool NAME --num-nodes N`` and the
  location: ``N`` a whole number >= 0.

``$CLUSTER``/``$LOCATION`` stand for what the snapshot cannot know (the cloud's name of the
cluster, its region or zone): a variable the shell fills in. Comment lines (``#``) and a
trailing comment are not run.
"""

import shlex

LOCATION_FLAGS = ("--location", "--zone", "--region")
UPDATE_FLAGS = {
    "--cluster",
    *LOCATION_FLAGS,
    "--enable-autoscaling",
    "--total-min-nodes",
    "--total-max-nodes",
    "--min-nodes",
    "--max-nodes",
    "--location-policy",
}
VALUELESS = {"--enable-autoscaling", "--async", "--quiet"}
RESIZE_FLAGS = {*LOCATION_FLAGS, "--node-pool", "--num-nodes", "--async", "--quiet"}


def assert_gcloud_runs(text: str) -> None:
    """Every command of a ``gcloud`` action (``text``: its lines) passes."""
    commands = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert commands, text
    for line in commands:
        words = shlex.split(line, comments=True)
        assert words[:2] == ["gcloud", "container"], f"not a gcloud container command: {line}"
        if words[2:4] == ["node-pools", "update"]:
            _assert_pool_update(line, words[4:])
        elif words[2:4] == ["clusters", "resize"]:
            _assert_resize(line, words[4:])
        else:
            raise AssertionError(f"not a command these checks know: {line}")


def _parsed(line: str, words: list[str], known: set[str]) -> tuple[list[str], dict[str, str]]:
    """Positional arguments and ``--flag value`` pairs (``--flag=value`` too)."""
    positional: list[str] = []
    flags: dict[str, str] = {}
    rest = iter(words)
    for word in rest:
        if not word.startswith("--"):
            positional.append(word)
            continue
        name, equals, value = word.partition("=")
        assert name in known, f"{name} is not a flag of this command: {line}"
        assert name not in flags, f"{name} given twice: {line}"
        if name in VALUELESS:
            assert not equals, line
            flags[name] = ""
        else:
            flags[name] = value if equals else next(rest, "")
            assert flags[name] and not flags[name].startswith("--"), f"{name} has no value: {line}"
    return positional, flags


def _location(line: str, flags: dict[str, str]) -> None:
    given = [f for f in LOCATION_FLAGS if f in flags]
    assert len(given) == 1, f"one of {LOCATION_FLAGS} is needed: {line}"


def _count(line: str, flags: dict[str, str], name: str) -> int:
    value = flags[name]
    assert value.isdigit(), f"{name} must be a whole number >= 0, got {value!r}: {line}"
    return int(value)


def _assert_pool_update(line: str, words: list[str]) -> None:
    positional, flags = _parsed(line, words, UPDATE_FLAGS)
    assert len(positional) == 1, f"one node pool NAME: {line}"
    assert "--cluster" in flags, f"--cluster is needed: {line}"
    _location(line, flags)
    total = {"--total-min-nodes", "--total-max-nodes"} & set(flags)
    zonal = {"--min-nodes", "--max-nodes"} & set(flags)
    assert not (total and zonal), f"total and per-zone bounds are mutually exclusive: {line}"
    bounds = ("--total-min-nodes", "--total-max-nodes") if total else ("--min-nodes", "--max-nodes")
    if total or zonal:
        assert "--enable-autoscaling" in flags, f"bounds without --enable-autoscaling: {line}"
        assert set(bounds) <= set(flags), f"both {bounds} are needed: {line}"
        low, high = (_count(line, flags, b) for b in bounds)
        assert low <= high, f"min {low} above max {high}: {line}"


def _assert_resize(line: str, words: list[str]) -> None:
    positional, flags = _parsed(line, words, RESIZE_FLAGS)
    assert len(positional) == 1, f"one CLUSTER: {line}"
    _location(line, flags)
    assert "--node-pool" in flags and "--num-nodes" in flags, f"--node-pool and --num-nodes: {line}"
    _count(line, flags, "--num-nodes")
