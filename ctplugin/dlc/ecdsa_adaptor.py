"""ECDSA adaptor signatures, compatible with secp256k1-zkp's ``ecdsa_adaptor`` module.

Notation (dlcspecs ECDSA-adaptor.md; ``docs/dlc.md`` §3): n is the group order, X = x·G
the signing key, Y the encryption point (a DLC adaptor point), m the 32-byte message (a sighash).

- Encrypt: k a nonce; R_a = k·G, R = k·Y; r = R.x mod n; s_a = k⁻¹(m + r·x); plus a DLEQ proof
  (e, s) that log_G(R_a) = log_Y(R). Serialized in 162 bytes: R(33) ‖ R_a(33) ‖ s_a ‖ e ‖ s.
- DLEQ (zkp ``dleq_impl.h``): a nonce; A_G = a·G, A_Y = a·Y;
  e = int(TH("DLEQ", R_a ‖ Y ‖ R ‖ A_G ‖ A_Y)) mod n; s = a + e·k. Verify recomputes
  A_G = s·G − e·R_a and A_Y = s·Y − e·R and compares the challenge.
- Verify: DLEQ verify, then R_a == s_a⁻¹·m·G + s_a⁻¹·r·X.
- Decrypt with y (Y = y·G): s = s_a·y⁻¹, negated if above n/2 (low-S); the signature is (r, s).
- Recover from a published (r, s): y = s⁻¹·s_a; return y if y·G == Y, −y if y·G == −Y.

Nonces follow zkp's hardened nonce function: k = TH("ECDSAadaptor/non", x' ‖ Y ‖ m) and
a = TH("DLEQ", k' ‖ Y ‖ SHA256(R_a ‖ R)), where x' = x ⊕ TH("ECDSAadaptor/aux", aux) when auxiliary
randomness is given (the default: 32 fresh random bytes, as rust-secp256k1-zkp's ``encrypt``) and
x' = x with ``deterministic=True`` (byte-identical to zkp's ``encrypt`` without ``ndata``).

Secret scalar·point products go through ``ctplugin.secp256k1.ct`` (constant time); the two
secret inversions (k⁻¹ when signing, y⁻¹ when decrypting) are blinded by a random factor.
Verification works on public data only and uses the variable-time kernel.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import coincurve

from ctplugin.dlc.errors import DlcError
from ctplugin.errors import EncodingError
from ctplugin.hashes import sha256, tagged_hash
from ctplugin.parallel import side_by_side
from ctplugin.secp256k1 import KIND_COMPRESSED, G, Point, ct, decode_points, g_table, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend
_G_PACKED = G.packed
ADAPTOR_SIGNATURE_SIZE = 162
_HALF_N = N // 2


def _compressed(packed: bytes) -> bytes:
    """33-byte SEC1 encoding of a kernel-packed affine point (not infinity)."""
    return bytes((2 | (packed[63] & 1),)) + packed[:32]


def _int(data: bytes) -> int:
    return int.from_bytes(data, "big")


def _b32(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _blinded_inverse(secret: int) -> int:
    """secret⁻¹ mod n computed as b·(b·secret)⁻¹, so the inversion never sees the secret itself."""
    blind = secrets.randbelow(N - 1) + 1
    return blind * pow(blind * secret % N, -1, N) % N


@dataclass(frozen=True, slots=True, eq=False)
class AdaptorSignature:
    """A 162-byte adaptor signature: R, R_a (kept in their 33-byte encodings, decoded to points
    on first use), s_a and the DLEQ proof (e, s)."""

    r33: bytes
    """R = k·Y, the encrypted nonce; r = R.x mod n."""
    ra33: bytes
    """R_a = k·G."""
    s_a: int
    dleq_e: int
    dleq_s: int
    _decoded: list[Point] = field(default_factory=list, repr=False)

    def _points(self) -> list[Point]:
        if not self._decoded:
            self._decoded.extend(decode_points(self.r33 + self.ra33, KIND_COMPRESSED))
        return self._decoded

    @property
    def r_point(self) -> Point:
        return self._points()[0]

    @property
    def ra_point(self) -> Point:
        return self._points()[1]

    @property
    def r(self) -> int:
        return _int(self.r33[1:]) % N

    def _key(self) -> tuple[bytes, bytes, int, int, int]:
        return self.r33, self.ra33, self.s_a, self.dleq_e, self.dleq_s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AdaptorSignature) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @classmethod
    def from_bytes(cls, data: bytes) -> AdaptorSignature:
        return parse_many([data])[0]

    def to_bytes(self) -> bytes:
        return self.r33 + self.ra33 + _b32(self.s_a) + _b32(self.dleq_e) + _b32(self.dleq_s)


def parse_many(blobs: Sequence[bytes]) -> list[AdaptorSignature]:
    """Parse adaptor signatures with zkp's rules, decoding all their points in one kernel call.

    R and R_a must be valid compressed points, R.x mod n non-zero, s_a in [1, n), the DLEQ s
    below n (the DLEQ e is reduced mod n, as zkp does). Raises ``EncodingError`` naming the index.
    """
    points = bytearray()
    for i, blob in enumerate(blobs):
        if len(blob) != ADAPTOR_SIGNATURE_SIZE:
            raise EncodingError(f"adaptor signature {i}: must be 162 bytes, got {len(blob)}",
                                reason="length")
        points += blob[:66]
    try:
        decoded = decode_points(bytes(points), KIND_COMPRESSED)
    except EncodingError as exc:
        raise EncodingError(f"adaptor signature point: {exc}", reason=exc.reason) from None
    out = []
    for i, blob in enumerate(blobs):
        r_point, ra_point = decoded[2 * i], decoded[2 * i + 1]
        s_a, dleq_s = _int(blob[66:98]), _int(blob[130:162])
        if not 0 < s_a < N:
            raise EncodingError(f"adaptor signature {i}: s_a not in [1, n)", reason="scalar-range")
        if dleq_s >= N:
            raise EncodingError(f"adaptor signature {i}: DLEQ s not below n", reason="scalar-range")
        if r_point.x is not None and r_point.x % N == 0:
            raise EncodingError(f"adaptor signature {i}: r is zero", reason="zero")
        out.append(AdaptorSignature(blob[:33], blob[33:66], s_a, _int(blob[98:130]) % N, dleq_s,
                                    [r_point, ra_point]))
    return out


# --- nonces (secp256k1-zkp nonce_function_ecdsa_adaptor) -------------------------------------

def _tagged(tag: str, data: bytes) -> int:
    return _int(tagged_hash(tag, data))


def _dleq_challenge(ra33: bytes, y33: bytes, r33: bytes, ag33: bytes, ay33: bytes) -> int:
    """zkp ``secp256k1_dleq_challenge``: TH("DLEQ", P1 ‖ gen2 ‖ P2 ‖ A_G ‖ A_Y) mod n."""
    return _tagged("DLEQ", ra33 + y33 + r33 + ag33 + ay33) % N


# --- encrypt ---------------------------------------------------------------------------------

def encrypt(secret_key: bytes, enc_point: Point, msg32: bytes, *, aux_rand: bytes | None = None,
            deterministic: bool = False) -> AdaptorSignature:
    """Adaptor-sign ``msg32`` with ``secret_key`` so that it decrypts with log_G(enc_point).

    ``deterministic=True`` reproduces secp256k1-zkp's output without auxiliary randomness byte for
    byte; otherwise ``aux_rand`` (32 bytes, fresh random if omitted) masks the key as zkp does.
    """
    if aux_rand is not None and len(aux_rand) != 32:
        raise DlcError("bad-aux", "auxiliary randomness must be 32 bytes")
    return encrypt_many(secret_key, [(enc_point, msg32)], deterministic=deterministic,
                        aux_rands=None if aux_rand is None else [aux_rand])[0]


def encrypt_many(secret_key: bytes, items: Sequence[tuple[Point, bytes]], *,
                 deterministic: bool = False, aux_rands: Sequence[bytes] | None = None,
                 threads: int = 1) -> list[AdaptorSignature]:
    """``encrypt`` for many (encryption point, message) pairs with one key: the key, the hash
    states and the nonce inversion are shared (all k_i inverted together by Montgomery's trick,
    the one inversion blinded). Each signature equals what ``encrypt`` gives it alone.

    ``threads=2`` splits the items over two threads: coincurve (cffi) releases the GIL inside
    libsecp256k1, so the scalar multiplications of one half overlap the other half's Python.
    """
    x32 = ct.secret_bytes(secret_key)
    if aux_rands is not None and len(aux_rands) != len(items):
        raise DlcError("bad-aux", "one auxiliary randomness per item")
    if threads > 1 and len(items) >= 8:
        half = len(items) // 2
        halves = side_by_side(
            lambda part: _nonce_parts(x32, items[part], deterministic,
                                      None if aux_rands is None else aux_rands[part]),
            [slice(0, half), slice(half, None)], 2)
        partial = halves[0] + halves[1]
    else:
        partial = _nonce_parts(x32, items, deterministic, aux_rands)
    return _finish(_int(x32), items, partial)


_Partial = tuple[bytes, bytes, int, int, int, int]


def _nonce_parts(x32: bytes, items: Sequence[tuple[Point, bytes]], deterministic: bool,
                 aux_rands: Sequence[bytes] | None) -> list[_Partial]:
    """Everything but s_a: nonces, R, R_a, the DLEQ proof (r33, ra33, k, r, dleq_s, e)."""
    x = _int(x32)
    partial: list[_Partial] = []
    for index, (enc_point, msg32) in enumerate(items):
        if len(msg32) != 32:
            raise DlcError("bad-message", "adaptor signatures sign 32-byte digests")
        if enc_point.is_infinity:
            raise DlcError("bad-encryption-point", "the encryption point is infinity")
        y33 = enc_point.to_bytes()
        if deterministic:
            mask = 0
        else:
            aux = aux_rands[index] if aux_rands is not None else secrets.token_bytes(32)
            mask = _tagged("ECDSAadaptor/aux", aux)
        k = _tagged("ECDSAadaptor/non", (x ^ mask).to_bytes(32, "big") + y33 + msg32) % N
        if k == 0:  # probability 2^-256; zkp fails the same way
            raise DlcError("nonce-zero", "derived nonce is zero")
        # Constant-time products through coincurve (libsecp256k1), Y converted once for both.
        y_key = coincurve.PublicKey(b"\x04" + enc_point.packed)  # packed = x ‖ y
        k32 = _b32(k)
        r_key, ra_key = y_key.multiply(k32), coincurve.PublicKey.from_secret(k32)
        r33, ra33 = r_key.format(), ra_key.format()
        # DLEQ proof that log_G(R_a) == log_Y(R) == k.
        a = _tagged("DLEQ", (k ^ mask).to_bytes(32, "big") + y33 + sha256(ra33 + r33)) % N
        if a == 0:
            raise DlcError("nonce-zero", "derived DLEQ nonce is zero")
        a32 = _b32(a)
        e = _dleq_challenge(ra33, y33, r33, coincurve.PublicKey.from_secret(a32).format(),
                            y_key.multiply(a32).format())
        r = _int(r33[1:]) % N
        if r == 0:
            raise DlcError("degenerate-signature", "r is zero")
        partial.append((r33, ra33, k, r, (a + e * k) % N, e))
    return partial


def _finish(x: int, items: Sequence[tuple[Point, bytes]],
            partial: list[_Partial]) -> list[AdaptorSignature]:
    """s_a = k⁻¹(m + r·x) for all items."""
    # Montgomery batch inversion of the nonces: prefix products, one blinded inversion, back.
    prefix = [1]
    for item in partial:
        prefix.append(prefix[-1] * item[2] % N)
    inverse = _blinded_inverse(prefix[-1])
    k_inverses = [0] * len(partial)
    for index in range(len(partial) - 1, -1, -1):
        k_inverses[index] = inverse * prefix[index] % N
        inverse = inverse * partial[index][2] % N
    out = []
    for (r33, ra33, _k_unused, r, dleq_s, e), k_inv, (_, msg32) in zip(
            partial, k_inverses, items):
        s_a = k_inv * (_int(msg32) + r * x) % N
        if s_a == 0:
            raise DlcError("degenerate-signature", "s_a is zero")
        out.append(AdaptorSignature(r33, ra33, s_a, e, dleq_s))
    return out


# --- verify ----------------------------------------------------------------------------------

def _dleq_holds(sig: AdaptorSignature, enc_point: Point, y33: bytes) -> bool:
    try:
        sig._points()
    except EncodingError:  # a hand-built signature with a bad R or R_a encoding
        return False
    neg_e = _b32((N - sig.dleq_e) % N)
    s = _b32(sig.dleq_s)
    ag = g_table().msm_var(s, neg_e, sig.ra_point.packed)
    ay = _k.msm_var(s + neg_e, enc_point.packed + sig.r_point.packed)
    if ag == kernel.INFINITY or ay == kernel.INFINITY:
        return False
    e = _dleq_challenge(sig.ra33, y33, sig.r33, _compressed(ag), _compressed(ay))
    return e == sig.dleq_e


def _u_scalars(sig: AdaptorSignature, msg32: bytes, s_inv: int | None = None) -> tuple[int, int]:
    if s_inv is None:
        s_inv = pow(sig.s_a, -1, N)
    return s_inv * _int(msg32) % N, s_inv * sig.r % N


def verify(sig: AdaptorSignature, pubkey: Point, msg32: bytes, enc_point: Point) -> bool:
    """True iff ``sig`` adaptor-signs ``msg32`` under ``pubkey`` for ``enc_point``."""
    if len(msg32) != 32 or pubkey.is_infinity or enc_point.is_infinity:
        return False
    if not (0 < sig.s_a < N and 0 <= sig.dleq_e < N and 0 <= sig.dleq_s < N):
        return False  # only reachable for hand-built values: parsing enforces these ranges
    if not _dleq_holds(sig, enc_point, enc_point.to_bytes()):
        return False
    u1, u2 = _u_scalars(sig, msg32)
    derived = _k.msm_var(_b32(u1) + _b32(u2), _G_PACKED + pubkey.packed)
    return derived != kernel.INFINITY and derived == sig.ra_point.packed


def verify_many(pubkey: Point,
                items: Sequence[tuple[AdaptorSignature, bytes, Point]]) -> list[bool]:
    """Verify many adaptor signatures by one signer: ``items`` are (sig, msg32, enc_point).

    Each DLEQ proof needs its own A_G, A_Y (they are hashed); the final equations
    R_a,i = u1,i·G + u2,i·X are checked together as one multi-scalar multiplication with
    independent random 128-bit weights z_i: Σ z_i·R_a,i − (Σ z_i·u1,i)·G − (Σ z_i·u2,i)·X = ∞.
    If that batch fails, each equation is checked alone to say which one is bad.
    """
    results = []
    if pubkey.is_infinity:
        return [False] * len(items)
    if not all(0 < sig.s_a < N and 0 <= sig.dleq_e < N and 0 <= sig.dleq_s < N
               for sig, _, _ in items):
        return [verify(sig, pubkey, msg, enc) for sig, msg, enc in items]
    # All s_a⁻¹ in one kernel call (s_a is public: it is part of the signature).
    inverses = _k.scalar_batch_inverse(b"".join(_b32(sig.s_a) for sig, _, _ in items))
    pending: list[int] = []
    weights: list[int] = []
    acc_g = acc_x = 0
    for index, (sig, msg32, enc_point) in enumerate(items):
        ok = (len(msg32) == 32 and not enc_point.is_infinity
              and _dleq_holds(sig, enc_point, enc_point.to_bytes()))
        results.append(ok)
        if ok:
            u1, u2 = _u_scalars(sig, msg32, _int(inverses[32 * index: 32 * index + 32]))
            z = secrets.randbits(128) | 1
            acc_g += z * u1
            acc_x += z * u2
            pending.append(index)
            weights.append(z)
    if not pending:
        return results
    scalars = b"".join(_b32(w) for w in weights) + _b32((-acc_g) % N) + _b32((-acc_x) % N)
    points = b"".join(items[i][0].ra_point.packed for i in pending) + _G_PACKED + pubkey.packed
    if _k.msm_var(scalars, points) == kernel.INFINITY:
        return results
    for index in pending:
        sig, msg32, _ = items[index]
        u1, u2 = _u_scalars(sig, msg32)
        derived = _k.msm_var(_b32(u1) + _b32(u2), _G_PACKED + pubkey.packed)
        results[index] = derived != kernel.INFINITY and derived == sig.ra_point.packed
    return results


# --- decrypt / recover -----------------------------------------------------------------------

def decrypt(sig: AdaptorSignature, decryption_key: int | bytes) -> tuple[int, int]:
    """The ECDSA signature (r, s) given y = log_G(Y); s is normalized to low-S (BIP62)."""
    y = _int(ct.secret_bytes(decryption_key))
    s = sig.s_a * _blinded_inverse(y) % N
    if s > _HALF_N:
        s = N - s
    return sig.r, s


def recover(enc_point: Point, sig: AdaptorSignature, signature: tuple[int, int]) -> int:
    """Extract y = log_G(enc_point) from a published decryption ``signature`` = (r, s).

    Raises ``DlcError`` when the signature is not a decryption of ``sig`` for ``enc_point``.
    """
    r, s = signature
    if r != sig.r:
        raise DlcError("recover-mismatch", "signature r differs from the adaptor signature's")
    if not 0 < s < N:
        raise DlcError("recover-mismatch", "signature s out of range")
    y = pow(s, -1, N) * sig.s_a % N
    implied = ct.base_mul(y)
    if implied == enc_point:
        return y
    if implied == -enc_point:
        return N - y
    raise DlcError("recover-mismatch", "the signature does not decrypt this adaptor signature")


# --- DER (what goes into a witness) -----------------------------------------------------------

def der_encode(signature: tuple[int, int]) -> bytes:
    """Strict DER of (r, s) (BIP66), without the sighash byte."""

    def integer(value: int) -> bytes:
        raw = value.to_bytes((value.bit_length() + 8) // 8 or 1, "big")
        return b"\x02" + bytes((len(raw),)) + raw

    body = integer(signature[0]) + integer(signature[1])
    return b"\x30" + bytes((len(body),)) + body


def der_decode(data: bytes) -> tuple[int, int]:
    """Parse a strict-DER ECDSA signature into (r, s); ``EncodingError`` otherwise."""
    def fail(reason: str) -> EncodingError:
        return EncodingError(f"DER signature: {reason}", reason="der")

    if len(data) < 8 or data[0] != 0x30 or data[1] != len(data) - 2:
        raise fail("bad sequence header")
    values = []
    pos = 2
    for _ in range(2):
        if pos + 2 > len(data) or data[pos] != 0x02:
            raise fail("expected an integer")
        length = data[pos + 1]
        start, end = pos + 2, pos + 2 + length
        if length == 0 or end > len(data):
            raise fail("bad integer length")
        raw = data[start:end]
        if raw[0] & 0x80 or (length > 1 and raw[0] == 0 and not raw[1] & 0x80):
            raise fail("non-canonical integer")
        values.append(_int(raw))
        pos = end
    if pos != len(data):
        raise fail("trailing bytes")
    r, s = values
    if not (0 < r < N and 0 < s < N):
        raise fail("r or s out of range")
    return r, s
