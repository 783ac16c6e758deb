"""Reproduce the FGD simulator's openb protocol and compare with the paper's results.

Protocol (hkust-adsl/kubernetes-scheduler-simulator, ``TunePodsByNodeTotalResource``
and ``--shuffle-pod``): the 1,213 GPU nodes; every pod of the pod list, plus
pods drawn with replacement from it until the GPU request reaches 130 % of
cluster GPU capacity; all shuffled; they arrive one by one and never leave.
At each integer percentage of arrived GPU request we record the GPU
allocation ratio (allocated GPU milli / cluster GPU milli), the paper's
Fig. 9(a) metric. Writes docs/VALIDATION.md and docs/validation/*.html.

    python bench/validate_openb.py [--seeds 42 43 44] [--families default gpushare40 ...]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import json
import os
import platform
import random
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# bench/ (the script's folder, sys.path[0]) holds http.py, which would shadow the
# standard library's http for kaleido's imports: put the repository there instead.
sys.path[:] = [str(REPO)] + [e for e in sys.path if Path(e or ".").resolve() != REPO / "bench"]

from recommender.engine.scheduler.placement import PlacementOptions, place  # noqa: E402
from recommender.engine.scheduler.workloads import Workload, pod_workload  # noqa: E402
from topology.ingest.files import read_openb  # noqa: E402
from topology.model.hardware import Cluster, Pod  # noqa: E402

DATA = REPO / "data"
CSV_DIR = DATA / "alibaba-gpu-v2023" / "csv"
EXPECTED = DATA / "fgd-expected-results" / "analysis_allo_discrete.csv"
TUNE_RATIO = 1.3
POLICIES = {"fgd": "06-FGD", "bestfit": "05-BestFit", "random": "01-Random"}
MARKS = (80, 90, 100, 110, 120, 130)


def pod_gpu_milli(pod: Pod) -> int:
    return pod.gpu.total_milli if pod.gpu else 0


def tuned_arrivals(cluster: Cluster, seed: int, ratio: float = TUNE_RATIO) -> list[Pod]:
    """The simulator's order: every pod of the list shuffled, then seeded draws with
    replacement appended (not shuffled in) until ``ratio`` × capacity.

    Like ``tuneUpPods`` the stop test adds the draw's per-GPU milli, not its total."""
    rng = random.Random(seed)
    arrivals = list(cluster.pods)
    rng.shuffle(arrivals)
    target_milli = ratio * cluster.gpu_count * 1000
    total = sum(pod_gpu_milli(p) for p in arrivals)
    original = list(cluster.pods)
    index = 0
    while True:
        drawn = rng.choice(original)
        if total + pod_milli_per_gpu(drawn) > target_milli:
            break
        total += pod_gpu_milli(drawn)
        arrivals.append(dataclasses.replace(drawn, name=f"{drawn.name}-tuned-{index}"))
        index += 1
    return arrivals


def pod_milli_per_gpu(pod: Pod) -> int:
    return pod.gpu.milli_per_gpu if pod.gpu and pod.gpu.count else 0


def shuffled_nodes(cluster: Cluster, seed: int) -> Cluster:
    """The nodes in a seeded random order, as the simulator ranks them (its node names get
    a ``rand.Perm`` prefix and its scheduler breaks score ties by smallest name)."""
    nodes = sorted(cluster.nodes, key=lambda n: n.name)
    random.Random(f"nodes-{seed}").shuffle(nodes)
    return Cluster(cluster.name, nodes=tuple(nodes))


def allocation_curve(
    cluster: Cluster,
    workloads: list[Workload],
    policy: str,
    seed: int,
    mix: tuple[Pod, ...] = (),
) -> list[float]:
    """GPU allocation % when arrived GPU request first reaches 0 … 130 % of capacity."""
    options = PlacementOptions(policy=policy, seed=seed, workload_mix=mix)
    # the protocol reads where pods land, never why one does not: no diagnoses
    result = place(cluster, workloads, options=options, diagnose=False)
    capacity = cluster.gpu_count * 1000
    curve: list[float] = []
    arrived = allocated = 0
    for workload, outcome in zip(workloads, result.outcomes, strict=True):
        arrived += pod_gpu_milli(workload.pods[0])
        if outcome.placed:
            allocated += sum(b.gpu_milli for b in outcome.bindings)
        while len(curve) <= 130 and arrived >= len(curve) / 100 * capacity:
            curve.append(100 * allocated / capacity)
    while len(curve) <= 130:
        curve.append(100 * allocated / capacity)
    return curve


def run_one(job: tuple[str, str, int]) -> tuple[str, str, int, list[float], float]:
    family, policy, seed = job
    cluster = read_openb(CSV_DIR, pod_list=family)
    arrivals = tuned_arrivals(cluster, seed)
    workloads = [pod_workload(p) for p in arrivals]
    started = time.process_time()
    nodes_only = shuffled_nodes(cluster, seed)
    curve = allocation_curve(nodes_only, workloads, policy, seed, tuple(cluster.pods))
    return family, policy, seed, curve, time.process_time() - started


def paper_curves(family: str) -> dict[str, list[float]]:
    """Mean over the paper's 10 seeds, per policy, columns 0…130."""
    rows: dict[str, list[list[float]]] = {}
    with EXPECTED.open() as handle:
        for row in csv.DictReader(handle):
            if row["workload"] == f"openb_pod_list_{family}":
                rows.setdefault(row["sc_policy"], []).append(
                    [float(row[str(i)]) for i in range(131)]
                )
    return {p: mean_curve(curves) for p, curves in rows.items()}


def mean_curve(curves: list[list[float]]) -> list[float]:
    return [statistics.fmean(values) for values in zip(*curves, strict=True)]


def write_plot(family: str, ours: dict[str, list[float]], paper: dict[str, list[float]]) -> str:
    import plotly.graph_objects as go

    figure = go.Figure()
    colours = {"fgd": "#1f77b4", "bestfit": "#2ca02c", "random": "#d62728"}
    for policy, curve in ours.items():
        figure.add_scatter(
            x=list(range(131)), y=curve, name=f"ours {policy}", line={"color": colours[policy]}
        )
        figure.add_scatter(
            x=list(range(131)),
            y=paper[POLICIES[policy]],
            name=f"paper {POLICIES[policy]}",
            line={"color": colours[policy], "dash": "dash"},
        )
    figure.update_layout(
        title=f"openb_pod_list_{family}: GPU allocation vs arrived workload",
        xaxis_title="arrived GPU request (% of cluster GPU capacity)",
        yaxis_title="GPU allocation ratio (%)",
        yaxis_range=[60, 100],
        xaxis_range=[60, 130],
    )
    out = REPO / "docs" / "validation" / f"openb_{family}_alloc.html"
    figure.write_html(out, include_plotlyjs="../../static/vendor/plotly.min.js", full_html=True)
    try:  # the PNG needs kaleido and a Chromium; the HTML is the record
        figure.write_image(out.with_suffix(".png"), width=900, height=500)
    except Exception as error:  # noqa: BLE001 - any kaleido/browser failure
        print(f"no PNG for {family}: {error}", file=sys.stderr)
    return out.name


RUNS = REPO / "docs" / "validation" / "openb_runs.json"
ALL_FAMILIES = (
    "default",
    *(f"cpu{n}" for n in ("050", "100", "200", "250")),
    *(f"gpushare{n}" for n in (40, 60, 80, 100)),
    *(f"gpuspec{n}" for n in (10, 20, 25, 33)),
    *(f"multigpu{n}" for n in (20, 30, 40, 50)),
)
Run = tuple[str, str, int, list[float], float]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 43])
    parser.add_argument("--families", nargs="+", default=list(ALL_FAMILIES))
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument(
        "--report-only", action="store_true", help=f"rewrite the docs from {RUNS.name}"
    )
    args = parser.parse_args()
    if args.report_only:
        results = load_runs()
    else:
        results = run_all(args.families, args.seeds, args.processes)
        save_runs(results)
    write_report(results)


def run_all(families: list[str], seeds: list[int], processes: int) -> list[Run]:
    """Runs one after another (or in a pool), each printed as it ends: the log is the progress."""
    jobs = [(f, p, s) for f in families for p in POLICIES for s in seeds]
    results: list[Run] = []
    with Pool(processes) as pool:
        for run in pool.imap(run_one, jobs):
            family, policy, seed, curve, seconds = run
            print(
                f"{family} {policy} {seed}: {curve[130]:.2f} % at 130, {seconds:.1f} s cpu",
                flush=True,
            )
            results.append(run)
    return results


def save_runs(results: list[Run]) -> None:
    rows = [
        {
            "family": f,
            "policy": p,
            "seed": s,
            "curve": [round(v, 3) for v in c],
            "cpu_s": round(t, 2),
        }
        for f, p, s, c, t in results
    ]
    head = {"date": datetime.date.today().isoformat(), "host": platform.node()}
    body = ",\n".join(json.dumps(row) for row in rows)  # one run a line: readable diffs
    RUNS.write_text(json.dumps(head)[:-1] + ', "runs": [\n' + body + "\n]}\n")


def load_runs() -> list[Run]:
    return [
        (r["family"], r["policy"], r["seed"], r["curve"], r["cpu_s"]) for r in _record()["runs"]
    ]


def _record() -> dict[str, Any]:
    """The saved runs with their date and host (a bare list: dated by the file's mtime)."""
    record: dict[str, Any] | list[dict[str, Any]] = json.loads(RUNS.read_text())
    if isinstance(record, list):
        mtime = datetime.date.fromtimestamp(RUNS.stat().st_mtime).isoformat()
        record = {"date": mtime, "host": platform.node(), "runs": record}
    return record


def write_report(results: list[Run]) -> None:
    families = list(dict.fromkeys(r[0] for r in results))
    seeds = sorted({r[2] for r in results})
    ours_by_family = {
        family: {
            policy: mean_curve([r[3] for r in results if r[0] == family and r[1] == policy])
            for policy in POLICIES
        }
        for family in families
    }
    papers = {family: paper_curves(family) for family in families}
    lines = _report_header(seeds, families)
    lines += _summary_table(ours_by_family, papers)
    lines += _findings(ours_by_family, papers)
    for family in families:
        seconds = [r[4] for r in results if r[0] == family]
        plot = write_plot(family, ours_by_family[family], papers[family])
        lines += _family_table(
            family, ours_by_family[family], papers[family], plot, seconds, len(seeds)
        )
    (REPO / "docs" / "VALIDATION.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _summary_table(
    ours: dict[str, dict[str, list[float]]], papers: dict[str, dict[str, list[float]]]
) -> list[str]:
    """GPU allocation at 130 % arrived, every family: the issue's acceptance figures."""
    header = "| pod list | " + " | ".join(f"{p} ours / paper (Δ)" for p in POLICIES) + " |"
    lines = ["## All families at 130 % arrived", "", header, "|---" * (len(POLICIES) + 1) + "|"]
    for family, curves in ours.items():
        cells = []
        for policy, curve in curves.items():
            theirs = papers[family][POLICIES[policy]][130]
            cells.append(f"{curve[130]:.2f} / {theirs:.2f} ({curve[130] - theirs:+.2f})")
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _findings(
    ours: dict[str, dict[str, list[float]]], papers: dict[str, dict[str, list[float]]]
) -> list[str]:
    """The acceptance checks, computed: worst gap per policy, FGD against BestFit."""
    lines = ["Findings (computed from the runs above):", ""]
    for policy, paper_name in POLICIES.items():
        gaps = {f: c[policy][130] - papers[f][paper_name][130] for f, c in ours.items()}
        worst = max(gaps, key=lambda f: abs(gaps[f]))
        lines.append(
            f"- `{policy}`: largest gap to the paper at 130 % is {gaps[worst]:+.2f} points "
            f"({worst}); {sum(abs(g) <= 1.5 for g in gaps.values())} of {len(gaps)} "
            "families within 1.5 points."
        )
    if "default" in ours:
        fgd, bestfit = ours["default"]["fgd"][130], ours["default"]["bestfit"][130]
        lines.append(
            f"- On `openb_pod_list_default` FGD reaches {fgd:.2f} % (paper 95.39 %) and "
            f"beats BestFit ({bestfit:.2f} %) by {fgd - bestfit:.2f} points: "
            "`default` is `fgd`."
            if fgd > bestfit
            else "- BestFit beats FGD on the default list."
        )
    lines += [
        "- Not reproduced exactly, within 1.5 points: the simulator's Random places a",
        "  share pod on a random fitting GPU (`-gpusel random`), ours on the best-fitting",
        "  one, which is why our Random is mostly above the paper; its BestFit breaks ties",
        "  by node rank like FGD, ours at random.",
    ]
    return [*lines, ""]


def _arguments(seeds: list[int], families: list[str]) -> str:
    """The command-line arguments that differ from the defaults."""
    out = "" if seeds == [42, 43] else " --seeds " + " ".join(map(str, seeds))
    return out if tuple(families) == ALL_FAMILIES else out + " --families " + " ".join(families)


def _report_header(seeds: list[int], families: list[str]) -> list[str]:
    return [
        "# Placement validation against the FGD paper (openb trace)",
        "",
        f"Regenerate: `python bench/validate_openb.py{_arguments(seeds, families)}` "
        f"(writes `validation/{RUNS.name}`;",
        "`--report-only` rebuilds this page and the plots from it).",
        "",
        "Protocol, as the FGD simulator runs it (hkust-adsl/kubernetes-scheduler-simulator:",
        "`SortClusterPods` with `--shuffle-pod`, `TunePodsByNodeTotalResource` with tune 1.3,",
        "its patched kube-scheduler): the 1,213 GPU nodes of `openb_node_list_gpu_node.csv`",
        "in a seeded random order; every pod of the list, shuffled, then seeded draws with",
        "replacement appended until the GPU request reaches 130 % of the 6,212 GPUs; arriving",
        "one by one, never leaving. Column *N* = GPU allocation ratio (allocated GPU milli /",
        "6,212,000) when the arrived GPU request first reaches N % of capacity.",
        "Policies: `fgd` = the simulator's FGDScore (integer sigmoid score, FGD GPU choice,",
        "typical pods = the original pod list's most frequent shapes covering 95 %, cpu-only",
        "pods included; equal scores go to the first node in the seeded order, as the",
        "simulator's `selectHost` keeps the smallest node name); `bestfit` = BestFitScore",
        "(best-fit GPU; our ties: seeded uniform pick); `random` = RandomScore (uniform",
        "feasible node, best-fit GPU).",
        f"Ours: mean over {len(seeds)} seeds ({', '.join(map(str, seeds))}); our seeds",
        "drive our own Python RNG, so runs match the paper's in distribution, not draw by",
        "draw. Paper: mean over its 10 seeds (42-51) from `analysis_allo_discrete.csv`.",
        f"Run {_record()['date']} on {_record()['host'] or 'a dev machine'}"
        f" ({os.cpu_count()} cores, shared); CPU seconds per run from `time.process_time`,",
        f"{sum(r[4] for r in load_runs()):.0f} s of placement CPU for all {len(load_runs())} runs.",
        "",
        "Why FGD used to fall 5 points short (90.19 % on the default list, −8.6 on cpu250):",
        "we broke equal scores at random. The simulator's `go.mod` replaces",
        "`k8s.io/kubernetes` with a fork whose `selectHost` keeps the smallest node name",
        "among equal scores, and `syncClusterResourceList` prefixes node names with a seeded",
        "`rand.Perm`: each node has one fixed random rank for the whole run. Cpu-only pods",
        "score 50 on every node whose typical-pod verdicts they leave alone; a random pick",
        "spread them over the GPU nodes, whose cores GPU pods then lacked, while a fixed",
        "rank packs them onto the first neutral nodes. `fgd` now takes the first tied node",
        "in cluster order and this protocol orders the nodes by seed",
        "(`tests/engine/test_fgd_ties.py` pins a hand-worked case).",
        "",
    ]


def _family_table(
    family: str,
    ours: dict[str, list[float]],
    paper: dict[str, list[float]],
    plot: str,
    seconds: list[float],
    seeds: int,
) -> list[str]:
    header = "| policy | " + " | ".join(f"{m} % ours / paper" for m in MARKS) + " | Δ at 130 |"
    lines = [f"## openb_pod_list_{family}", "", header, "|---" * (len(MARKS) + 2) + "|"]
    for policy, curve in ours.items():
        theirs = paper[POLICIES[policy]]
        cells = " | ".join(f"{curve[m]:.2f} / {theirs[m]:.2f}" for m in MARKS)
        lines.append(f"| {policy} | {cells} | {curve[130] - theirs[130]:+.2f} |")
    lines += [
        "",
        f"Plot: [validation/{plot}](validation/{plot}) "
        f"([PNG](validation/{Path(plot).with_suffix('.png')})). Runs: {len(seconds)} "
        f"({seeds} seeds × {len(ours)} policies), placement CPU time per run "
        f"{min(seconds):.1f}–{max(seconds):.1f} s.",
        "",
    ]
    return lines


if __name__ == "__main__":
    main()
