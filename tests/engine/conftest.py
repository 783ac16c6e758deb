"""Fixtures for the engine tests: plain paths into the repository's data/, no Django."""

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data sets copied into the repository (data/, each folder with its SOURCES)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"data not found at {SHARED_DATA}: the clone is incomplete")
    return SHARED_DATA
