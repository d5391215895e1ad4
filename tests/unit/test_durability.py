"""The write guard of a data directory and the durability options (docs/durability.md §3, §4,
§6)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from rpc.config import parse_config
from validator import DEFAULT_CHECKBLOCKS, DEFAULT_CHECKLEVEL, DiskWriteError, StoreValueError
from validator.store import FAULT_ENV, ChainstateCorruptError, WriteGuard
from validator.store.durability import parse_faults


def test_fault_plans_parse_and_bad_ones_are_refused() -> None:
    assert parse_faults("") == {}
    assert parse_faults("block files:3, chainstate:1:EIO,any:9:EROFS") == {
        "block files": (3, errno.ENOSPC), "chainstate": (1, errno.EIO),
        "any": (9, errno.EROFS)}
    for bad in ("disk:1", "chainstate", "chainstate:0", "chainstate:x", "wallet:1:ENOSUCH"):
        with pytest.raises(StoreValueError, match=FAULT_ENV):
            parse_faults(bad)


def test_the_first_failed_write_stops_every_later_one() -> None:
    told: list[BaseException] = []
    guard = WriteGuard({"chainstate": (2, errno.ENOSPC)})
    guard.on_failure = told.append
    writes: list[str] = []
    assert guard.write("chainstate", lambda: writes.append("first")) is None
    guard.write("block index", lambda: writes.append("other site"))
    with pytest.raises(DiskWriteError) as caught:
        guard.write("chainstate", lambda: writes.append("never"))
    assert str(caught.value).startswith("Disk space is too low! (writing the chainstate")
    for site in ("block index", "undo files"):
        with pytest.raises(DiskWriteError) as again:
            guard.write(site, lambda: writes.append("never"))
        assert again.value is caught.value
    assert writes == ["first", "other site"]
    assert told == [caught.value] and guard.failure is caught.value


def test_real_errors_are_classified_and_corruption_is_reported_once() -> None:
    guard = WriteGuard({})

    def failing() -> None:
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(DiskWriteError, match=r"^A fatal internal error occurred") as caught:
        guard.write("block files", failing)
    assert not caught.value.full
    guard = WriteGuard({})
    first = ChainstateCorruptError("bad coin")
    assert guard.fatal(first) is first
    assert guard.fatal(ChainstateCorruptError("later")) is not first
    assert guard.failure is first
    assert str(first) == ("Corrupted block database detected: chainstate: bad coin. Please "
                          "restart with -reindex-chainstate to recover.")


def test_reindex_and_check_options(tmp_path: Path) -> None:
    config = parse_config([f"-datadir={tmp_path}"], "ctplugin node", None)
    assert (config.reindex, config.reindex_chainstate) == (False, False)
    assert (config.checkblocks, config.checklevel) == (DEFAULT_CHECKBLOCKS,
                                                       DEFAULT_CHECKLEVEL) == (6, 3)
    config = parse_config([f"-datadir={tmp_path}", "-reindex", "-reindex-chainstate=1",
                           "-checkblocks=0", "-checklevel=4"], "ctplugin node", None)
    assert (config.reindex, config.reindex_chainstate) == (True, True)
    assert (config.checkblocks, config.checklevel) == (0, 4)


def test_the_options_come_from_the_configuration_file_too(tmp_path: Path) -> None:
    (tmp_path / "elements.conf").write_text("reindex=1\ncheckblocks=12\nchecklevel=1\n")
    config = parse_config([f"-datadir={tmp_path}"], "ctplugin node", None)
    assert (config.reindex, config.reindex_chainstate) == (True, False)
    assert (config.checkblocks, config.checklevel) == (12, 1)
