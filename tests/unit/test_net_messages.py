"""The P2P wire format (net.messages; docs/p2p.md §1–§3): framing, the version message,
inventories, locators and Elements headers — checked against byte layouts written out here
and against the Elements test framework's own encoder where it is present."""

from __future__ import annotations

import io
import struct
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from ctplugin.elements import BlockHeader
from ctplugin.elements.model import DynafedParamEntry, DynafedParams
from ctplugin.hashes import sha256d
from net import messages as m
from tests.conftest import shared_if_present

MAGIC = bytes.fromhex("5319f20e")  # elementsregtest's


def test_an_empty_payload_frames_as_core_frames_verack() -> None:
    frame = m.encode_frame(MAGIC, "verack")
    assert frame == MAGIC + b"verack" + bytes(6) + bytes(4) + bytes.fromhex("5df6e0e2")
    header = m.FrameHeader.parse(frame, MAGIC)
    assert (header.command, header.length, header.checksum) == ("verack", 0, m.EMPTY_CHECKSUM)
    header.check_payload(b"")


def test_the_checksum_is_the_first_four_bytes_of_sha256d() -> None:
    payload = m.encode_u64(0x0102030405060708)
    frame = m.encode_frame(MAGIC, "ping", payload)
    assert frame[16:20] == struct.pack("<I", 8) and frame[20:24] == sha256d(payload)[:4]
    assert frame[24:] == bytes.fromhex("0807060504030201")
    header = m.FrameHeader.parse(frame[:24], MAGIC)
    with pytest.raises(m.ProtocolError) as error:
        header.check_payload(payload[:-1] + b"\0")
    assert error.value.reason == "checksum"


@pytest.mark.parametrize(("header", "reason"), [
    (bytes.fromhex("fabfb5da") + b"version".ljust(12, b"\0") + bytes(8), "magic"),
    (MAGIC + b"ver\0sion".ljust(12, b"\0") + bytes(8), "command"),  # data after the NUL
    (MAGIC + b"\x01bad".ljust(12, b"\0") + bytes(8), "command"),
    (MAGIC + bytes(12) + bytes(8), "command"),  # empty
    (MAGIC + b"block".ljust(12, b"\0") + struct.pack("<I", 16_000_001) + bytes(4),
     "oversized"),
    (MAGIC + b"ping", "truncated"),
])
def test_unreadable_headers_name_what_is_wrong(header: bytes, reason: str) -> None:
    with pytest.raises(m.ProtocolError) as error:
        m.FrameHeader.parse(header, MAGIC)
    assert error.value.reason == reason


def test_the_largest_payload_is_elements_bound() -> None:
    header = MAGIC + b"block".ljust(12, b"\0") + struct.pack("<I", 16_000_000) + bytes(4)
    assert m.FrameHeader.parse(header, MAGIC).length == m.MAX_PROTOCOL_MESSAGE_LENGTH
    with pytest.raises(m.ProtocolError, match="12 bytes"):
        m.encode_frame(MAGIC, "thirteenchars")


def test_version_round_trips_with_core_layout() -> None:
    version = m.Version(70016, m.LOCAL_SERVICES, 1_700_000_000, 42,
                        m.user_agent("ctplugin", "0.1.0", ("testnode0", "x")), 7, True)
    raw = version.serialize()
    assert raw[:20] == struct.pack("<iQq", 70016, 0x409, 1_700_000_000)
    assert raw[20:46] == bytes(26) and raw[46:54] == struct.pack("<Q", 0x409)
    assert raw[72:80] == struct.pack("<Q", 42)
    assert raw[80] == len("/ctplugin:0.1.0(testnode0; x)/")
    assert raw[-5:] == struct.pack("<i", 7) + b"\x01"
    assert m.Version.parse(raw) == version
    # the fields after addr_recv are optional (Core reads what is there)
    assert m.Version.parse(raw[:46]) == m.Version(70016, 0x409, 1_700_000_000, 0, "", 0, True)
    with pytest.raises(m.ProtocolError, match="truncated"):
        m.Version.parse(raw[:40])


def test_a_user_agent_longer_than_256_bytes_is_refused() -> None:
    raw = m.Version(70016, 9, 0, 1, "a" * 257, 0).serialize()
    with pytest.raises(m.ProtocolError) as error:
        m.Version.parse(raw)
    assert error.value.reason == "subversion"


def test_inventories_and_their_bound() -> None:
    items = [(m.MSG_WTX, bytes(range(32))), (m.MSG_WITNESS_BLOCK, b"\xff" * 32)]
    raw = m.encode_inv(items)
    assert raw[:5] == b"\x02\x05\x00\x00\x00" and raw[37:41] == b"\x02\x00\x00\x40"
    assert m.decode_inv(raw, "inv") == items
    with pytest.raises(m.ProtocolError) as error:
        m.decode_inv(b"\xfd" + struct.pack("<H", 50_001), "inv")
    assert error.value.reason == "oversized"
    with pytest.raises(m.ProtocolError) as error:
        m.decode_inv(raw + b"\0", "getdata")
    assert error.value.reason == "trailing"
    with pytest.raises(m.ProtocolError) as error:
        m.decode_inv(b"\xfd\x01\x00", "inv")  # 1 written in three bytes
    assert error.value.reason == "compact"


def test_getheaders_round_trips_and_bounds_its_locator() -> None:
    locator = [bytes([i]) * 32 for i in range(3)]
    raw = m.encode_getheaders(locator, b"\x07" * 32)
    assert raw[:5] == struct.pack("<I", 70016) + b"\x03"
    assert m.decode_getheaders(raw) == (locator, b"\x07" * 32)
    too_long = m.encode_getheaders([bytes(32)] * 102)
    with pytest.raises(m.ProtocolError) as error:
        m.decode_getheaders(too_long)
    assert error.value.reason == "oversized"


def _legacy_header(n: int) -> BlockHeader:
    return BlockHeader(version=0x20000000, prev_hash=bytes([n]) * 32, merkle_root=b"\x02" * 32,
                       time=1_700_000_000 + n, height=n, challenge=b"\x51", solution=b"")


def _dynafed_header() -> BlockHeader:
    entry = DynafedParamEntry(type=2, signblockscript=b"\x51", signblock_witness_limit=10,
                              fedpeg_program=b"\x00\x14" + bytes(20), fedpegscript=b"\x51",
                              extension_space=(b"\x01\x02", b""))
    return BlockHeader(version=0x20000000, prev_hash=b"\x03" * 32, merkle_root=b"\x04" * 32,
                       time=1_700_000_000, height=5,
                       dynafed_params=DynafedParams(current=entry, proposed=DynafedParamEntry()),
                       signblock_witness=(b"\x30" * 3, b""))


def test_headers_carry_the_full_elements_header_then_a_zero_count() -> None:
    headers = [_legacy_header(1), _legacy_header(2), _dynafed_header()]
    raw = m.encode_headers(headers)
    first = headers[0].serialize()
    assert len(first) == 79  # OP_TRUE challenge, empty solution: docs/p2p.md §5.1
    assert raw[0] == 3 and raw[1:80] == first and raw[80] == 0
    decoded = m.decode_headers(raw)
    assert [h.hash for h in decoded] == [h.hash for h in headers]
    assert decoded[2].signblock_witness == (b"\x30" * 3, b"")
    with pytest.raises(m.ProtocolError) as error:
        m.decode_headers(raw[:-1])  # the last transaction count is missing
    assert error.value.reason == "truncated"


def test_more_than_2000_headers_are_refused() -> None:
    with pytest.raises(m.ProtocolError) as error:
        m.decode_headers(b"\xfd" + struct.pack("<H", 2001))
    assert error.value.reason == "oversized"


def test_service_names_follow_core() -> None:
    assert m.service_names(m.LOCAL_SERVICES) == ["NETWORK", "WITNESS", "NETWORK_LIMITED"]
    assert m.service_names(0) == []


# --- against the framework's own encoder ----------------------------------------------------

@pytest.fixture(scope="module")
def framework_messages() -> Iterator[Any]:
    root = shared_if_present("elements-functional")
    if root is None:
        pytest.skip("the Elements functional tests are not present (../shared)")
    sys.path.insert(0, str(root))
    try:
        from test_framework import messages

        yield messages
    finally:
        sys.path.remove(str(root))


def test_the_frameworks_messages_decode_here(framework_messages: Any) -> None:
    fm = framework_messages
    version = fm.msg_version()
    version.nVersion, version.strSubVer, version.nStartingHeight = 70016, "/p2p-test:1/", 9
    parsed = m.Version.parse(version.serialize())
    assert (parsed.version, parsed.user_agent, parsed.start_height) == (70016, "/p2p-test:1/", 9)
    getdata = fm.msg_getdata([fm.CInv(fm.MSG_WTX, 5), fm.CInv(fm.MSG_BLOCK | fm.MSG_WITNESS_FLAG,
                                                               7)])
    assert m.decode_inv(getdata.serialize(), "getdata") == [
        (m.MSG_WTX, (5).to_bytes(32, "little")), (m.MSG_WITNESS_BLOCK, (7).to_bytes(32, "little"))]
    ours = m.encode_headers([_legacy_header(1)])
    theirs = fm.msg_headers()
    theirs.deserialize(io.BytesIO(ours))
    [block] = theirs.headers
    block.rehash()
    assert block.sha256 == int.from_bytes(_legacy_header(1).hash, "little")
    assert theirs.serialize() == ours
