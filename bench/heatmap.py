"""Time for Chromium to render a 10,000-GPU topology heatmap (target < 1.5 s).

    synthetic cells (1,250 nodes × 8 GPUs, 2 zones › 4 blocks › 4 racks, seeded)
        └─► topology.charts.heatmap_view (the cluster-level payload data.json serves:
            one bar per domain above rack level)
              └─► Chromium: Plotly.react into an empty div, until the frame is painted

Reports the payload size, the server-side build time and the median/max of
several renders in a fresh page each. Run: ``python bench/heatmap.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from capacityweb.browser import CHROMIUM_ARGS, chromium_path  # noqa: E402
from topology.charts import heatmap_view  # noqa: E402

TARGET_SECONDS = 1.5


def synthetic_cells(gpus: int, per_node: int = 8, seed: int = 2023) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cells = []
    for index in range(gpus // per_node):
        zone, block, rack = index % 2, index % 8 // 2, index % 32 // 8
        for gpu in range(per_node):
            unknown = rng.random() < 0.01
            allocated = None if unknown else rng.choice((0, 0, 250, 500, 1000, 1000, 1000))
            cells.append(
                {
                    "zone": f"zone-{zone}",
                    "block": f"block-{block}",
                    "rack": f"rack-{rack}",
                    "node": f"node-{index:05d}",
                    "gpu": f"gpu-{gpu}",
                    "model": "H100",
                    "allocatedMilli": allocated,
                    "pods": [f"team-{index % 5}/job-{index}"] if allocated else [],
                    "reservation": None,
                    "nodeGroup": "h100",
                }
            )
    return cells


PAGE = """<!doctype html><html><head><meta charset="utf-8">
<script src="{plotly}"></script></head><body>
<div id="heatmap" style="width:1200px"></div>
<script id="payload" type="application/json">{payload}</script>
<script>
window.render = function () {{
  const payload = JSON.parse(document.getElementById('payload').textContent);
  const started = performance.now();
  return Plotly.react('heatmap', payload.figure.data, payload.figure.layout,
                      {{displayModeBar: false}})
    .then(() => new Promise(requestAnimationFrame))
    .then(() => performance.now() - started);
}};
</script></body></html>"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    from playwright.sync_api import sync_playwright

    cells = synthetic_cells(arguments.gpus)
    started = time.perf_counter()
    view = heatmap_view(cells)
    build_seconds = time.perf_counter() - started
    payload = json.dumps(view, separators=(",", ":")).replace("<", "\\u003c")
    plotly = (REPO_ROOT / "static" / "vendor" / "plotly.min.js").as_uri()
    with tempfile.TemporaryDirectory() as directory:
        page_path = Path(directory) / "heatmap.html"
        page_path.write_text(PAGE.format(plotly=plotly, payload=payload))
        timings = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(),
                args=list(CHROMIUM_ARGS),
            )
            for _ in range(arguments.runs):
                page = browser.new_page()
                page.goto(page_path.as_uri())
                timings.append(page.evaluate("() => window.render()") / 1000)
                page.close()
            browser.close()
    median = statistics.median(timings)
    print(f"{view['gpuCount']} GPUs at cluster level: {view['cellCount']} {view['kind']} rows")
    print(f"payload: {len(payload):,} bytes JSON, built server-side in {build_seconds:.3f} s")
    print(
        f"Chromium render (Plotly.react → painted): median {median:.3f} s, "
        f"max {max(timings):.3f} s over {len(timings)} runs (target < {TARGET_SECONDS} s)"
    )
    sys.exit(0 if median < TARGET_SECONDS else 1)


if __name__ == "__main__":
    main()
