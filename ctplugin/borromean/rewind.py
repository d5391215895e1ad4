"""Rangeproof rewinding (``secp256k1_rangeproof_rewind``): value, blinding factor and message.

Whoever knows the signer's 32-byte nonce regenerates its random stream (``drbg.prover_stream``)
and reads what the signer hid in the forged s values (``docs/borromean.md`` §3):

- the value block ``0x80 ‖ 0^7 ‖ v ‖ v ‖ v`` (v = (value − min)/10^exp, BE64) XORed into the last
  ring's last member, or its second-to-last if the true digit sits in the last slot;
- the true member of the last ring gives x = (w − s)/e, and blind = x + Σ_{i<r−1} sec_i;
- every other member gives 32 message bytes: s ⊕ w for forged members, (s + sec_i·e) ⊕ w = k_i ⊕ w
  for the true members of rings i < r−1.

``rewind`` verifies the proof first (as secp256k1-zkp does; the verification yields every
challenge e). ``rewind_known_valid`` is for a proof the caller already knows to be valid (the
node's wallet reading transactions its mempool or a connected block accepted): it computes only
the challenges the recovery needs (the true member of the last ring, and of the rings whose
message bytes are asked for), walking those rings from their first member (docs/borromean.md
§3, "Rewinding a known-valid proof"). Both check the opening blind·G + value·gen = C at the
end, so a wrong nonce or a damaged proof still yields None, never a wrong value. The recovered
blinding factor and value are secrets: the opening check multiplies them in constant time
(coincurve).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ctplugin.borromean.drbg import prover_stream
from ctplugin.borromean.verify import PreparedRangeProof, RangeProofClaim, prepare, run_rings
from ctplugin.errors import EncodingError
from ctplugin.pedersen import Commitment, Generator, commit
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N


@dataclass(frozen=True, slots=True)
class RewindResult:
    """What a rewind recovers: the committed value, its blinding factor, the embedded message
    (every recoverable byte: 32·(npub − 2), zero past the signer's message; empty for exact
    proofs) and the proven range."""

    value: int
    blind: bytes
    message: bytes
    min_value: int
    max_value: int


def _xor(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(32, "big")


def _value_block(t: bytes) -> bool:
    return bool(t[0] & 0x80) and t[8:16] == t[16:24] == t[24:32]


def rewind(proof: bytes, commitment: Commitment | bytes, generator: Generator | bytes,
           extra_commit: bytes, nonce: bytes) -> RewindResult | None:
    """Recover (value, blind, message) with the signer's ``nonce``; None if the proof does not
    verify, the nonce is not the signer's, or the recovered opening does not match C.
    Malformed proofs raise ``ProofError``."""
    _check_nonce(nonce)
    claim = RangeProofClaim.of(proof, commitment, generator, extra_commit)
    prepared = prepare(claim)
    if prepared is None:
        return None
    verdicts, evalues = run_rings([prepared], 1, challenges=True)
    if not verdicts[0]:
        return None

    def e_at(ring: int, member: int, k: int) -> int:
        return int.from_bytes(evalues[32 * k: 32 * k + 32], "big")

    return _recover(claim, prepared, nonce, e_at, None)


def rewind_known_valid(proof: bytes, commitment: Commitment | bytes,
                       generator: Generator | bytes, extra_commit: bytes, nonce: bytes, *,
                       message_len: int | None = None) -> RewindResult | None:
    """``rewind`` of a proof known to verify, without verifying it again: value, blind and
    the first ``message_len`` bytes of the message (all when None; Elements' outputs carry 64:
    asset ‖ abf).

    Precondition: the proof verifies against (commitment, generator, extra_commit); the
    caller checked it (a mempool or block transaction). Were it not so, the result is still
    None or a true opening of C (the opening is checked), but a proof that would fail
    verification is not refused. Malformed proofs raise ``ProofError``."""
    _check_nonce(nonce)
    claim = RangeProofClaim.of(proof, commitment, generator, extra_commit)
    prepared = prepare(claim)
    if prepared is None:
        return None
    chains = _RingChains(prepared)
    return _recover(claim, prepared, nonce, chains.e_at, message_len)


def _check_nonce(nonce: bytes) -> None:
    if len(nonce) != 32:
        raise EncodingError("rewind nonce must be 32 bytes", reason="length")


class _RingChains:
    """The challenges of a prepared proof, computed on demand ring by ring (docs/borromean.md
    §2 step 9): e_{i,0} = SHA256(e0 ‖ m ‖ BE32(i) ‖ BE32(0)); e_{i,j+1} = SHA256(ser33(R) ‖ m ‖
    BE32(i) ‖ BE32(j + 1)) with R = s_{i,j}·G + e_{i,j}·P_{i,j}. Reaching member j of a ring
    costs j double multiplications."""

    def __init__(self, prepared: PreparedRangeProof) -> None:
        self.prepared = prepared
        self.m = prepared.message
        self.chains: dict[int, list[bytes]] = {}  # ring → e_{i,0..} computed so far

    def e_at(self, ring: int, member: int, k: int) -> int:
        """e_{ring,member}; ``k`` is the member's flat index in the proof."""
        chain = self.chains.get(ring)
        if chain is None:
            chain = self.chains[ring] = [self._hash(self.prepared.parsed.e0, ring, 0)]
        first = k - member  # the ring's first member, flat
        while len(chain) <= member:
            j = len(chain) - 1
            at = first + j
            r = kernel.backend.double_mult_many_var(
                self.prepared.parsed.s[32 * at: 32 * at + 32], chain[j],
                self.prepared.pubs[64 * at: 64 * at + 64])
            if r == kernel.INFINITY:  # the proof is not valid: no challenge follows
                raise EncodingError("rewind: a ring step reached infinity", reason="infinity")
            ser = bytes((2 | (r[63] & 1),)) + r[:32]
            chain.append(self._hash(ser, ring, j + 1))
        return int.from_bytes(chain[member], "big")

    def _hash(self, first: bytes, ring: int, member: int) -> bytes:
        return hashlib.sha256(first + self.m + ring.to_bytes(4, "big")
                              + member.to_bytes(4, "big")).digest()


def _recover(claim: RangeProofClaim, prepared: PreparedRangeProof, nonce: bytes,
             e_at: Callable[[int, int, int], int],
             message_len: int | None) -> RewindResult | None:
    """§3's rewind steps 2-7 with the challenges ``e_at(ring, member, flat index)`` gives."""
    parsed = prepared.parsed
    head = parsed.info
    sizes = head.ring_sizes
    secs, words = prover_stream(nonce, claim.commitment, claim.generator, parsed.header, sizes)

    def s_at(k: int) -> bytes:
        return parsed.s[32 * k: 32 * k + 32]

    def recover_x(ring: int, member: int, k: int) -> int:
        e = e_at(ring, member, k)
        if not 0 < e < N:
            raise EncodingError("rewind: a challenge outside [1, n)", reason="scalar-range")
        w = int.from_bytes(words[k], "big")
        return (w - parsed.scalar(k)) * pow(e, -1, N) % N

    try:
        if head.is_exact:
            value, blind, message = head.min_value, recover_x(0, 0, 0), b""
        else:
            rings = len(sizes)
            base = 4 * (rings - 1)
            last_size = sizes[-1]
            for j in range(2):
                slot = last_size - 1 - j
                block = _xor(s_at(base + slot), words[base + slot])
                if _value_block(block):
                    break
            else:
                return None
            v = int.from_bytes(block[24:], "big")
            true_last = (v >> (2 * (rings - 1))) & 3
            if true_last == slot or true_last >= last_size:
                return None
            if v >> head.mantissa:  # outside the proven range: cannot open C
                return None
            blind = (recover_x(rings - 1, true_last, base + true_last) - secs[-1]) % N
            value = v * head.scale + head.min_value
            chunks: list[bytes] = []
            for k in range(len(words)):  # flat member k is (ring k // 4, member k % 4)
                if message_len is not None and 32 * len(chunks) >= message_len:
                    break
                if k in (base + slot, base + true_last):
                    continue
                i, j = divmod(k, 4)
                word = s_at(k)
                if j == (v >> (2 * i)) & 3:  # the ring's true member
                    word = ((parsed.scalar(k) + secs[i] * e_at(i, j, k)) % N).to_bytes(32, "big")
                chunks.append(_xor(word, words[k]))
            message = b"".join(chunks)[:message_len]  # [:None]: all of it
        opened = commit(value, blind, Generator.parse(claim.generator))
    except EncodingError:
        return None
    if opened.serialize() != claim.commitment:
        return None
    return RewindResult(value, blind.to_bytes(32, "big"), message, head.min_value, head.max_value)
