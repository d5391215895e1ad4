"""The P2P wire format (docs/p2p.md §1–§3; Bitcoin Core / Elements ``src/protocol.h``,
``src/net.cpp`` V1Transport, ``src/primitives/block.h``): pure functions over bytes.

- Framing: ``magic(4) ‖ command(12, NUL-padded) ‖ LE32 length ‖ checksum(4) ‖ payload``, the
  checksum being the first 4 bytes of SHA256d(payload). ``encode_frame`` writes one;
  ``FrameHeader.parse`` reads the 24-byte header, ``check_payload`` the checksum.
- Payloads: ``Version`` (the version message), ``encode_inv`` / ``decode_inv`` (inv, getdata,
  notfound), ``encode_getheaders`` / ``decode_getheaders``, ``encode_headers`` /
  ``decode_headers`` (Elements headers, each followed by a 0 transaction count), ping / pong
  nonces, feefilter.

Anything malformed is a ``ProtocolError`` (a ``ParseError``) whose ``reason`` names what was
wrong; the connection manager decides what it costs the peer (docs/p2p.md §6).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ctplugin.elements import BlockHeader
from ctplugin.elements.model import parse_block_header
from ctplugin.errors import CtpluginError, ParseError
from ctplugin.hashes import sha256d
from ctplugin.serialize import compact_size, var_bytes

PROTOCOL_VERSION = 70016  # Core's PROTOCOL_VERSION = WTXID_RELAY_VERSION (node/protocol_version.h)
MIN_PEER_PROTO_VERSION = 31800
SENDHEADERS_VERSION = 70012
FEEFILTER_VERSION = 70013
WTXID_RELAY_VERSION = 70016
HEADER_SIZE = 24
COMMAND_SIZE = 12
MAX_PROTOCOL_MESSAGE_LENGTH = 16_000_000
"""Elements' bound on a payload (net.h; Bitcoin Core's is 4,000,000): Elements blocks with
confidential transactions are larger, and the framework's client uses the same value."""
MAX_INV_SIZE = 50_000
MAX_LOCATOR_SZ = 101
MAX_HEADERS_RESULTS = 2000
MAX_SUBVERSION_LENGTH = 256

NODE_NETWORK = 1
NODE_BLOOM = 1 << 2  # BIP111: bloom filters and the BIP35 mempool message; we do not offer it
NODE_WITNESS = 1 << 3
NODE_NETWORK_LIMITED = 1 << 10
LOCAL_SERVICES = NODE_NETWORK | NODE_WITNESS | NODE_NETWORK_LIMITED  # 0x409, elementsd's
SERVICE_NAMES = ((NODE_NETWORK, "NETWORK"), (2, "GETUTXO"), (NODE_BLOOM, "BLOOM"),
                 (NODE_WITNESS, "WITNESS"), (64, "COMPACT_FILTERS"),
                 (NODE_NETWORK_LIMITED, "NETWORK_LIMITED"), (1 << 11, "P2P_V2"))

MSG_TX = 1
MSG_BLOCK = 2
MSG_WTX = 5
MSG_WITNESS_FLAG = 1 << 30
MSG_WITNESS_TX = MSG_TX | MSG_WITNESS_FLAG
MSG_WITNESS_BLOCK = MSG_BLOCK | MSG_WITNESS_FLAG

EMPTY_CHECKSUM = bytes.fromhex("5df6e0e2")


class ProtocolError(CtpluginError):
    """A message that does not follow the wire format (``reason`` says how: "magic",
    "command", "oversized", "checksum", "truncated", "trailing", "header"...)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def service_names(services: int) -> list[str]:
    return [name for bit, name in SERVICE_NAMES if services & bit]


def checksum(payload: bytes) -> bytes:
    return sha256d(payload)[:4]


def encode_frame(magic: bytes, command: str, payload: bytes = b"") -> bytes:
    """One v1 message: header then payload."""
    name = command.encode("ascii")
    if len(name) > COMMAND_SIZE:
        raise ProtocolError(f"command {command!r} longer than 12 bytes", reason="command")
    if len(payload) > MAX_PROTOCOL_MESSAGE_LENGTH:
        raise ProtocolError(f"{command} payload of {len(payload)} bytes exceeds "
                            f"{MAX_PROTOCOL_MESSAGE_LENGTH}", reason="oversized")
    return (magic + name.ljust(COMMAND_SIZE, b"\0") + struct.pack("<I", len(payload))
            + checksum(payload) + payload)


@dataclass(frozen=True, slots=True)
class FrameHeader:
    command: str
    length: int
    checksum: bytes

    @staticmethod
    def parse(data: bytes, magic: bytes) -> FrameHeader:
        """The 24-byte header; ``ProtocolError`` for another network's magic ("magic"), an
        invalid command string ("command") or a length above the bound ("oversized") — each
        of which ends the connection (Core's V1Transport)."""
        if len(data) != HEADER_SIZE:
            raise ProtocolError("a message header takes 24 bytes", reason="truncated")
        if data[:4] != magic:
            raise ProtocolError(f"message start {data[:4].hex()} is not {magic.hex()}",
                                reason="magic")
        raw = data[4:16]
        name, _, padding = raw.partition(b"\0")
        if (not name or padding.strip(b"\0") or not all(0x20 <= c < 0x7F for c in name)):
            raise ProtocolError(f"invalid command {raw!r}", reason="command")
        (length,) = struct.unpack_from("<I", data, 16)
        if length > MAX_PROTOCOL_MESSAGE_LENGTH:
            raise ProtocolError(f"payload length {length} exceeds "
                                f"{MAX_PROTOCOL_MESSAGE_LENGTH}", reason="oversized")
        return FrameHeader(name.decode("ascii"), length, bytes(data[20:24]))

    def check_payload(self, payload: bytes) -> None:
        if checksum(payload) != self.checksum:
            raise ProtocolError(f"{self.command}: bad checksum", reason="checksum")


_COMPACT = {0xFD: (2, 0xFD), 0xFE: (4, 0x1_0000), 0xFF: (8, 0x1_0000_0000)}


class Reader:
    """Reads a payload front to back; running past its end is a ``ProtocolError``."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.what = what

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ProtocolError(f"{self.what}: truncated", reason="truncated")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def unpack(self, fmt: str) -> int:
        return int(struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0])

    def compact(self) -> int:
        first = self.take(1)[0]
        if first < 0xFD:
            return first
        size, smallest = _COMPACT[first]
        value = int.from_bytes(self.take(size), "little")
        if value < smallest:
            raise ProtocolError(f"{self.what}: non-canonical compact size", reason="compact")
        return value

    def var_bytes(self) -> bytes:
        return self.take(self.compact())

    def stack(self) -> None:
        for _ in range(self.compact()):
            self.var_bytes()

    def at_end(self) -> bool:
        return self.pos == len(self.data)

    def done(self) -> None:
        if not self.at_end():
            raise ProtocolError(f"{self.what}: {len(self.data) - self.pos} trailing bytes",
                                reason="trailing")


# --- version ----------------------------------------------------------------------------------

_ZERO_ADDR = bytes(26)  # services, IPv6 address, port: "unknown"


def _net_addr(services: int, host: str | None, port: int) -> bytes:
    """services ‖ 16-byte IPv6 (IPv4 mapped) ‖ BE16 port; zeros for an unroutable address,
    as Core sends for 127.0.0.1."""
    if host is None:
        return struct.pack("<Q", services) + bytes(18)
    ipv4 = bytes(int(part) for part in host.split("."))
    return (struct.pack("<Q", services) + bytes(10) + b"\xff\xff" + ipv4
            + struct.pack(">H", port))


@dataclass(frozen=True, slots=True)
class Version:
    """The version message (docs/p2p.md §2.1; Core's PushNodeVersion)."""

    version: int
    services: int
    timestamp: int
    nonce: int
    user_agent: str
    start_height: int
    relay: bool = True

    def serialize(self) -> bytes:
        agent = self.user_agent.encode("utf-8")
        return (struct.pack("<iQq", self.version, self.services, self.timestamp)
                + _net_addr(0, None, 0) + _net_addr(self.services, None, 0)
                + struct.pack("<Q", self.nonce) + var_bytes(agent)
                + struct.pack("<i", self.start_height) + bytes((int(self.relay),)))

    @staticmethod
    def parse(payload: bytes) -> Version:
        """Fields after addr_recv are optional (Core reads what is there)."""
        r = Reader(payload, "version")
        version = r.unpack("<i")
        services = r.unpack("<Q")
        timestamp = r.unpack("<q")
        r.take(26)  # addr_recv
        nonce, agent, height, relay = 0, b"", 0, True
        if not r.at_end():
            r.take(26)  # addr_from
            nonce = r.unpack("<Q")
            agent = r.var_bytes()
            if len(agent) > MAX_SUBVERSION_LENGTH:
                raise ProtocolError("version: user agent longer than 256 bytes",
                                    reason="subversion")
        if not r.at_end():
            height = r.unpack("<i")
        if not r.at_end():
            relay = bool(r.take(1)[0])
        return Version(version, services, timestamp, nonce,
                       agent.decode("utf-8", errors="replace"), height, relay)


def user_agent(name: str, version: str, comments: tuple[str, ...] = ()) -> str:
    """BIP14's ``/name:version(comment; comment)/`` (Core's FormatSubVersion)."""
    return f"/{name}:{version}{'(' + '; '.join(comments) + ')' if comments else ''}/"


# --- inventories, locators, headers -----------------------------------------------------------

def encode_u64(value: int) -> bytes:
    """ping / pong nonce."""
    return struct.pack("<Q", value)


def decode_u64(payload: bytes, what: str) -> int:
    r = Reader(payload, what)
    value = r.unpack("<Q")
    r.done()
    return value


def decode_feefilter(payload: bytes) -> int:
    r = Reader(payload, "feefilter")
    value = r.unpack("<q")
    r.done()
    return value


def encode_inv(items: list[tuple[int, bytes]]) -> bytes:
    """inv / getdata / notfound: (type, 32-byte hash in internal order) entries."""
    return compact_size(len(items)) + b"".join(struct.pack("<I", t) + h for t, h in items)


def decode_inv(payload: bytes, what: str) -> list[tuple[int, bytes]]:
    r = Reader(payload, what)
    count = r.compact()
    if count > MAX_INV_SIZE:
        raise ProtocolError(f"{what}: {count} entries exceed {MAX_INV_SIZE}", reason="oversized")
    items = [(r.unpack("<I"), r.take(32)) for _ in range(count)]
    r.done()
    return items


def encode_getheaders(locator: list[bytes], stop: bytes = bytes(32)) -> bytes:
    return (struct.pack("<I", PROTOCOL_VERSION) + compact_size(len(locator))
            + b"".join(locator) + stop)


def decode_getheaders(payload: bytes) -> tuple[list[bytes], bytes]:
    """(locator, hash_stop); more than 101 locator entries is a ``ProtocolError``."""
    r = Reader(payload, "getheaders")
    r.take(4)  # the version field, written by every node and used by none
    count = r.compact()
    if count > MAX_LOCATOR_SZ:
        raise ProtocolError(f"getheaders: locator of {count} entries exceeds "
                            f"{MAX_LOCATOR_SZ}", reason="oversized")
    locator = [r.take(32) for _ in range(count)]
    stop = r.take(32)
    r.done()
    return locator, stop


def encode_headers(headers: list[BlockHeader]) -> bytes:
    """Elements' headers message: each full header (solution / signblock witness included)
    then a 0 transaction count (net_processing.cpp builds it from transaction-less blocks)."""
    return compact_size(len(headers)) + b"".join(h.serialize() + b"\0" for h in headers)


DYNAFED_VERSION_BIT = 1 << 31


def _skip_param_entry(r: Reader) -> None:
    kind = r.take(1)[0]
    if kind == 0:
        return
    if kind not in (1, 2):
        raise ProtocolError(f"headers: dynafed entry type {kind}", reason="header")
    r.var_bytes()
    r.take(4)
    if kind == 1:
        r.take(32)
    else:
        r.var_bytes()
        r.var_bytes()
        r.stack()


def _header_end(r: Reader) -> None:
    """Walk one serialized header (docs/elements-format.md §1: pre-dynafed challenge and
    solution, or dynafed parameters and signblock witness) to find where it ends."""
    version = r.unpack("<I")
    r.take(32 + 32 + 4 + 4)  # prev, merkle root, time, height
    if version & DYNAFED_VERSION_BIT:
        _skip_param_entry(r)
        _skip_param_entry(r)
        r.stack()
    else:
        r.var_bytes()
        r.var_bytes()


def decode_headers(payload: bytes) -> list[BlockHeader]:
    r = Reader(payload, "headers")
    count = r.compact()
    if count > MAX_HEADERS_RESULTS:
        raise ProtocolError(f"headers: {count} headers exceed {MAX_HEADERS_RESULTS}",
                            reason="oversized")
    headers = []
    for _ in range(count):
        start = r.pos
        _header_end(r)
        try:
            headers.append(parse_block_header(payload[start:r.pos]))
        except ParseError as exc:
            raise ProtocolError(f"headers: {exc}", reason="header") from None
        r.compact()  # the transaction count, always 0, ignored as elementsd does
    r.done()
    return headers
