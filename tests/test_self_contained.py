"""A clone runs and tests itself: no code, test, benchmark or CI file reads outside the
repository (issue 27). The data sets live in data/, each folder with its SOURCES.md."""

import re
import subprocess

from tests.conftest import REPO_ROOT

# A path that climbs out of the repository to a sibling folder (dot-dot, then shared), or the
# pathlib spelling `/ ".." / "shared"`.
OUTSIDE = re.compile(r"""\.\./shared|["']\.\.["']\s*/\s*["']shared["']""")
SCANNED_SUFFIXES = (".py", ".sh", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json")
SCANNED_NAMES = ("Makefile", "Dockerfile", ".ci/run")


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return listed.stdout.splitlines()


def test_it_reads_no_folder_beside_the_repository():
    offenders = []
    for name in tracked_files():
        if name.startswith("data/") or name == "tests/test_self_contained.py":
            continue
        if not (name.endswith(SCANNED_SUFFIXES) or name in SCANNED_NAMES):
            continue
        text = (REPO_ROOT / name).read_text(errors="replace")
        offenders += [f"{name}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert offenders == []


def test_every_data_folder_says_where_it_comes_from():
    folders = [p for p in (REPO_ROOT / "data").iterdir() if p.is_dir()]
    assert {p.name for p in folders} >= {
        "alibaba-gpu-v2023",
        "fgd-expected-results",
        "k8s-examples",
    }
    assert [p.name for p in folders if not (p / "SOURCES.md").is_file()] == []
