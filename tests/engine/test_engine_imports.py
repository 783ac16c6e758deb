"""The engine's packages import downwards only, with no cycle, no private name of
another module, and never an import hidden inside a function (the way a cycle
used to be dodged)."""

import ast
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ENGINE = REPO_ROOT / "recommender" / "engine"
ENGINE_CONTRACTS = ("engine-layers", "engine-acyclic")


def _nested_import_lines(source: str) -> list[int]:
    """Lines of every import that is not a statement of the module itself."""
    tree = ast.parse(source)
    top_level = {id(node) for node in tree.body}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top_level
    ]


def test_it_imports_nothing_inside_a_function_in_the_engine() -> None:
    modules = sorted(ENGINE.rglob("*.py"))
    assert len(modules) > 20
    nested = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for path in modules
        for line in _nested_import_lines(path.read_text(encoding="utf-8"))
    ]
    assert nested == []


def test_it_finds_an_import_inside_a_function_or_a_branch() -> None:
    source = "import os\n\ndef f():\n    from os import path\n    return path\n"
    source += "if os.name:\n    import sys\n"
    assert _nested_import_lines(source) == [4, 7]


def test_it_imports_no_private_name_from_another_engine_module() -> None:
    private = [
        f"{path.relative_to(REPO_ROOT)}: {node.module}.{alias.name}"
        for path in sorted(ENGINE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert private == []


def test_it_keeps_engine_packages_layered_and_acyclic() -> None:
    contracts = [arg for name in ENGINE_CONTRACTS for arg in ("--contract", name)]
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-logo", "--no-cache", *contracts],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(ENGINE_CONTRACTS)} kept, 0 broken." in result.stdout
