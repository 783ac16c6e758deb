"""The topology heatmap above rack level: one bar per domain, free / idle reserved /
allocated / unknown GPUs, and the colours a colour-blind user can tell apart."""

from __future__ import annotations

import json
from typing import Any

from bench.heatmap import synthetic_cells
from topology import charts


def gpu(zone: str | None, block: str | None, rack: str | None, node: str, index: int,
        allocated: int | None = 0, reservation: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "zone": zone,
        "block": block,
        "rack": rack,
        "node": node,
        "gpu": str(index),
        "model": "H100",
        "allocatedMilli": allocated,
        "pods": ["ml/job"] if allocated else [],
        "reservation": reservation,
        "nodeGroup": "h100",
    }


def series(view: dict[str, Any]) -> dict[str, list[float]]:
    """The stacked bars' series (the idle reserved panel beside them left out)."""
    return {
        trace["name"]: trace["x"]
        for trace in view["figure"]["data"]
        if trace.get("meta") != "idle-reserved-panel"
    }


def panel(view: dict[str, Any]) -> dict[str, Any]:
    (trace,) = [t for t in view["figure"]["data"] if t.get("meta") == "idle-reserved-panel"]
    return trace


def two_zones() -> list[dict[str, Any]]:
    """z1: one free GPU, one GPU 250 m allocated inside reservation r, one unknown;
    z2: two fully allocated GPUs and one idle reserved GPU."""
    return [
        gpu("z1", "b1", "r1", "n1", 0, 0),
        gpu("z1", "b1", "r1", "n1", 1, 250, "r"),
        gpu("z1", "b2", "r2", "n2", 0, None),
        gpu("z2", "b3", "r3", "n3", 0, 1000),
        gpu("z2", "b3", "r3", "n3", 1, 1000),
        gpu("z2", "b3", "r4", "n4", 0, 0, "r"),
    ]


def test_the_cluster_level_draws_one_bar_per_zone_with_its_gpus_split_by_state() -> None:
    """Whole GPUs by the glossary: the 250 m GPU in reservation r is allocated (a pod holds
    a share of it), not 0.75 idle reserved, as the overview and the API count it."""
    view = charts.heatmap_view(two_zones())
    assert view["kind"] == "domains"
    assert view["figure"]["data"][0]["y"] == ["zone z1", "zone z2"]
    assert series(view) == {
        "free": [1.0, 0.0],
        "idle reserved": [0.0, 1.0],
        "allocated": [1.0, 2.0],
        "unknown": [1.0, 0.0],
    }
    assert view["gpuCount"] == 6


def test_a_sliver_of_idle_reserved_gpus_gets_a_readable_bar_of_its_own() -> None:
    """6,000 GPUs in a zone, 13 of them idle reserved: 0.2 % of the stacked bar. Beside
    it, on its own axis, the largest idle count spans most of the panel and each bar
    says its number; a click on it opens the same zone."""
    cells = [gpu("z1", "b1", "r1", f"n{i // 8}", i % 8, 1000) for i in range(5987)]
    cells += [gpu("z1", "b1", "r1", f"r{i // 8}", i % 8, 0, "team-a") for i in range(13)]
    cells += [gpu("z2", "b2", "r2", "m1", i, 0, "team-b") for i in range(4)]
    view = charts.heatmap_view(cells)
    idle = panel(view)
    assert idle["y"] == ["zone z1", "zone z2"]
    assert idle["x"] == [13.0, 4.0] == series(view)["idle reserved"]
    assert idle["text"] == ["13", "4"]
    assert idle["customdata"] == ["z1", "z2"]
    layout = view["figure"]["layout"]
    assert idle["xaxis"] == "x2"
    assert 13 / layout["xaxis2"]["range"][1] > 0.7
    main, side = layout["xaxis"]["domain"], layout["xaxis2"]["domain"]
    assert main[1] < side[0]  # side by side, never overlapping


def test_the_idle_reserved_panel_is_drawn_when_nothing_is_reserved() -> None:
    view = charts.heatmap_view([gpu("z1", "b1", "r1", "n1", 0, 0), gpu("z2", "b2", "r2", "n2", 0)])
    assert panel(view)["x"] == [0.0, 0.0]
    assert view["figure"]["layout"]["xaxis2"]["range"] == [0, 1]


def test_it_says_the_unused_shares_of_allocated_gpus_in_the_hover() -> None:
    view = charts.heatmap_view(two_zones())
    hover = view["figure"]["data"][0]["hovertext"][0]
    assert "allocated 1 (unused shares on them: 0.75 GPU)" in hover


def test_every_bar_carries_the_domain_a_click_opens() -> None:
    view = charts.heatmap_view(two_zones())
    for trace in view["figure"]["data"]:
        assert trace["customdata"] == ["z1", "z2"], trace["name"]
    assert [child["domain"] for child in view["children"]] == ["z1", "z2"]


def test_a_zone_draws_its_blocks_and_a_block_its_racks() -> None:
    zone = charts.heatmap_view(two_zones(), domain=("z1",))
    assert zone["figure"]["data"][0]["customdata"] == ["z1/b1", "z1/b2"]
    assert zone["figure"]["layout"]["yaxis"]["title"]["text"] == "block"
    block = charts.heatmap_view(two_zones(), domain=("z2", "b3"))
    assert block["figure"]["data"][0]["customdata"] == ["z2/b3/r3", "z2/b3/r4"]
    assert series(block)["allocated"] == [2.0, 0.0]


def test_a_level_every_gpu_shares_is_skipped() -> None:
    one_zone = [cell for cell in two_zones() if cell["zone"] == "z2"]
    view = charts.heatmap_view(one_zone)
    assert view["figure"]["data"][0]["customdata"] == ["z2/b3/r3", "z2/b3/r4"]


def test_nodes_are_drawn_only_from_rack_level_down() -> None:
    rack = charts.heatmap_view(two_zones(), domain=("z2", "b3", "r3"))
    assert rack["kind"] == "gpus"
    assert rack["figure"]["data"][0]["type"] == "heatmap"
    assert rack["figure"]["data"][0]["z"] == [[1.0, 1.0]]


def test_a_cluster_in_one_rack_draws_its_nodes_at_once() -> None:
    cells = [gpu(None, None, None, "x1", 0), gpu(None, None, None, "x2", 0, 500)]
    view = charts.heatmap_view(cells)
    assert view["kind"] == "gpus"
    assert view["figure"]["data"][0]["z"] == [[0.0], [0.5]]


def test_an_idle_reserved_gpu_and_its_unfilled_shares_get_their_own_value() -> None:
    rack = charts.heatmap_view(two_zones(), domain=("z2", "b3", "r4"))
    assert rack["figure"]["data"][0]["z"] == [[charts.RESERVED_IDLE_Z]]
    device = charts.heatmap_view(two_zones(), domain=("z1", "b1", "r1", "n1", "1"))
    shares = device["figure"]["data"][0]["z"][0]
    assert shares[:3] == [1.0, 1.0, 0.5]
    assert shares[3:] == [charts.RESERVED_IDLE_Z] * 7


def colour_at(z: float) -> str:
    """The colour the figure's scale paints at ``z`` (its bands are steps)."""
    position = charts.scale_position(z)
    below = [colour for stop, colour in charts.allocation_colourscale() if stop <= position]
    return below[-1]


def contrast(first: str, second: str) -> float:
    """WCAG 2.x contrast ratio of two #rrggbb colours."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_free_and_idle_reserved_gpus_are_painted_in_their_own_okabe_ito_colours() -> None:
    assert colour_at(0) == "#009E73"  # Okabe-Ito bluish green
    assert colour_at(charts.RESERVED_IDLE_Z) == "#D55E00"  # Okabe-Ito vermillion
    assert colour_at(charts.UNKNOWN_Z) == charts.UNKNOWN_GREY
    assert colour_at(0.001) == charts.ALLOCATION_COLOURS[0]
    assert colour_at(1) == charts.ALLOCATION_COLOURS[-1]


def test_free_and_idle_reserved_colours_stand_out_from_the_background_by_3_to_1() -> None:
    for colour in (charts.FREE_COLOUR, charts.RESERVED_IDLE_COLOUR):
        assert contrast(colour, charts.BACKGROUND) >= 3.0
    assert contrast("#e8f1fa", "#ffffff") < 3.0  # the old idle colour fails the same check


def test_the_cluster_level_payload_of_10k_gpus_stays_a_few_kilobytes() -> None:
    view = charts.heatmap_view(synthetic_cells(10_000))
    size = len(json.dumps(view, separators=(",", ":")))
    assert view["gpuCount"] == 10_000
    assert size < 8_000, f"{size} bytes"
