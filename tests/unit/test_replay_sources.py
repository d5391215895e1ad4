"""Replay sources: chain files, Core-style blocks/ directories (magic + length records, arrival
order, zero-padded tails, junk, xor.dat, stale branches) and the read-ahead thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ctplugin.elements import parse_block
from regtest.blocksdir import arrival_order, write_blocks_dir
from regtest.builder import make_block
from regtest.params import CTREGTEST, NETWORK_MAGIC, select_chain
from replay.sources import (
    BlocksDirSource,
    ChainFileSource,
    SourceBlock,
    SourceError,
    open_source,
    prefetch,
    read_cookie,
)
from validator import XOR_FILE, block_file_name, write_chain, xor_obfuscate

GENESIS = select_chain(CTREGTEST).genesis_hash
KEY = bytes.fromhex("5a17c3e900ff1204")


def heights_and_raw(blocks: list[SourceBlock]) -> list[tuple[int, bytes]]:
    return [(b.height, b.raw) for b in blocks]


def test_xor_obfuscation_is_an_involution_at_any_offset() -> None:
    data = bytes(range(256)) * 3
    for offset in (0, 1, 7, 8, 12345):
        hidden = xor_obfuscate(data, KEY, offset)
        assert hidden != data
        assert xor_obfuscate(hidden, KEY, offset) == data
        # byte i of the file is XORed with key[(offset + i) % 8]
        assert hidden[5] == data[5] ^ KEY[(offset + 5) % 8]
    assert xor_obfuscate(data, bytes(8), 3) == data
    with pytest.raises(ValueError):
        xor_obfuscate(data, b"short", 0)


def test_chain_file_source_streams_from_a_height(tmp_path: Path,
                                                 replay_blocks: list[bytes]) -> None:
    path = tmp_path / "chain.dat"
    write_chain(path, [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    source = ChainFileSource(path)
    assert source.last_height() == len(replay_blocks) - 1
    assert heights_and_raw(list(source.blocks(0))) == list(enumerate(replay_blocks))
    tail = list(source.blocks(4))
    assert heights_and_raw(tail) == list(enumerate(replay_blocks))[4:]
    assert tail[0].where.startswith("chain.dat offset ")
    assert list(source.blocks(len(replay_blocks))) == []


def test_chain_file_source_replays_the_complete_records_of_a_cut_file(
        tmp_path: Path, replay_blocks: list[bytes]) -> None:
    """A chain file cut short (a copy interrupted) replays what is complete and says the last
    record is cut, as a blocks/ directory's scan does; a cut header likewise."""
    path = tmp_path / "chain.dat"
    write_chain(path, [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    data = path.read_bytes()
    path.write_bytes(data[:-10])  # the last frame is cut short
    source = ChainFileSource(path)
    [warning] = source.warnings()
    assert "the last record" in warning and "is cut short" in warning
    assert f"genesis to height {len(replay_blocks) - 2}" in warning
    assert source.last_height() == len(replay_blocks) - 2
    assert heights_and_raw(list(source.blocks(0))) == list(enumerate(replay_blocks))[:-1]
    path.write_bytes(data + NETWORK_MAGIC[:3])  # a header cut after 3 bytes
    [warning] = ChainFileSource(path).warnings()
    assert "ends in a cut record header (3 bytes" in warning


def test_chain_file_source_names_bad_framing(tmp_path: Path, replay_blocks: list[bytes]) -> None:
    path = tmp_path / "chain.dat"
    write_chain(path, [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    data = bytearray(path.read_bytes())
    second = 8 + len(replay_blocks[0])
    data[second:second + 4] = b"\xff" * 4  # the second record's magic: not a cut tail
    path.write_bytes(bytes(data))
    source = ChainFileSource(path)
    assert source.warnings() == []
    with pytest.raises(SourceError, match=f"bad magic or truncated frame header at offset "
                                          f"{second}"):
        list(source.blocks(0))
    with pytest.raises(SourceError, match=r"no such file or directory: .*missing\.dat"):
        ChainFileSource(tmp_path / "missing.dat")
    with pytest.raises(SourceError, match="no such file or directory: nowhere/x"):
        open_source("nowhere/x", GENESIS)


def test_blocks_dir_in_arrival_order_with_xor_and_several_files(
        tmp_path: Path, replay_blocks: list[bytes]) -> None:
    shuffled = arrival_order(replay_blocks, seed=5)
    assert shuffled != replay_blocks and shuffled[0] == replay_blocks[0]
    files = write_blocks_dir(tmp_path, shuffled, xor_key=KEY, max_file_size=30_000,
                             chunk_size=1 << 16)
    assert len(files) > 1
    # finalized files hold exactly their records; the last one is zero-padded to the chunk
    assert files[-1].stat().st_size % (1 << 16) == 0
    assert (tmp_path / XOR_FILE).read_bytes() == KEY
    # obfuscated on disk: the magic does not appear in clear
    assert not files[0].read_bytes().startswith(NETWORK_MAGIC)
    source = BlocksDirSource(tmp_path, GENESIS)
    assert source.last_height() == len(replay_blocks) - 1
    assert heights_and_raw(list(source.blocks(0))) == list(enumerate(replay_blocks))
    assert heights_and_raw(list(source.blocks(3))) == list(enumerate(replay_blocks))[3:]
    assert source.skipped_bytes > 0 and source.orphans == 0 and not source.bad


def test_blocks_dir_skips_junk_and_duplicates_and_drops_stale_branches(
        tmp_path: Path, replay_blocks: list[bytes]) -> None:
    main = [parse_block(b) for b in replay_blocks]
    # a stale block: a sibling of block 3 (same parent, empty, another time)
    stale = make_block(main[2].hash, 3, main[3].header.time + 1, [], b"\x51")
    raw = [*replay_blocks[:3], stale.serialize(), *replay_blocks[3:], replay_blocks[2]]
    write_blocks_dir(tmp_path, raw, xor_key=bytes(8))
    blk = tmp_path / block_file_name(0)
    data = blk.read_bytes()
    first = 8 + len(replay_blocks[0])
    # junk between two records (Core's reindex scans for the next magic)
    blk.write_bytes(data[:first] + b"\x13junk\x00\x00" + NETWORK_MAGIC[:3] + data[first:])
    source = BlocksDirSource(tmp_path, GENESIS)
    assert heights_and_raw(list(source.blocks(0))) == list(enumerate(replay_blocks))
    assert source.orphans == 1 and source.duplicates == 1
    assert source.warnings() == [f"blocks directory {tmp_path}: 1 block on a stale branch is "
                                 "skipped"]
    assert source.skipped_bytes >= 9


def test_blocks_dir_warns_of_blocks_it_cannot_connect_and_cut_records(
        tmp_path: Path, replay_blocks: list[bytes]) -> None:
    """Block 1 missing and a record cut short at the end of the file: the replay stops at
    genesis, and the source says why — the blocks that do not connect (the missing parent
    named) and where the cut record is."""
    kept = [replay_blocks[0], *replay_blocks[2:]]
    write_blocks_dir(tmp_path, kept, xor_key=bytes(8), chunk_size=1 << 12)
    blk = tmp_path / block_file_name(0)
    data = blk.read_bytes()
    cut = replay_blocks[3]
    blk.write_bytes(data + NETWORK_MAGIC + len(cut).to_bytes(4, "little") + cut[:len(cut) // 2])
    source = BlocksDirSource(tmp_path, GENESIS)
    assert source.last_height() == 0 and source.unconnected
    missing = parse_block(replay_blocks[1]).hash_hex
    warnings = source.warnings()
    assert warnings[0].endswith(f"{len(kept) - 1} blocks do not connect to genesis (missing "
                                f"parent {missing}): they will not be replayed")
    assert warnings[1].endswith(f"{block_file_name(0)} offset {len(data)} skipped: record "
                                f"length {len(cut)} out of range")
    assert len(warnings) == 2
    assert not _clean_warnings(tmp_path, replay_blocks)  # a complete directory: none


def _clean_warnings(tmp_path: Path, replay_blocks: list[bytes]) -> list[str]:
    write_blocks_dir(tmp_path / "clean", replay_blocks, xor_key=bytes(8))
    return BlocksDirSource(tmp_path / "clean", GENESIS).warnings()


def test_blocks_dir_tie_goes_to_the_first_seen_tip(tmp_path: Path,
                                                   replay_blocks: list[bytes]) -> None:
    main = [parse_block(b) for b in replay_blocks]
    tip = main[-1]
    rival = make_block(tip.header.prev_hash, tip.header.height, tip.header.time + 5, [],
                       b"\x51")
    write_blocks_dir(tmp_path, [*replay_blocks[:-1], rival.serialize(), replay_blocks[-1]])
    blocks = list(BlocksDirSource(tmp_path, GENESIS).blocks(0))
    assert blocks[-1].raw == rival.serialize()


def test_blocks_dir_names_an_unreadable_block_on_the_chain(
        tmp_path: Path, replay_blocks: list[bytes]) -> None:
    write_blocks_dir(tmp_path, replay_blocks, xor_key=KEY)
    blk = tmp_path / block_file_name(0)
    data = bytearray(xor_obfuscate(blk.read_bytes(), KEY, 0))
    # cut the transaction count of block 4 to zero... then the rest is trailing garbage
    offset = sum(8 + len(b) for b in replay_blocks[:4]) + 8
    header_len = len(parse_block(replay_blocks[4]).header.serialize())
    data[offset + header_len] = 0xFD  # a compact size promising more than the block holds
    blk.write_bytes(xor_obfuscate(bytes(data), KEY, 0))
    source = BlocksDirSource(tmp_path, GENESIS)
    assert len(source.bad) == 1 and source.last_height() == 3
    got = []
    with pytest.raises(SourceError, match=r"block after height 3 \(blk00000.dat offset "
                                          rf"{offset - 8}\) is unreadable"):
        got.extend(source.blocks(0))
    assert [b.height for b in got] == [0, 1, 2, 3]


def test_blocks_dir_errors(tmp_path: Path, replay_blocks: list[bytes]) -> None:
    with pytest.raises(SourceError, match="no blk"):
        BlocksDirSource(tmp_path, GENESIS)
    write_blocks_dir(tmp_path / "other", replay_blocks[1:])  # no genesis
    with pytest.raises(SourceError, match="does not contain our genesis"):
        BlocksDirSource(tmp_path / "other", GENESIS)
    write_blocks_dir(tmp_path / "key", replay_blocks)
    (tmp_path / "key" / XOR_FILE).write_bytes(b"\x01\x02")
    with pytest.raises(SourceError, match="XOR key"):
        BlocksDirSource(tmp_path / "key", GENESIS)
    with pytest.raises(SourceError, match="no such file or directory"):
        open_source(str(tmp_path / "nothing"), GENESIS)


def test_open_source_picks_by_kind(tmp_path: Path, replay_blocks: list[bytes]) -> None:
    write_chain(tmp_path / "c.dat", [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    write_blocks_dir(tmp_path / "blocks", replay_blocks)
    assert isinstance(open_source(str(tmp_path / "c.dat"), GENESIS), ChainFileSource)
    assert isinstance(open_source(str(tmp_path / "blocks"), GENESIS), BlocksDirSource)


def test_prefetch_keeps_order_bounds_read_ahead_and_passes_errors() -> None:
    produced = []
    gate = threading.Event()

    def blocks() -> object:
        for h in range(10):
            produced.append(h)
            yield SourceBlock(h, b"", str(h))
        gate.wait(5)
        raise SourceError("disk gone")

    stream = prefetch(blocks(), depth=3)  # type: ignore[arg-type]
    first = next(stream)
    assert first.height == 0
    threading.Event().wait(0.2)
    assert len(produced) <= 5  # one taken, three queued, one waiting to be put
    rest = [next(stream).height for _ in range(9)]
    assert rest == list(range(1, 10))
    gate.set()
    with pytest.raises(SourceError, match="disk gone"):
        next(stream)


def test_prefetch_stops_its_thread_when_abandoned() -> None:
    def endless() -> object:
        h = 0
        while True:
            yield SourceBlock(h, b"", "")
            h += 1

    before = threading.active_count()
    stream = prefetch(endless(), depth=2)  # type: ignore[arg-type]
    next(stream)
    stream.close()
    assert threading.active_count() == before


def test_read_cookie(tmp_path: Path) -> None:
    (tmp_path / ".cookie").write_text("__cookie__:abc123\n")
    assert read_cookie(tmp_path / ".cookie") == ("__cookie__", "abc123")
    (tmp_path / "bad").write_text("nocolon")
    with pytest.raises(SourceError, match="USER:PASSWORD"):
        read_cookie(tmp_path / "bad")
    with pytest.raises(SourceError, match="cannot read"):
        read_cookie(tmp_path / "missing")
    assert os.path.exists(tmp_path / ".cookie")
