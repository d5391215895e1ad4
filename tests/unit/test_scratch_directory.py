"""``apps.tempdirs.scratch_directory``: Ctrl-C never leaves a command's scratch directory behind,
not even one pressed while the directory is being made (``test_interrupt.py``'s demo case hit
that moment under load: SIGINT between ``mkdir`` and the directory's owner existing)."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest

from apps import tempdirs


def test_removed_on_the_way_out_and_after_ctrl_c(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with tempdirs.scratch_directory("s-") as made:
        assert made.is_dir()
    assert not made.exists()
    with pytest.raises(KeyboardInterrupt), tempdirs.scratch_directory("s-") as made:
        raise KeyboardInterrupt
    assert not made.exists()


def test_a_ctrl_c_while_the_directory_is_made_still_removes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT sent from inside the directory's creation (right after its mkdir): it arrives
    only once the directory has an owner, so the directory is gone afterwards."""
    real = tempfile.mkdtemp

    def mkdtemp_then_ctrl_c(*args: Any, **kwargs: Any) -> str:
        made = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C at the worst moment
        return made

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt), tempdirs.scratch_directory("s-"):
        pass
    assert not list(tmp_path.iterdir())
