"""Oracles: announcements, attestations and signature points (dlcspecs Oracle.md).

Keys and nonces are BIP340 x-only (even y). For nonce R and oracle key P, the signature on outcome
string o has s·G = S(o) = R + e·P with e = int(TH("BIP0340/challenge", R.x ‖ P.x ‖ m(o))) mod n
(the *signature point*, public before the attestation; the BIP340 algorithms themselves are
``ctplugin.secp256k1.bip340``). The message m(o) is configurable:

- ``UNTAGGED`` (default): m = SHA256(utf8(NFC(o))), rust-dlc's convention, used by the P2PD
  ecosystem and every dlcspecs ``test_vectors`` file;
- ``TAGGED``: m = TH("DLC/oracle/attestation/v0", utf8(NFC(o))), the dlcspecs text.

The oracle side (``Oracle``) signs with pre-committed nonces (``bip340.sign_with_nonce``).
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from ctplugin.dlc.digits import attested_digits
from ctplugin.dlc.errors import DlcError
from ctplugin.errors import EncodingError
from ctplugin.hashes import tagged_hash
from ctplugin.secp256k1 import KIND_XONLY, Point, bip340, ct, decode_points, kernel, msm_var
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.scalar import scalar_from_hash
from ctplugin.serialize import bigsize


class MessageHash(Enum):
    """How an outcome string becomes the 32-byte message the oracle signs."""

    UNTAGGED = "sha256"
    TAGGED = "tagged"


def outcome_message(outcome: str, scheme: MessageHash = MessageHash.UNTAGGED) -> bytes:
    """m(o): the hash of the NFC-normalised UTF-8 outcome string."""
    data = unicodedata.normalize("NFC", outcome).encode()
    if scheme is MessageHash.TAGGED:
        return tagged_hash("DLC/oracle/attestation/v0", data)
    return hashlib.sha256(data).digest()


# --- event descriptors and announcements ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class EnumEvent:
    outcomes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DigitDecompositionEvent:
    base: int
    is_signed: bool
    unit: str
    precision: int
    nb_digits: int

    @property
    def nb_nonces(self) -> int:
        return self.nb_digits + (1 if self.is_signed else 0)


EventDescriptor = EnumEvent | DigitDecompositionEvent


def _check_outcomes(event: EnumEvent, reason: str) -> None:
    """An enumeration's outcomes are distinct: an attestation of a repeated one would unlock
    the CETs of two outcomes."""
    seen: set[str] = set()
    for outcome in event.outcomes:
        if outcome in seen:
            raise DlcError(reason, f"duplicate outcome {outcome!r}")
        seen.add(outcome)


@dataclass(frozen=True, slots=True)
class OracleEvent:
    nonces: tuple[bytes, ...]
    """x-only nonces, one per signed string (digit events: most significant digit first)."""
    maturity_epoch: int
    descriptor: EventDescriptor
    event_id: str


def _string(text: str) -> bytes:
    raw = text.encode()
    return bigsize(len(raw)) + raw


ENUM_EVENT_TYPE = 55302
DIGIT_DECOMPOSITION_EVENT_TYPE = 55306
ORACLE_EVENT_TYPE = 55330


def serialize_descriptor(descriptor: EventDescriptor) -> bytes:
    """The event descriptor as a TLV (type, length, value; BigSize type and length)."""
    if isinstance(descriptor, EnumEvent):
        body = len(descriptor.outcomes).to_bytes(2, "big") + b"".join(
            _string(o) for o in descriptor.outcomes)
        kind = ENUM_EVENT_TYPE
    else:
        body = (descriptor.base.to_bytes(2, "big") + bytes((int(descriptor.is_signed),))
                + _string(descriptor.unit) + descriptor.precision.to_bytes(4, "big", signed=True)
                + descriptor.nb_digits.to_bytes(2, "big"))
        kind = DIGIT_DECOMPOSITION_EVENT_TYPE
    return bigsize(kind) + bigsize(len(body)) + body


def serialize_event(event: OracleEvent) -> bytes:
    """oracle_event (Messaging.md): u16 nb_nonces, nonces, u32 maturity, descriptor TLV,
    event_id string; without its own TLV header (what announcements sign)."""
    return (len(event.nonces).to_bytes(2, "big") + b"".join(event.nonces)
            + event.maturity_epoch.to_bytes(4, "big") + serialize_descriptor(event.descriptor)
            + _string(event.event_id))


def announcement_message(event: OracleEvent, scheme: MessageHash = MessageHash.UNTAGGED) -> bytes:
    """What the announcement signature signs: SHA256(event) (rust-dlc) or the spec's tagged
    hash "DLC/oracle/announcement/v0"."""
    data = serialize_event(event)
    if scheme is MessageHash.TAGGED:
        return tagged_hash("DLC/oracle/announcement/v0", data)
    return hashlib.sha256(data).digest()


@dataclass(frozen=True, slots=True)
class OracleAnnouncement:
    signature: bytes
    public_key: bytes
    event: OracleEvent

    def verify(self, scheme: MessageHash = MessageHash.UNTAGGED) -> bool:
        """The oracle's BIP340 signature over the event, and nonce count vs descriptor."""
        descriptor = self.event.descriptor
        expected = (descriptor.nb_nonces if isinstance(descriptor, DigitDecompositionEvent)
                    else 1)
        if len(self.event.nonces) != expected or len(set(self.event.nonces)) != expected:
            return False
        return bip340.verify(self.public_key, announcement_message(self.event, scheme),
                             self.signature)


@dataclass(frozen=True, slots=True)
class OracleAttestation:
    event_id: str
    public_key: bytes
    signatures: tuple[bytes, ...]
    outcomes: tuple[str, ...]

    def verify(self, nonces: Sequence[bytes] | None = None,
               scheme: MessageHash = MessageHash.UNTAGGED) -> bool:
        """BIP340-verify every signature; with ``nonces``, also that each used the announced R."""
        if len(self.signatures) != len(self.outcomes) or not self.signatures:
            return False
        if nonces is not None and (len(nonces) < len(self.signatures) or any(
                sig[:32] != nonce for sig, nonce in zip(self.signatures, nonces))):
            return False
        return all(bip340.verify(self.public_key, outcome_message(o, scheme), sig)
                   for sig, o in zip(self.signatures, self.outcomes))

    def secret(self, count: int | None = None) -> int:
        """Σ s_j mod n over the first ``count`` signatures: the decryption key's share."""
        sigs = self.signatures if count is None else self.signatures[:count]
        return sum(int.from_bytes(sig[32:], "big") for sig in sigs) % N


# --- oracle info as used by contracts (decoded once) ------------------------------------------

@dataclass(frozen=True, slots=True)
class OracleInfo:
    """An oracle's key and an event's nonces, decoded to points once (public data)."""

    public_key: bytes
    nonces: tuple[bytes, ...]
    key_point: Point
    nonce_points: tuple[Point, ...]
    challenges: tuple[bip340.PartialChallenge, ...] = field(compare=False, repr=False)
    """Per nonce, the BIP340 challenge having absorbed R.x ‖ P.x, so each challenge only hashes
    the 32-byte message."""
    _cache: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_xonly(cls, public_key: bytes, nonces: Sequence[bytes]) -> OracleInfo:
        if len(public_key) != 32 or any(len(n) != 32 for n in nonces):
            raise DlcError("bad-oracle-key", "oracle keys and nonces are 32-byte x-only")
        try:
            points = decode_points(public_key + b"".join(nonces), KIND_XONLY)
        except EncodingError as exc:
            raise DlcError("bad-oracle-key", str(exc)) from None
        challenges = tuple(bip340.PartialChallenge(nonce, public_key) for nonce in nonces)
        return cls(public_key, tuple(nonces), points[0], tuple(points[1:]), challenges)

    def nonce_prefix_sums(self) -> bytes:
        """Packed R_0 + … + R_k for every k (one kernel call, cached): the nonce part of any
        prefix's factorized adaptor point is one of these."""
        sums = self._cache.get("nonce_prefix_sums")
        if sums is None:
            table = b"".join(p.packed for p in self.nonce_points)
            sums = kernel.backend.subset_sums_var(
                table, [list(range(k + 1)) for k in range(len(self.nonce_points))])
            self._cache["nonce_prefix_sums"] = sums
        return sums

    def challenge(self, nonce_index: int, msg: bytes) -> int:
        """e = int(TH("BIP0340/challenge", R_j.x ‖ P.x ‖ m)) mod n."""
        return self.challenges[nonce_index].challenge(msg)

    @classmethod
    def from_announcement(cls, announcement: OracleAnnouncement) -> OracleInfo:
        return cls.from_xonly(announcement.public_key, announcement.event.nonces)

    def signature_point(self, nonce_index: int, msg: bytes) -> Point:
        """S = R_j + e·P (variable time: everything here is public)."""
        e = self.challenge(nonce_index, msg)
        return msm_var([1, e], [self.nonce_points[nonce_index], self.key_point])


# --- the oracle side -------------------------------------------------------------------------

class Oracle:
    """An oracle holding its key and per-event nonces (tests, examples, the benchmark).

    ``Oracle.from_seed(seed)`` is deterministic: its key is a tagged hash of the seed
    ("ctplugin/dlc/oracle/key") and an event's nonces (and its announcement signature's) are
    tagged hashes of the seed, the event id, the serialized descriptor and the maturity
    ("ctplugin/dlc/oracle/nonce"), so the same seed announces the same events and can attest
    them later without keeping state. Like any oracle, attesting one event with two different
    outcomes reveals its key: a deterministic oracle is for tests and demos.
    """

    def __init__(self, secret_key: int | bytes, scheme: MessageHash = MessageHash.UNTAGGED,
                 *, seed: bytes | None = None) -> None:
        self._secret = int.from_bytes(ct.secret_bytes(secret_key), "big")
        self.public_key = ct.base_mul(self._secret).xonly()
        self.scheme = scheme
        self._seed = seed
        self._nonces: dict[str, list[int]] = {}

    @classmethod
    def from_seed(cls, seed: bytes, scheme: MessageHash = MessageHash.UNTAGGED) -> Oracle:
        if not seed:
            raise DlcError("bad-seed", "an oracle seed must not be empty")
        return cls(scalar_from_hash("ctplugin/dlc/oracle/key", seed), scheme, seed=seed)

    def _derived(self, event_id: str, descriptor: EventDescriptor, maturity_epoch: int,
                 count: int) -> list[int]:
        """``count`` nonces of an event, then one more for its announcement signature."""
        assert self._seed is not None
        data = (self._seed + _string(event_id) + serialize_descriptor(descriptor)
                + maturity_epoch.to_bytes(4, "big"))
        return [scalar_from_hash("ctplugin/dlc/oracle/nonce", data + j.to_bytes(4, "big"))
                for j in range(count + 1)]

    def announce(self, event_id: str, descriptor: EventDescriptor, maturity_epoch: int = 0,
                 nonce_secrets: Sequence[int] | None = None) -> OracleAnnouncement:
        """Commit to nonces for an event and sign it (BIP340; seeded oracles derive both)."""
        count = (descriptor.nb_nonces if isinstance(descriptor, DigitDecompositionEvent) else 1)
        if not 0 <= maturity_epoch < 1 << 32:
            raise DlcError("bad-event", "maturity epoch must fit 32 bits")
        if isinstance(descriptor, EnumEvent):
            _check_outcomes(descriptor, "bad-event")
        signing_nonce = secrets.randbelow(N - 1) + 1
        if nonce_secrets is not None:
            ks = list(nonce_secrets)
        elif self._seed is not None:
            *ks, signing_nonce = self._derived(event_id, descriptor, maturity_epoch, count)
        else:
            ks = [secrets.randbelow(N - 1) + 1 for _ in range(count)]
        if len(ks) != count:
            raise DlcError("bad-nonces", f"event needs {count} nonces")
        self._nonces[event_id] = ks
        nonces = tuple(ct.base_mul(k).xonly() for k in ks)
        event = OracleEvent(nonces, maturity_epoch, descriptor, event_id)
        signature = bip340.sign_with_nonce(self._secret, signing_nonce,
                                           announcement_message(event, self.scheme))
        return OracleAnnouncement(signature, self.public_key, event)

    def attest(self, announcement: OracleAnnouncement, outcome: int | str) -> OracleAttestation:
        """Sign the outcome: every digit (digit events) or the outcome string (enum events)."""
        event = announcement.event
        if announcement.public_key != self.public_key:
            raise DlcError("not-our-event", "the announcement is another oracle's")
        descriptor = event.descriptor
        ks = self._nonces.get(event.event_id)
        if ks is None and self._seed is not None:
            count = (descriptor.nb_nonces if isinstance(descriptor, DigitDecompositionEvent)
                     else 1)
            ks = self._derived(event.event_id, descriptor, event.maturity_epoch, count)[:-1]
        if ks is None or tuple(ct.base_mul(k).xonly() for k in ks) != event.nonces:
            raise DlcError("not-our-event", "this oracle did not announce the event")
        if isinstance(descriptor, DigitDecompositionEvent):
            if isinstance(outcome, str):
                try:
                    outcome = int(outcome)
                except ValueError:
                    raise DlcError("unknown-outcome", f"{outcome!r} is not a number") from None
            strings = attested_digits(int(outcome), descriptor.base, descriptor.nb_digits,
                                      descriptor.is_signed)
        else:
            if str(outcome) not in descriptor.outcomes:
                raise DlcError("unknown-outcome", f"{outcome!r} is not an outcome of the event")
            strings = [str(outcome)]
        sigs = tuple(bip340.sign_with_nonce(self._secret, k, outcome_message(o, self.scheme))
                     for k, o in zip(ks, strings))
        return OracleAttestation(event.event_id, self.public_key, sigs, tuple(strings))
