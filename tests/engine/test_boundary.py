"""The pure core imports no Django, DRF, Celery or Channels (as .importlinter says).

The pure modules and the forbidden packages are read from the ``pure-core``
contract of .importlinter, the one list (the Makefile's mypy run reads it
too). Each module is imported in a fresh interpreter and the interpreter's
sys.modules is inspected; a listed module that does not exist is a failure,
not a skip.
"""

import configparser
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

PURE_CORE = "importlinter:contract:pure-core"


def _contract_list(key: str) -> list[str]:
    config = configparser.ConfigParser()
    config.read(REPO_ROOT / ".importlinter", encoding="utf-8")
    return config[PURE_CORE][key].split()


PURE_MODULES = _contract_list("source_modules")
FORBIDDEN_TOP_LEVEL_PACKAGES = set(_contract_list("forbidden_modules"))

PROBE = """
import importlib, json, pkgutil, sys
module = importlib.import_module(sys.argv[1])
for info in pkgutil.walk_packages(getattr(module, "__path__", []), module.__name__ + "."):
    importlib.import_module(info.name)
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def imported_top_level_packages(module_name: str) -> set[str]:
    """Import the module (and, for a package, its submodules) alone; list what got loaded."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module_name],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"importing {module_name} failed:\n{result.stderr}"
    return set(json.loads(result.stdout))


@pytest.mark.parametrize("module_name", PURE_MODULES)
def test_it_imports_pure_module_without_frameworks(module_name: str) -> None:
    leaked = imported_top_level_packages(module_name) & FORBIDDEN_TOP_LEVEL_PACKAGES
    assert not leaked, f"{module_name} pulls in {sorted(leaked)}"


def test_it_reads_every_pure_module_from_the_contract() -> None:
    assert {
        "topology.model",
        "topology.kube",
        "topology.ingest",
        "recommender.engine",
        "reservations.idle",
    } <= set(PURE_MODULES)
    assert {"django", "rest_framework", "celery", "channels"} <= FORBIDDEN_TOP_LEVEL_PACKAGES


def test_it_detects_a_framework_import() -> None:
    assert "django" in imported_top_level_packages("topology.apps")
