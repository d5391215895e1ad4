"""The node's log lines and logging options as Core's (rpc/logs.py; Bitcoin Core
src/logging.cpp)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from regtest.corelog import format_timestamp
from regtest.params import DEFAULT_CHAIN, select_chain
from rpc.config import parse_config
from rpc.logs import (
    CATEGORY_PREFIX,
    RECENT_DEBUG_HISTORY_SIZE,
    SHRINK_THRESHOLD,
    TRACE,
    CoreFormatter,
    LogOptionError,
    LogSettings,
    category_logger,
    log_settings,
    readable,
    shrink_debug_file,
)
from rpc.process import free_port
from rpc.server import format_peer
from rpc.zmqpub import ZmqPublisher

WHEN = 1796160313.123456  # 2026-12-01T21:25:13.123456Z


def _record(name: str, level: int, message: str = "hello") -> logging.LogRecord:
    record = logging.LogRecord(name, level, __file__, 42, message, (), None, func="caller")
    record.created = WHEN
    return record


def test_timestamps_are_utc_whatever_tz_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert format_timestamp(WHEN) == "2026-12-01T21:25:13Z"
    assert format_timestamp(WHEN, micros=True) == "2026-12-01T21:25:13.123456Z"


def test_level_prefixes_are_cores_get_log_prefix() -> None:
    line = CoreFormatter(LogSettings()).format
    assert line(_record("ctplugin.rpc", logging.INFO)) == "2026-12-01T21:25:13Z hello"
    assert line(_record("ctplugin.rpc", logging.WARNING)) == "2026-12-01T21:25:13Z [warning] hello"
    assert line(_record("ctplugin.rpc", logging.ERROR)).endswith("Z [error] hello")
    mempool = CATEGORY_PREFIX + "mempool"
    assert line(_record(mempool, logging.DEBUG)).endswith("Z [mempool] hello")
    assert line(_record(mempool, logging.INFO)).endswith("Z [mempool:info] hello")
    assert line(_record(mempool, TRACE)).endswith("Z [mempool:trace] hello")


def test_thread_names_source_locations_and_no_timestamps() -> None:
    settings = LogSettings(timemicros=True, threadnames=True, sourcelocations=True)
    assert CoreFormatter(settings).format(_record("ctplugin.rpc", logging.INFO)) == (
        "2026-12-01T21:25:13.123456Z [main] [tests/unit/test_logs.py:42] [caller] hello")
    assert CoreFormatter(LogSettings(timestamps=False)).format(
        _record("ctplugin.rpc", logging.INFO)) == "hello"


def test_debug_and_debugexclude_choose_categories() -> None:
    assert log_settings().categories == frozenset()
    assert log_settings(["mempool", "net"]).categories == {"mempool", "net"}
    every = log_settings(["1"]).categories
    assert "validation" in every and "mempoolrej" in every
    assert log_settings(["all"], ["mempool"]).categories == every - {"mempool"}
    assert log_settings(["mempool", "0", "net"]).categories == frozenset()  # 0: none at all
    with pytest.raises(LogOptionError, match=r"^Error: Unsupported logging category "
                                             r"-debugexclude=nope\.$"):
        log_settings([], ["nope"])


def test_loglevel_global_and_per_category() -> None:
    settings = log_settings(["mempool"], loglevel=["trace", "net:info"])
    assert settings.level_of("mempool") == TRACE and settings.level_of("net") == logging.INFO
    assert log_settings().level_of("mempool") == logging.DEBUG
    with pytest.raises(LogOptionError, match="global logging level -loglevel=loud"):
        log_settings(loglevel=["loud"])


def test_shrinkdebugfile_defaults_to_on_unless_debug() -> None:
    assert log_settings().shrink and not log_settings(["net"]).shrink
    assert log_settings(["net"], shrinkdebugfile="1").shrink
    assert not log_settings(shrinkdebugfile="0").shrink


def test_node_options_reach_the_settings(tmp_path: Path) -> None:
    config = parse_config([f"-datadir={tmp_path}", "-debug=mempool", "-debug=rpc",
                           "-debugexclude=rpc", "-loglevel=mempool:trace", "-logtimemicros",
                           "-nologtimestamps"], "ctplugin node", None)
    settings = config.logging
    assert settings.categories == {"mempool"} and settings.level_of("mempool") == TRACE
    assert settings.timemicros and not settings.timestamps and not settings.threadnames


def test_a_debug_log_over_11_mb_keeps_its_last_10_mb(tmp_path: Path) -> None:
    path = tmp_path / "debug.log"
    path.write_bytes(b"a" * SHRINK_THRESHOLD)
    shrink_debug_file(str(path))
    assert path.stat().st_size == SHRINK_THRESHOLD  # not over: untouched
    path.write_bytes(b"old" + b"b" * (RECENT_DEBUG_HISTORY_SIZE - 1) + b"\n")
    shrink_debug_file(str(path))  # 10 MB + 3: not over 11 MB either
    assert path.read_bytes().startswith(b"old")
    with open(path, "ab") as handle:
        handle.write(b"c" * (SHRINK_THRESHOLD - RECENT_DEBUG_HISTORY_SIZE))
    shrink_debug_file(str(path))
    data = path.read_bytes()
    assert len(data) == RECENT_DEBUG_HISTORY_SIZE and data.endswith(b"c")
    shrink_debug_file(os.fspath(tmp_path / "missing.log"))  # nothing to shrink: no error


def test_category_loggers_are_cores_categories_only() -> None:
    assert category_logger("mempool").name == CATEGORY_PREFIX + "mempool"
    with pytest.raises(ValueError):
        category_logger("nonsense")


def test_peers_read_as_host_port() -> None:
    assert format_peer(("127.0.0.1", 1234)) == "127.0.0.1:1234"
    assert format_peer(("::1", 1234, 0, 0)) == "[::1]:1234"
    assert format_peer(None) == "unknown"


def test_bytes_reprs_read_as_text() -> None:
    assert readable("block index is corrupt: b'Corruption: checksum mismatch'") == (
        "block index is corrupt: Corruption: checksum mismatch")
    assert readable('b"it\'s" and b\'\\xff\'') == "it's and \ufffd"
    assert readable("a verb'd word, sub'tle") == "a verb'd word, sub'tle"  # not a repr
    line = CoreFormatter(LogSettings()).format(
        _record("validator.node", logging.WARNING, "wiped: b'Corruption: bad block'"))
    assert line.endswith("[warning] wiped: Corruption: bad block")


def test_zmq_category_lines_name_topic_hash_and_address(caplog: pytest.LogCaptureFixture
                                                         ) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    publisher = ZmqPublisher({"hashblock": endpoint}, {}, lambda: 0)
    genesis = select_chain(DEFAULT_CHAIN).genesis
    try:
        with caplog.at_level(logging.DEBUG, logger=CATEGORY_PREFIX + "zmq"):
            publisher.block_connected(genesis, 0)
    finally:
        publisher.close()
    assert [r.getMessage() for r in caplog.records] == [
        f"Publish hashblock {genesis.header.hash_hex} to {endpoint}"]  # sequence: not served
