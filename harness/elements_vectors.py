"""Loading the shared Elements vector files for tests and benchmarks (checking a vectors
document is the product's: ``ctplugin.elements.vectors``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_entries(paths: list[Path], key: str) -> list[dict[str, Any]]:
    """Entries under ``key`` ("transactions" or "blocks") of the existing files among
    ``paths``, deduplicated by hex, first occurrence kept."""
    seen: dict[str, dict[str, Any]] = {}
    for path in paths:
        if Path(path).exists():
            for entry in json.loads(Path(path).read_text())[key]:
                seen.setdefault(entry["hex"], entry)
    return list(seen.values())
