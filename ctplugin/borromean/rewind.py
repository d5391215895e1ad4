"""Rangeproof rewinding (``secp256k1_rangeproof_rewind``): value, blinding factor and message.

Whoever knows the signer's 32-byte nonce regenerates its random stream (``drbg.prover_stream``)
and reads what the signer hid in the forged s values (``docs/borromean.md`` §3):

- the value block ``0x80 ‖ 0^7 ‖ v ‖ v ‖ v`` (v = (value − min)/10^exp, BE64) XORed into the last
  ring's last member, or its second-to-last if the true digit sits in the last slot;
- the true member of the last ring gives x = (w − s)/e, and blind = x + Σ_{i<r−1} sec_i;
- every other member gives 32 message bytes: s ⊕ w for forged members, (s + sec_i·e) ⊕ w = k_i ⊕ w
  for the true members of rings i < r−1.

The proof is verified first (rewinding needs its challenges e), and the opening
blind·G + value·gen = C is checked at the end. The recovered blinding factor and value are
secrets: the opening check multiplies them in constant time (coincurve).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.borromean.drbg import prover_stream
from ctplugin.borromean.verify import RangeProofClaim, prepare, run_rings
from ctplugin.errors import EncodingError
from ctplugin.pedersen import Commitment, Generator, commit
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
    if len(nonce) != 32:
        raise EncodingError("rewind nonce must be 32 bytes", reason="length")
    claim = RangeProofClaim.of(proof, commitment, generator, extra_commit)
    prepared = prepare(claim)
    if prepared is None:
        return None
    verdicts, evalues = run_rings([prepared], 1, challenges=True)
    if not verdicts[0]:
        return None
    parsed = prepared.parsed
    head = parsed.info
    sizes = head.ring_sizes
    secs, words = prover_stream(nonce, claim.commitment, claim.generator, parsed.header, sizes)

    def s_at(k: int) -> bytes:
        return parsed.s[32 * k: 32 * k + 32]

    def e_at(k: int) -> int:
        return int.from_bytes(evalues[32 * k: 32 * k + 32], "big")

    def recover_x(k: int) -> int:
        w = int.from_bytes(words[k], "big")
        return (w - parsed.scalar(k)) * pow(e_at(k), -1, N) % N

    if head.is_exact:
        value, blind, message = head.min_value, recover_x(0), b""
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
        blind = (recover_x(base + true_last) - secs[-1]) % N
        value = v * head.scale + head.min_value
        chunks = []
        k = 0
        for i, size in enumerate(sizes):
            digit = (v >> (2 * i)) & 3
            for j in range(size):
                if k not in (base + slot, base + true_last):
                    word = s_at(k)
                    if j == digit:
                        word = ((parsed.scalar(k) + secs[i] * e_at(k)) % N).to_bytes(32, "big")
                    chunks.append(_xor(word, words[k]))
                k += 1
        message = b"".join(chunks)
    try:
        opened = commit(value, blind, Generator.parse(claim.generator))
    except EncodingError:
        return None
    if opened.serialize() != claim.commitment:
        return None
    return RewindResult(value, blind.to_bytes(32, "big"), message, head.min_value, head.max_value)
