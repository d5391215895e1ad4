"""With CI set, a missing ../shared vector file FAILS the test that needs it (standalone it is a
skip), and a run without ../shared at all refuses to start."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest


@pytest.fixture
def no_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    missing = tmp_path / "no-such-shared"
    monkeypatch.setattr(conftest, "SHARED", missing)
    return missing


def test_missing_shared_file_skips_standalone(no_shared: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "CI", False)
    with pytest.raises(pytest.skip.Exception):
        conftest.shared_path("bulletproofs", "vectors.json")
    assert conftest.shared_if_present("elements-vectors", "blocks.json") is None
    assert conftest.shared_file("x.json") == no_shared / "x.json"
    conftest.pytest_sessionstart(None)  # type: ignore[arg-type]


def test_missing_shared_file_fails_under_ci(no_shared: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "CI", True)
    with pytest.raises(pytest.fail.Exception, match="CI"):
        conftest.shared_path("bulletproofs", "vectors.json")
    with pytest.raises(pytest.fail.Exception, match="CI"):
        conftest.shared_if_present("elements-vectors", "blocks.json")
    with pytest.raises(FileNotFoundError, match="CI"):
        conftest.shared_file("dlc-vectors")
    with pytest.raises(pytest.UsageError, match="shared vectors are missing"):
        conftest.pytest_sessionstart(None)  # type: ignore[arg-type]
