"""Fixtures for the engine tests: plain paths into shared/data, no Django."""

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only real data sets (``shared/`` is a sibling of the repository root)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA}: check out next to shared/")
    return SHARED_DATA
