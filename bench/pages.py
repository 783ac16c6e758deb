"""The dashboard's pages on the demo cluster: each page's server time.

``load_demo`` into a fresh SQLite file (the embedded default, as ``make run``), then
every page of the demo cluster requested through Django's test client in one
process, signed in as staff; per page the fastest of ``--repeat`` requests after one
warm-up (import and first-query costs out), and its size. ``--baseline-ref REF`` runs
REF's tree (a temporary git worktree) first, on the demo as that tree loads it, so the
two columns come from one run on one machine::

    python -m bench.pages [--baseline-ref REF] [--repeat 5]

Prints one line per page, ``pages <path>: <ms> ms`` per tree, then the ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.follow import baseline_tree, remove_tree
from bench.idle_rss import load_demo, sqlite_environment

REPO = Path(__file__).resolve().parents[1]
PAGES = (
    "/",
    "/clusters/{cluster}/pending/",
    "/clusters/{cluster}/recommendations/",
    "/clusters/{cluster}/topology/",
    "/clusters/{cluster}/topology/data.json",
    "/clusters/{cluster}/reservations/",
    "/clusters/{cluster}/node-groups/",
    "/clusters/{cluster}/queues/",
    "/clusters/{cluster}/utilisation/",
    "/clusters/{cluster}/teams/",
    "/clusters/{cluster}/autoscaler-events/",
    "{workload}",
)

# run inside a tree (this one or the baseline's): prints {path: [best seconds, bytes]}
MEASURE = """
import json, os, sys, time
import django
django.setup()
from django.contrib.auth import get_user_model
from django.test import Client
from django.test.utils import setup_test_environment
from recommender.models import Evaluation, WorkloadVerdict
setup_test_environment()
user, _ = get_user_model().objects.get_or_create(
    username="bench-pages", defaults={"is_staff": True, "is_superuser": True}
)
client = Client()
client.force_login(user)
evaluation = Evaluation.objects.latest("id")
verdict = WorkloadVerdict.objects.filter(evaluation=evaluation).order_by("workload").first()
namespace, name = verdict.workload.split("/", 1)
workload = f"/clusters/{evaluation.cluster_id}/workloads/{namespace}/{name}/"
found = {}
for page in json.loads(sys.argv[1]):
    path = page.format(cluster=evaluation.cluster_id, workload=workload)
    client.get(path, HTTP_HOST="127.0.0.1")
    best = None
    for _ in range(int(sys.argv[2])):
        started = time.perf_counter()
        response = client.get(path, HTTP_HOST="127.0.0.1")
        spent = time.perf_counter() - started
        best = spent if best is None else min(best, spent)
    assert response.status_code == 200, (path, response.status_code)
    found[page] = [best, len(response.content)]
print(json.dumps(found))
"""


def measure(tree: Path, database: Path, repeat: int) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(PAGES), str(repeat)],
        cwd=tree,
        env={
            **sqlite_environment(database),
            "DJANGO_SETTINGS_MODULE": "capacityweb.settings",
            "PYTHONPATH": str(tree),
        },
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"pages in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", default="", help="also time this commit's tree")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    baseline = baseline_tree(options.baseline_ref) if options.baseline_ref else None
    try:
        results = {}
        if baseline is not None:
            load_demo(baseline, sqlite_environment(work / "baseline.sqlite3"))
            results[options.baseline_ref] = measure(
                baseline, work / "baseline.sqlite3", options.repeat
            )
        load_demo(REPO, sqlite_environment(work / "demo.sqlite3"))
        results["this tree"] = measure(REPO, work / "demo.sqlite3", options.repeat)
    finally:
        if baseline is not None:
            remove_tree(baseline)
        shutil.rmtree(work, ignore_errors=True)
    for page in PAGES:
        figures = [f"{name} {found[page][0] * 1000:.0f} ms" for name, found in results.items()]
        size = results["this tree"][page][1] // 1024
        ratio = ""
        if baseline is not None:
            before, after = results[options.baseline_ref][page][0], results["this tree"][page][0]
            ratio = f", {before / after:.1f}x"
        print(f"pages {page}: {', '.join(figures)} ({size} kB{ratio})")


if __name__ == "__main__":
    main()
