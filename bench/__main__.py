"""``python -m bench`` (``make bench``): every benchmark in sequence, then one summary.

Each benchmark runs as ``python -m bench.<name>`` in its own interpreter (so
peak memory and imports do not leak between them), its output streamed; the
summary lists wall time and exit status of each, plus the headline lines of
scaling, http and fanout. Benchmarks that need Postgres/Redis (ingest, follow, follow_phases, http,
fanout, whatif_load, fleet) read DATABASE_URL/REDIS_URL like the tests do.

    python -m bench [--quick] [--only scaling,http]

``--quick`` runs reduced sizes (scaling 1k/10k, fanout 100/200, diverse 500/1k, blocked 500,
moves 500, whatif_load 20 s, fleet 4 × 500 nodes)
for a check that the harness works; figures in docs/BENCHMARKS.md come from full runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SUMMARY_PREFIXES = (
    "scaling ",
    "http ",
    "fanout ",
    "openb ",
    "follow ",
    "idle_rss after",
    "diverse ",
    "ingest one-shot",
    "blocked ",
    "moves ",
    "whatif_load ",
    "fleet ",
    "pages ",
)
FULL: dict[str, list[str]] = {
    "parse": [],
    "placement": [],
    "openb": [],
    "evaluate": ["--nodes", "10000", "--gangs", "500"],
    # issue 32: 5 vs 800 request shapes on one 2,000-node cluster (500 pending pods)
    "diverse": ["--nodes", "2000", "--shapes", "5,800", "--repeat", "2"],
    # 10,000 nodes, 2,500 distinct shapes, 2,500 pending pods (time and peak RSS)
    "diverse_large": ["--nodes", "10000", "--shapes", "2500", "--pending", "2500"],
    # pending ∝ nodes (nodes / 4) with 800 shapes, 1k to 10k nodes: the growth exponent
    "diverse_curve": ["--shapes", "800", "--curve", "1000,2000,5000,10000,20000"],
    # the same through `manage.py evaluate` on two 2,000-node exports (5 and 800 shapes)
    "diverse_command": ["--nodes", "2000", "--shapes", "5,800", "--time", "--repeat", "2"],
    # issue 41: N nodes of 8 H100, N/4 pending over 800 shapes, ~20 % blocked
    "blocked": ["--nodes", "1000,2000", "--timings"],
    # issue 41's target: 10,000 nodes, 2,500 shapes, 2,500 pending (CPU and peak RSS)
    "blocked_large": ["--nodes", "10000", "--shapes", "2500", "--timings"],
    # issue 44: move instead of buy on the openb demo and blocked 2k/10k (CPU of the search)
    "moves": ["--nodes", "2000,10000"],
    # issue 45 item 6: the one-shot as the README runs it (SQLite, DEBUG on), against b29eb1b
    "ingest": ["--baseline-ref", "b29eb1b"],
    # issue 31 item 4: against d8ffd9c (main before it) in the same run
    "follow": ["--baseline-ref", "d8ffd9c"],
    "follow_phases": [],
    "heatmap": [],
    "scaling": [],
    "http": [],
    "fanout": [],
    # issue 41: 16 parallel what-ifs of one user on the demo, a real web tier and worker
    "whatif_load": ["--clients", "16", "--seconds", "60"],
    # issue 41: 8 blocked-heavy clusters of 2,000 nodes on 1, then 2 worker processes
    "fleet": ["--clusters", "8", "--nodes", "2000", "--workers", "1,2"],
    "idle_rss": [],  # 30 minutes of an idle `make run`
    # issue 41: every page of the demo, against 44a8446 (before the pages stopped reading
    # the whole model)
    "pages": ["--baseline-ref", "44a8446"],
}
QUICK: dict[str, list[str]] = {
    "ingest": ["--nodes", "200", "--pods", "2000"],
    "scaling": ["--sizes", "1000,10000"],
    "fanout": ["--clients", "100,200"],
    "evaluate": ["--nodes", "2000", "--gangs", "100"],
    "follow": ["--nodes", "200", "--pods", "2000", "--window", "20", "--changes", "4"],
    "follow_phases": ["--nodes", "200", "--pods", "2000", "--changes", "2"],
    "idle_rss": ["--minutes", "3", "--interval", "10"],
    "diverse": ["--nodes", "500", "--shapes", "5,100"],
    "diverse_large": ["--nodes", "1000", "--shapes", "250", "--pending", "250"],
    "diverse_curve": ["--shapes", "100", "--curve", "500,1000"],
    "diverse_command": ["--nodes", "500", "--shapes", "5,100", "--time"],
    "blocked": ["--nodes", "500", "--timings"],
    "blocked_large": ["--nodes", "1000", "--shapes", "250", "--timings"],
    "moves": ["--nodes", "500"],
    "whatif_load": ["--clients", "16", "--seconds", "20", "--idle-seconds", "5"],
    "fleet": ["--clusters", "4", "--nodes", "500", "--workers", "1,2"],
    "pages": ["--repeat", "2"],
}


# benchmarks that run one module with other arguments
MODULES = {
    "diverse_large": "diverse",
    "diverse_curve": "diverse",
    "diverse_command": "diverse_export",
    "blocked_large": "blocked",
}


def available(name: str) -> bool:
    return importlib.util.find_spec(f"bench.{MODULES.get(name, name)}") is not None


def run_one(name: str, arguments: list[str]) -> tuple[int, float, list[str]]:
    """Stream one benchmark's output; its exit status, wall seconds and headline lines."""
    started = time.monotonic()
    headline = []
    with subprocess.Popen(
        [sys.executable, "-m", f"bench.{MODULES.get(name, name)}", *arguments],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if line.startswith(SUMMARY_PREFIXES):
                headline.append(line.rstrip())
    return process.returncode, time.monotonic() - started, headline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    args = parser.parse_args()
    chosen = [n for n in (args.only.split(",") if args.only else FULL) if n]
    results = []
    for name in chosen:
        if not available(name):
            results.append((name, None, 0.0, []))
            continue
        arguments = (QUICK if args.quick else FULL).get(name, FULL.get(name, []))
        print(f"=== bench.{name} {' '.join(arguments)}", flush=True)
        results.append((name, *run_one(name, arguments)))
    print("=== summary")
    for name, status, seconds, _headline in results:
        state = "missing" if status is None else ("ok" if status == 0 else f"exit {status}")
        print(f"  {name:<10} {state:<8} {seconds:8.1f} s")
    for _name, _status, _seconds, headline in results:
        for line in headline:
            print(f"  {line}")
    return 0 if all(status in (0, None) for _n, status, _s, _h in results) else 1


if __name__ == "__main__":
    sys.exit(main())
