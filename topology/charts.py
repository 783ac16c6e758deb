"""The topology heatmap: evaluation heatmap cells → one compact Plotly figure.

    result["heatmap"] cells ──filter──► domain (zone/block/rack/node/gpu path)
                                              │
     depth 0-2 (cluster, zone, block): one bar per child domain (block or rack),
                 stacked allocated / idle reserved / free / unknown GPUs
     depth 3 (rack): one row per node, one column per GPU
     depth 4-5 (node, device): one row per GPU, one column per 0.1-GPU share
                                              │
                        ONE figure (bars, or one heatmap trace), a legend

Above rack level a cluster of 1,000-10,000 nodes cannot show a row per node
(under one pixel each), so the figure aggregates by domain: a few dozen bars,
each clickable into its domain, and a payload of a few kilobytes. Nodes are
drawn from rack level down.

A GPU cell's colour is its allocation (0 = idle … 1 = fully allocated) on one
scale, with two distinct colours from the Okabe-Ito colour-blind-safe palette
for what a user looks for: free GPUs (bluish green ``FREE_COLOUR``) and idle
GPUs of a reservation (vermillion ``RESERVED_IDLE_COLOUR``); both have a contrast
of at least 3:1 against the white background, which is also the "no GPU"
colour. Unknown allocation gets the sentinel ``UNKNOWN_Z`` below zero, which
the scale paints grey and the colour bar labels "unknown" — unknown is never
drawn as zero. Rows without a GPU in some column are padded with ``None``
(drawn blank, not grey). Everything here is a function of plain dicts, so the
page, the JSON endpoint, the live update and the benchmark share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("zone", "block", "rack", "node", "gpu")
LEVEL_TITLES = {"zone": "zone", "block": "block", "rack": "rack", "node": "node", "gpu": "GPU"}
DEPTH_TITLES = ("cluster", "zone", "block", "rack", "node", "device")
RACK_DEPTH = 3
NODE_DEPTH = 4
UNKNOWN = "~"  # path segment for "this node has no label at that level"
UNKNOWN_Z = -0.2
RESERVED_IDLE_Z = -0.1  # an unallocated GPU (or share) of a reservation
WHOLE_GPU_MILLI = 1000
SHARE_MILLI = 100
SHARES_PER_GPU = WHOLE_GPU_MILLI // SHARE_MILLI
UNKNOWN_GREY = "#9e9e9e"
BACKGROUND = "#ffffff"  # also the "no GPU" colour: blank cells show the background
# Okabe-Ito (Okabe & Ito, "Color Universal Design", 2008): contrast vs white 3.4:1 and 3.9:1.
FREE_COLOUR = "#009E73"  # bluish green
RESERVED_IDLE_COLOUR = "#D55E00"  # vermillion
ALLOCATED_COLOUR = "#08519c"
ALLOCATION_COLOURS = ("#9ecae1", "#4292c6", "#08519c", "#08306b")  # 0.1 % … 100 % allocated
ROW_LABEL_LIMIT = 80


@dataclass(frozen=True)
class HeatmapFilters:
    """What the page's filter form narrows the cells to; empty fields match everything."""

    node_group: str = ""
    gpu_model: str = ""
    reservation: str = ""
    team: str = ""
    team_reservations: frozenset[str] = field(default_factory=frozenset)

    def matches(self, cell: Mapping[str, Any]) -> bool:
        if self.node_group and cell.get("nodeGroup") != self.node_group:
            return False
        if self.gpu_model and cell.get("model") != self.gpu_model:
            return False
        if self.reservation and cell.get("reservation") != self.reservation:
            return False
        if self.team:
            in_team = any(str(pod).split("/", 1)[0] == self.team for pod in cell.get("pods") or ())
            return in_team or cell.get("reservation") in self.team_reservations
        return True


def parse_domain(text: str) -> tuple[str, ...]:
    """``"z1/b1/~"`` → ``("z1", "b1", "~")``; at most one segment per level."""
    segments = tuple(segment for segment in text.strip("/").split("/") if segment)
    return segments[: len(LEVELS)]


def cell_path(cell: Mapping[str, Any]) -> tuple[str, ...]:
    """The cell's full domain path, ``UNKNOWN`` where the node lacks a level's label."""
    return tuple(UNKNOWN if cell.get(level) is None else str(cell[level]) for level in LEVELS)


def segment_label(level: str, segment: str) -> str:
    title = LEVEL_TITLES[level]
    return f"unknown {title}" if segment == UNKNOWN else f"{title} {segment}"


def breadcrumb(domain: Sequence[str]) -> list[dict[str, str]]:
    """Links from the whole cluster down to ``domain``, each with the domain it opens."""
    crumbs = [{"label": "cluster", "domain": ""}]
    for depth, segment in enumerate(domain):
        crumbs.append(
            {
                "label": segment_label(LEVELS[depth], segment),
                "domain": "/".join(domain[: depth + 1]),
            }
        )
    return crumbs


def filter_options(cells: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The distinct node groups, GPU models, reservations and teams the filters offer."""
    groups, models, reservations, teams = set(), set(), set(), set()
    for cell in cells:
        groups.add(cell.get("nodeGroup"))
        models.add(cell.get("model"))
        reservations.add(cell.get("reservation"))
        teams.update(str(pod).split("/", 1)[0] for pod in cell.get("pods") or () if "/" in pod)
    return {
        "nodeGroups": sorted(g for g in groups if g),
        "models": sorted(m for m in models if m),
        "reservations": sorted(r for r in reservations if r),
        "teams": sorted(teams),
    }


def allocation_z(allocated_milli: int | None, *, reserved: bool = False) -> float:
    """0…1 allocation of a whole GPU, the idle-reserved or the unknown sentinel."""
    if allocated_milli is None:
        return UNKNOWN_Z
    if allocated_milli <= 0 and reserved:
        return RESERVED_IDLE_Z
    return round(min(max(allocated_milli, 0), WHOLE_GPU_MILLI) / WHOLE_GPU_MILLI, 3)


def share_z(allocated_milli: int | None, share_index: int, *, reserved: bool = False) -> float:
    """Allocation of the ``share_index``-th 0.1-GPU share, filled in order; an
    unfilled share of a reserved GPU is idle reserved."""
    if allocated_milli is None:
        return UNKNOWN_Z
    filled = allocated_milli - share_index * SHARE_MILLI
    if filled <= 0 and reserved:
        return RESERVED_IDLE_Z
    return round(min(max(filled, 0), SHARE_MILLI) / SHARE_MILLI, 3)


def hover_text(cell: Mapping[str, Any], z: float) -> str:
    if z == UNKNOWN_Z:
        allocation = "allocation unknown"
    elif z == RESERVED_IDLE_Z:
        allocation = "idle reserved"
    elif z == 0:
        allocation = "free"
    else:
        allocation = f"{round(z * 100)}% allocated"
    pods = ", ".join(str(pod) for pod in cell.get("pods") or ()) or "no pods"
    parts = [allocation, pods]
    if cell.get("units"):  # counted units of a shared GPU: "3/4 replicas"
        parts.insert(1, str(cell["units"]))
    if cell.get("model"):
        parts.insert(0, str(cell["model"]))
    if cell.get("reservation"):
        parts.append(f"reservation {cell['reservation']}")
    return " · ".join(parts)


def node_sort_key(path: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """Known domains first, by name; unknown ones after."""
    return tuple((segment == UNKNOWN, segment) for segment in path)


def gpu_sort_key(cell: Mapping[str, Any]) -> tuple[int, int, str]:
    name = str(cell.get("gpu"))
    digits = "".join(ch for ch in name if ch.isdigit())
    return (0, int(digits), name) if digits else (1, 0, name)


def select_cells(
    cells: Iterable[Mapping[str, Any]], domain: Sequence[str], filters: HeatmapFilters
) -> list[Mapping[str, Any]]:
    prefix = tuple(domain)
    return [
        cell for cell in cells if cell_path(cell)[: len(prefix)] == prefix and filters.matches(cell)
    ]


def heatmap_view(
    cells: Iterable[Mapping[str, Any]],
    *,
    domain: Sequence[str] = (),
    filters: HeatmapFilters | None = None,
) -> dict[str, Any]:
    """The compact heatmap payload: figure, row paths (for drill-down) and breadcrumb."""
    domain = tuple(domain)
    selected = select_cells(cells, domain, filters or HeatmapFilters())
    child_depth = narrowing_depth(selected, len(domain))
    if child_depth is not None:
        return domain_view(selected, domain, child_depth)
    if len(domain) < NODE_DEPTH:
        rows, row_paths, z, text, columns = node_rows(selected, len(domain))
        axes = ("GPU index on the node", "node")
    else:
        rows, row_paths, z, text, columns = share_rows(selected)
        axes = (f"share ({SHARE_MILLI} milli-GPU each)", "GPU")
    targets = [drill_target(path, len(domain), row_paths) for path in row_paths]
    return {
        **view_header(selected, domain, kind="gpus" if len(domain) < NODE_DEPTH else "shares"),
        "cellCount": sum(1 for row in z for value in row if value is not None),
        "rowPaths": row_paths,
        "rowTargets": targets,
        "children": children(targets, len(domain)),
        "pods": sorted({str(pod) for cell in selected for pod in cell.get("pods") or ()})
        if len(domain) > NODE_DEPTH
        else [],
        "figure": heatmap_figure(rows, z, text, columns=columns, axes=axes),
    }


def view_header(
    selected: Sequence[Mapping[str, Any]], domain: tuple[str, ...], *, kind: str
) -> dict[str, Any]:
    return {
        "version": 2,  # recommender.selectors.HEATMAP_PAYLOAD_VERSION
        "kind": kind,  # "domains" (bars above rack level), "gpus" or "shares" (heatmap)
        "depth": len(domain),
        "level": DEPTH_TITLES[len(domain)],
        "domain": "/".join(domain),
        "breadcrumb": breadcrumb(domain),
        "gpuCount": len(selected),
    }


# --- above rack level: one bar per domain -----------------------------------------


def narrowing_depth(cells: Sequence[Mapping[str, Any]], depth: int) -> int | None:
    """The depth of the domains to aggregate by below ``depth`` (1-3: zone, block, rack),
    skipping levels every cell shares; None at rack level and below, or when every
    cell is in one rack (its nodes are drawn then)."""
    if depth >= RACK_DEPTH:
        return None
    paths = {cell_path(cell)[:RACK_DEPTH] for cell in cells}
    target = depth + 1
    while target < RACK_DEPTH and len({path[:target] for path in paths}) <= 1:
        target += 1
    if len({path[:target] for path in paths}) <= 1:
        return None
    return target


@dataclass
class DomainTally:
    """Whole GPUs of one domain, by the glossary's definitions (``recommender.glossary``),
    the same the overview and the API count (``evaluation._allocated_gpus``,
    ``reservations.idle.idle_gpus_on``): *allocated* = a pod holds any share of it,
    *idle reserved* = a reservation covers it and no pod holds any of it, *free* = no
    reservation and no pod. A GPU a 0.2-GPU pod uses is allocated, never 0.8 free: the
    unused shares of shared GPUs are a separate figure (``unused_share_milli``)."""

    allocated_gpus: int = 0
    idle_reserved_gpus: int = 0
    free_gpus: int = 0
    unknown_gpus: int = 0
    gpus: int = 0
    unused_share_milli: int = 0

    def add(self, cell: Mapping[str, Any]) -> None:
        self.gpus += 1
        allocated = cell.get("allocatedMilli")
        if allocated is None:
            self.unknown_gpus += 1
            return
        allocated = min(max(int(allocated), 0), WHOLE_GPU_MILLI)
        if allocated:
            self.allocated_gpus += 1
            self.unused_share_milli += WHOLE_GPU_MILLI - allocated
        elif cell.get("reservation"):
            self.idle_reserved_gpus += 1
        else:
            self.free_gpus += 1

    def hover(self, label: str) -> str:
        unused = round(self.unused_share_milli / WHOLE_GPU_MILLI, 3)
        return (
            f"<b>{label}</b>: {self.gpus} GPUs<br>"
            f"free {self.free_gpus}<br>"
            f"idle reserved {self.idle_reserved_gpus}<br>"
            f"allocated {self.allocated_gpus} (unused shares on them: {unused:g} GPU)<br>"
            f"unknown {self.unknown_gpus}"
        )


DOMAIN_SERIES = (
    ("free", FREE_COLOUR, "free_gpus"),
    ("idle reserved", RESERVED_IDLE_COLOUR, "idle_reserved_gpus"),
    ("allocated", ALLOCATED_COLOUR, "allocated_gpus"),
)


def domain_view(
    selected: Sequence[Mapping[str, Any]], domain: tuple[str, ...], child_depth: int
) -> dict[str, Any]:
    """One stacked bar per child domain (free first, so free GPUs line up on the axis)."""
    tallies: dict[tuple[str, ...], DomainTally] = {}
    for cell in selected:
        tallies.setdefault(cell_path(cell)[:child_depth], DomainTally()).add(cell)
    paths = sorted(tallies, key=node_sort_key)
    targets = ["/".join(path) for path in paths]
    labels = [
        " › ".join(
            segment_label(LEVELS[index], segment)
            for index, segment in enumerate(path)
            if index >= len(domain)
        )
        for path in paths
    ]
    return {
        **view_header(selected, domain, kind="domains"),
        "cellCount": len(paths),
        "childLevel": LEVEL_TITLES[LEVELS[child_depth - 1]],
        "rowPaths": targets,
        "rowTargets": targets,
        "children": [
            {"domain": target, "label": label}
            for target, label in zip(targets, labels, strict=True)
        ],
        "pods": [],
        "figure": domain_figure(
            labels, targets, [tallies[path] for path in paths], LEVELS[child_depth - 1]
        ),
    }


def domain_figure(
    labels: list[str], targets: list[str], tallies: list[DomainTally], level: str
) -> dict[str, Any]:
    """Horizontal stacked bars: free, idle reserved, allocated, unknown GPUs per domain.

    ``customdata`` carries each bar's domain, so a click opens the bar it landed on
    whatever the bar's height.
    """
    hovers = [tally.hover(label) for tally, label in zip(tallies, labels, strict=True)]
    series = [
        (name, colour, [float(getattr(tally, field)) for tally in tallies])
        for name, colour, field in DOMAIN_SERIES
    ]
    series.append(("unknown", UNKNOWN_GREY, [float(tally.unknown_gpus) for tally in tallies]))
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "x": values,
            "y": labels,
            "customdata": targets,
            "marker": {"color": colour},
            "hovertext": hovers,
            "hoverinfo": "text",
        }
        for name, colour, values in series
    ]
    idle = [tally.idle_reserved_gpus for tally in tallies]
    data.append(idle_reserved_panel(labels, targets, idle))
    height = min(max(260, 22 * len(labels) + 140), 1800)
    layout = {
        "barmode": "stack",
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 50},
        "xaxis": {
            "title": {"text": "GPUs (allocated: any pod holds a share)"},
            "fixedrange": True,
            "domain": [0, 0.72],
        },
        "xaxis2": {
            "title": {"text": "idle reserved GPUs, own scale"},
            "fixedrange": True,
            "domain": [0.76, 1],
            "range": [0, max(idle, default=0) * 1.35 or 1],
            "rangemode": "tozero",
        },
        "yaxis": {
            "title": {"text": LEVEL_TITLES[level]},
            "type": "category",
            "autorange": "reversed",
            "automargin": True,
            "fixedrange": True,
        },
        "legend": {"orientation": "h", "traceorder": "normal", "x": 0, "y": 1, "yanchor": "bottom"},
        "plot_bgcolor": BACKGROUND,
        "hoverlabel": {"align": "left"},
    }
    return {"data": data, "layout": layout}


def idle_reserved_panel(labels: list[str], targets: list[str], idle: list[int]) -> dict[str, Any]:
    """The idle reserved GPUs again, on an axis of their own beside the stacked bars.

    At cluster and zone level a domain holds thousands of GPUs and its idle reserved
    ones are a sliver of the stack; here the largest count spans the panel and each
    bar says its number. The stacked bars stay the one picture of the whole domain;
    this trace (``meta: "idle-reserved-panel"``) is left out of their sums.
    """
    return {
        "type": "bar",
        "orientation": "h",
        "name": "idle reserved (own scale)",
        "meta": "idle-reserved-panel",
        "showlegend": False,
        "x": [float(count) for count in idle],
        "y": labels,
        "xaxis": "x2",
        "customdata": targets,
        "marker": {"color": RESERVED_IDLE_COLOUR},
        "text": [str(count) for count in idle],
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "<b>%{y}</b>: %{x} idle reserved GPUs<extra></extra>",
    }


# --- rack level and below: one cell per GPU or share ------------------------------


def drill_target(row_path: str, depth: int, row_paths: Sequence[str]) -> str | None:
    """The domain a click on this row opens: one level down, skipping levels that don't narrow.

    Where every row shares the next level's value (one zone, or no zone label at
    all) that level is skipped, so a cluster without topology labels opens the
    node in one click.
    """
    segments = row_path.split("/")
    if depth > NODE_DEPTH:
        return None
    if depth == NODE_DEPTH:
        return "/".join(segments[: NODE_DEPTH + 1])
    target = depth + 1
    while target < NODE_DEPTH:
        prefix = "/".join(segments[:target]) + "/"
        if not all(f"{path}/".startswith(prefix) for path in row_paths):
            break
        target += 1
    return "/".join(segments[:target])


def children(targets: Sequence[str | None], depth: int) -> list[dict[str, str]]:
    """The distinct drill-down targets with labels, for the keyboard drill-down control."""
    seen: dict[str, str] = {}
    for target in targets:
        if target is None or target in seen:
            continue
        segments = target.split("/")
        seen[target] = " › ".join(
            segment_label(LEVELS[index], segment)
            for index, segment in enumerate(segments)
            if index >= depth
        )
    return [{"domain": domain, "label": label} for domain, label in seen.items()]


def node_rows(
    cells: Sequence[Mapping[str, Any]], depth: int
) -> tuple[list[str], list[str], list[list[float | None]], list[list[str]], list[str]]:
    """One row per node (grouped zone › block › rack › node), one column per GPU."""
    by_node: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for cell in cells:
        by_node.setdefault(cell_path(cell)[:NODE_DEPTH], []).append(cell)
    width = max((len(gpus) for gpus in by_node.values()), default=0)
    rows, row_paths, z, text = [], [], [], []
    for path in sorted(by_node, key=node_sort_key):
        gpus = sorted(by_node[path], key=gpu_sort_key)
        rows.append(row_label(path, depth))
        row_paths.append("/".join(path))
        values: list[float | None] = [
            allocation_z(cell.get("allocatedMilli"), reserved=bool(cell.get("reservation")))
            for cell in gpus
        ]
        labels = [
            f"GPU {cell.get('gpu')} · {hover_text(cell, value)}"
            for cell, value in zip(gpus, values, strict=True)
        ]
        z.append(values + [None] * (width - len(values)))
        text.append(labels + [""] * (width - len(labels)))
    return rows, row_paths, z, text, [str(index) for index in range(width)]


def share_rows(
    cells: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[str], list[list[float | None]], list[list[str]], list[str]]:
    """Inside a node: one row per GPU, one column per 0.1-GPU share."""
    rows, row_paths, z, text = [], [], [], []
    for cell in sorted(cells, key=gpu_sort_key):
        path = cell_path(cell)
        rows.append(f"{path[3]} · GPU {cell.get('gpu')}")
        row_paths.append("/".join(path))
        allocated = cell.get("allocatedMilli")
        reserved = bool(cell.get("reservation"))
        values: list[float | None] = [
            share_z(allocated, i, reserved=reserved) for i in range(SHARES_PER_GPU)
        ]
        z.append(values)
        summary = hover_text(cell, allocation_z(allocated, reserved=reserved))
        text.append([f"share {i + 1} · {summary}" for i in range(SHARES_PER_GPU)])
    return rows, row_paths, z, text, [str(i + 1) for i in range(SHARES_PER_GPU)]


def row_label(path: tuple[str, ...], depth: int) -> str:
    """The node's name prefixed by the levels below the current domain: ``b1 › r2 › node``."""
    inner = ["?" if segment == UNKNOWN else segment for segment in path[depth : NODE_DEPTH - 1]]
    return " › ".join([*inner, path[NODE_DEPTH - 1]])


def scale_position(z: float) -> float:
    """Where ``z`` sits on the colour scale (0 at UNKNOWN_Z, 1 at fully allocated)."""
    return round((z - UNKNOWN_Z) / (1 - UNKNOWN_Z), 5)


def allocation_colourscale() -> list[list[Any]]:
    """Step bands below 0.001 (unknown grey, idle reserved, free), then one
    sequential blue scale for 0.1 % … 100 % allocated."""
    step = 0.0001
    unknown_top = scale_position((UNKNOWN_Z + RESERVED_IDLE_Z) / 2)
    reserved_top = scale_position(RESERVED_IDLE_Z / 2)
    free_top = scale_position(0.0005)  # allocations are rounded to 0.001
    scale: list[list[Any]] = [
        [0.0, UNKNOWN_GREY],
        [unknown_top, UNKNOWN_GREY],
        [unknown_top + step, RESERVED_IDLE_COLOUR],
        [reserved_top, RESERVED_IDLE_COLOUR],
        [reserved_top + step, FREE_COLOUR],
        [free_top, FREE_COLOUR],
    ]
    steps = len(ALLOCATION_COLOURS) - 1
    for index, colour in enumerate(ALLOCATION_COLOURS):
        scale.append([round(free_top + step + (1 - free_top - step) * index / steps, 5), colour])
    return scale


def heatmap_figure(
    rows: list[str],
    z: list[list[float | None]],
    text: list[list[str]],
    *,
    columns: list[str],
    axes: tuple[str, str],
) -> dict[str, Any]:
    """A Plotly figure dict with a single heatmap trace; sized to the row count."""
    few_rows = len(rows) <= ROW_LABEL_LIMIT
    trace = {
        "type": "heatmap",
        "z": z,
        "x": columns,
        "y": rows,
        "text": text,
        "hovertemplate": "<b>%{y}</b><br>%{text}<extra></extra>",
        "colorscale": allocation_colourscale(),
        "zmin": UNKNOWN_Z,
        "zmax": 1,
        "xgap": 1 if few_rows else 0,
        "ygap": 1 if few_rows else 0,
        "colorbar": {
            "title": {"text": "allocated"},
            "tickvals": [(UNKNOWN_Z + RESERVED_IDLE_Z) / 2, RESERVED_IDLE_Z, 0, 0.25, 0.5, 1],
            "ticktext": ["unknown", "idle reserved", "free", "25%", "50%", "100%"],
        },
    }
    height = min(max(260, 22 * len(rows) + 120), 900)
    layout = {
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 10, "b": 50},
        "xaxis": {"title": {"text": axes[0]}, "type": "category", "fixedrange": True},
        "yaxis": {
            "title": {"text": axes[1]},
            "type": "category",
            "autorange": "reversed",
            "automargin": True,
            "showticklabels": few_rows,
            "fixedrange": True,
        },
        "plot_bgcolor": BACKGROUND,
        "hoverlabel": {"align": "left"},
    }
    return {"data": [trace], "layout": layout}
