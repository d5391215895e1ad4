"""The block-I/O room (``validator.store.blockio``): one record reader in two tolerances, one
record writer, positional reads, ``xor.dat``, chain files."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from ctplugin.errors import ParseError
from validator import (
    NO_XOR_KEY,
    XOR_FILE,
    BadFrame,
    BlockFileError,
    Record,
    RecordError,
    RecordFile,
    RecordReader,
    StoreValueError,
    block_file_name,
    block_files,
    read_chain,
    read_xor_key,
    unwritable,
    write_chain,
    write_record,
    write_xor_key,
    xor_obfuscate,
)
from validator.store import blockio

MAGIC = b"\xfa\xbf\xb5\xda"
KEY = bytes.fromhex("5a17c3e900ff1204")
PAYLOADS = [b"first record", bytes(range(200)), b"x" * 1000]


def frame(payload: bytes, magic: bytes = MAGIC) -> bytes:
    """A record built by hand, independently of the writer under test."""
    return magic + len(payload).to_bytes(4, "little") + payload


def write_file(path: Path, payloads: list[bytes], key: bytes = NO_XOR_KEY) -> list[int]:
    """``payloads`` written with ``write_record``; the payload offsets."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    offsets, size = [], 0
    try:
        for payload in payloads:
            offsets.append(size + 8)
            size += write_record(fd, size, MAGIC, payload, xor_key=key)
    finally:
        os.close(fd)
    return offsets


def test_the_writer_writes_core_records_and_the_strict_reader_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "blk00000.dat"
    offsets = write_file(path, PAYLOADS)
    assert path.read_bytes() == b"".join(frame(p) for p in PAYLOADS)
    assert list(RecordReader(path, MAGIC, strict=True)) == [
        Record(o, p) for o, p in zip(offsets, PAYLOADS, strict=True)]
    # skip sees the first bytes of each payload and passes records over unread
    seen: list[bytes] = []
    skipped = RecordReader(path, MAGIC, strict=True,
                           skip=lambda head: seen.append(head) or head.startswith(b"x"))
    assert [r.payload for r in skipped] == [*PAYLOADS[:2], b""]
    assert seen == [p[:80] for p in PAYLOADS]


@pytest.mark.parametrize(("damage", "offset", "reason"), [
    (lambda d: d[:-1], 4 + 8 + len(PAYLOADS[0]) + 8 + len(PAYLOADS[1]), "frame length"),
    (lambda d: d + b"\x00" * 3, sum(8 + len(p) for p in PAYLOADS), "bad magic"),
    (lambda d: b"\x00" + d[1:], 0, "bad magic"),
    (lambda d: d[:4] + (len(PAYLOADS[0]) + 1).to_bytes(4, "little") + d[8:],
     8 + len(PAYLOADS[0]) + 1, "bad magic"),  # a length one too long: the next header is off
])
def test_the_strict_reader_names_file_and_offset_of_any_deviation(
        tmp_path: Path, damage: object, offset: int, reason: str) -> None:
    path = tmp_path / "chain.dat"
    write_file(path, PAYLOADS)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(RecordError) as caught:
        list(RecordReader(path, MAGIC, strict=True))
    error = caught.value
    assert reason in error.reason and error.path == str(path)
    assert error.offset == offset
    assert str(error).startswith(f"{path}: ")
    # one error, two contracts: the store's and a parser's; rebuilt intact in another process
    assert isinstance(error, BlockFileError) and isinstance(error, ParseError)
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.path, again.offset, again.reason, str(again)) == (
        RecordError, error.path, error.offset, error.reason, str(error))


def test_the_bound_on_a_record(tmp_path: Path) -> None:
    """Core's reindex bound, MAX_BLOCK_SERIALIZED_SIZE: a longer length is junk, not a block."""
    path = tmp_path / "c.dat"
    path.write_bytes(frame(b"abc") + MAGIC + (1 << 30).to_bytes(4, "little") + b"\x00" * 16)
    with pytest.raises(RecordError, match="frame length out of range"):
        list(RecordReader(path, MAGIC, strict=True))
    with pytest.raises(RecordError) as small:
        list(RecordReader(path, MAGIC, strict=True, max_size=2))
    assert small.value.offset == 4  # the first record's length is already over that bound
    lax = RecordReader(path, MAGIC, strict=False)
    assert [r.payload for r in lax] == [b"abc"] and len(lax.bad_frames) == 1
    assert lax.bad_frames[0].length == 1 << 30 and lax.bad_frames[0].head == bytes(16)
    fd = os.open(tmp_path / "w.dat", os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(StoreValueError, match="exceeds"):
            write_record(fd, 0, MAGIC, b"12345", max_size=4)
    finally:
        os.close(fd)


def test_the_lax_reader_tolerates_what_reindex_does(tmp_path: Path) -> None:
    """Junk between records and zero padding are skipped (and counted); the last record cut
    short is a BadFrame value, not an exception."""
    cut = frame(PAYLOADS[2])[:200]
    data = (frame(PAYLOADS[0]) + b"\x13junk" + MAGIC[:3] + frame(PAYLOADS[1]) + bytes(4096)
            + frame(b"after the zeros") + cut)
    path = tmp_path / "blk00000.dat"
    path.write_bytes(data)
    with pytest.raises(RecordError):
        list(RecordReader(path, MAGIC, strict=True))
    records = RecordReader(path, MAGIC, strict=False)
    assert [r.payload for r in records] == [PAYLOADS[0], PAYLOADS[1], b"after the zeros"]
    assert records.skipped_bytes == 8 + 4096 + len(cut)
    start = data.index(cut) + 8
    assert records.bad_frames == [BadFrame(start, len(PAYLOADS[2]), PAYLOADS[2][:80],
                                           f"record length {len(PAYLOADS[2])} out of range")]


def test_the_lax_reader_finds_a_magic_across_its_read_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blockio, "SCAN_CHUNK", 16)
    for junk in range(30, 50):  # the next magic straddles a chunk boundary somewhere here
        path = tmp_path / f"j{junk}.dat"
        path.write_bytes(b"\x01" * junk + frame(b"found"))
        records = RecordReader(path, MAGIC, strict=False)
        assert [r.payload for r in records] == [b"found"] and records.skipped_bytes == junk


def test_obfuscated_files_read_as_the_clear_ones(tmp_path: Path) -> None:
    clear, hidden = tmp_path / "clear.dat", tmp_path / "hidden.dat"
    write_file(clear, PAYLOADS)
    offsets = write_file(hidden, PAYLOADS, key=KEY)
    assert hidden.read_bytes() == xor_obfuscate(clear.read_bytes(), KEY, 0)
    assert MAGIC not in hidden.read_bytes()
    hidden.write_bytes(hidden.read_bytes() + xor_obfuscate(b"\x07junk", KEY, hidden.stat().st_size))
    records = RecordReader(hidden, MAGIC, strict=False, xor_key=KEY)
    assert list(records) == list(RecordReader(clear, MAGIC, strict=True))
    assert records.skipped_bytes == 5
    positional = RecordFile(hidden, MAGIC, xor_key=KEY)
    try:
        assert [positional.read(o)[0] for o in reversed(offsets)] == PAYLOADS[::-1]
    finally:
        positional.close()


def test_xor_obfuscation_is_an_involution_by_file_offset() -> None:
    data = bytes(range(256)) * 3
    for offset in (0, 1, 7, 8, 12345):
        hidden = xor_obfuscate(data, KEY, offset)
        assert xor_obfuscate(hidden, KEY, offset) == data
        assert hidden[5] == data[5] ^ KEY[(offset + 5) % 8]
    assert xor_obfuscate(data, NO_XOR_KEY, 3) == data
    with pytest.raises(StoreValueError):
        xor_obfuscate(data, b"short", 0)


def test_xor_dat_and_the_blk_file_sequence(tmp_path: Path) -> None:
    assert read_xor_key(tmp_path) == NO_XOR_KEY  # before Core v28: no xor.dat
    write_xor_key(tmp_path, KEY)
    assert (tmp_path / XOR_FILE).read_bytes() == KEY and read_xor_key(tmp_path) == KEY
    (tmp_path / XOR_FILE).write_bytes(b"\x01\x02")
    with pytest.raises(BlockFileError, match="holds 2 bytes"):
        read_xor_key(tmp_path)
    with pytest.raises(StoreValueError):
        write_xor_key(tmp_path, b"\x01")
    for n in (0, 1, 3):
        (tmp_path / block_file_name(n)).write_bytes(b"")
    (tmp_path / block_file_name(0, "rev")).write_bytes(b"")
    with pytest.raises(BlockFileError, match=r"blk00003\.dat is out of sequence"):
        block_files(tmp_path)
    (tmp_path / block_file_name(3)).rename(tmp_path / block_file_name(2))
    assert [p.name for p in block_files(tmp_path)] == [
        "blk00000.dat", "blk00001.dat", "blk00002.dat"]


def test_positional_reads_check_the_header(tmp_path: Path) -> None:
    path = tmp_path / "rev00000.dat"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        size = write_record(fd, 0, MAGIC, b"undo", b"C" * 32)
        write_record(fd, size, MAGIC, b"more", b"D" * 32)
    finally:
        os.close(fd)
    records = RecordFile(path, MAGIC, trailer=32)
    try:
        assert records.read(8) == (b"undo", b"C" * 32)
        assert records.read(size + 8) == (b"more", b"D" * 32)
        for offset, reason in ((3, "bad record position"), (9, "bad magic"),
                               (size * 2 + 8, "bad magic")):
            with pytest.raises(RecordError, match=reason):
                records.read(offset)
    finally:
        records.close()
    path.write_bytes(path.read_bytes()[:-1])
    cut = RecordFile(path, MAGIC, trailer=32)
    try:
        with pytest.raises(RecordError, match="truncated"):
            cut.read(size + 8)
    finally:
        cut.close()
    with pytest.raises(BlockFileError, match="is missing"):
        RecordFile(tmp_path / "rev00009.dat", MAGIC)
    with pytest.raises(StoreValueError, match="4 bytes"):
        RecordReader(path, b"abc", strict=True)


def test_chain_files_are_written_atomically(tmp_path: Path) -> None:
    class Raw:
        def __init__(self, data: bytes) -> None:
            self.data = data

        def serialize(self) -> bytes:
            return self.data

    path = tmp_path / "chain.dat"
    write_chain(path, [Raw(p) for p in PAYLOADS], MAGIC)  # type: ignore[misc]
    assert list(read_chain(path, MAGIC)) == PAYLOADS
    assert [p.name for p in tmp_path.iterdir()] == ["chain.dat"]  # no temporary file left
    with pytest.raises(ParseError):
        list(read_chain(path, b"\x00" * 4))  # another chain's magic


def test_unwritable_says_why(tmp_path: Path) -> None:
    assert unwritable(None) is None and unwritable(tmp_path / "new.dat") is None
    assert unwritable(tmp_path / "missing" / "x.dat") == "No such file or directory"
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere
            pytest.skip("running as root")
        assert unwritable(locked / "x.dat") == "Permission denied"
    finally:
        locked.chmod(0o700)
