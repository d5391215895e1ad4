"""Shared test fixtures.

Vectors live in ``../shared/`` beside the checkout (override with CTPLUGIN_SHARED). Tests that need
them skip with a clear reason when absent; small fixtures copied into ``tests/fixtures`` run always.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(os.environ.get("CTPLUGIN_SHARED", REPO.parent / "shared"))

# Slow property tests run at small size in CI; raise this locally for deeper runs.
SLOW_SCALE = float(os.environ.get("CTPLUGIN_SLOW_SCALE", "1"))


def shared_path(*parts: str) -> Path:
    """Path under ../shared, or skip the calling test with the reason it is missing."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared vectors not present: {path} (set CTPLUGIN_SHARED)")
    return path


def load_json(path: Path) -> Any:
    with path.open() as handle:
        return json.load(handle)


@pytest.fixture
def shared() -> Path:
    if not SHARED.exists():
        pytest.skip(f"shared vectors not present at {SHARED}")
    return SHARED
