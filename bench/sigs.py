"""Signature benchmark: BIP340 batches against secp256k1-zkp, and the sighashes.

Rows (``python -m bench sigs [--quick] [--json]``; per signature or per input):

- ``schnorr_single_ref``: secp256k1-zkp's ``schnorrsig_verify`` (wallycore's bundled library,
  ctypes), the key parsed for every signature as Elements does — the C reference, timed in turns
  with ``schnorr_batch`` (medians of each);
- ``schnorr_batch``: n = 1000 signatures alone in ONE batch: R and P lifted (one kernel call),
  the challenges, one claim each, one multi-scalar multiplication. Target ≤ 0.5 × the reference;
- ``schnorr_in_block``: the marginal cost per signature when the same signatures join a block's
  batch of range-proof claims (the 2000 Bulletproofs of ``bench block``'s block, ``--quick``:
  200): the median over interleaved pairs of (batch with signatures − batch without) / n,
  lifting and claims included. Target ≤ 0.25 × the reference;
- ``sighash_v0`` / ``sighash_taproot``: per input of a 100-input transaction with two blinded
  outputs (Bulletproof-sized range proofs), the per-transaction streams computed once and shared
  (``PrecomputedTransaction``) — included in the per-input figure. Target ≤ 5 us.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

from bench.block import load_blocks
from bench.common import Row, make_row
from ctplugin.batch import BatchVerifier, Claim, ClaimGroup
from ctplugin.bulletproofs import consensus_generators, output_range_proof_claims
from ctplugin.elements import Transaction, TxIn, TxOut, parse_block
from ctplugin.hashes import sha256
from ctplugin.script.batch import SchnorrClaims, lift_many
from ctplugin.script.sighash import PrecomputedTransaction, segwit_v0_sighash, taproot_sighash
from ctplugin.secp256k1 import ct
from ctplugin.timing import median_time
from harness.zkp import signatures


def _signatures(n: int) -> list[tuple[bytes, bytes, bytes]]:
    """n (x-only key, 32-byte message, signature) triples, distinct keys."""
    out = []
    for i in range(1, n + 1):
        msg = sha256(i.to_bytes(8, "big"))
        out.append((ct.xonly_public_key(i), msg, ct.schnorr_sign(i, msg, bytes(32))))
    return out


def _schnorr_claims(sigs: list[tuple[bytes, bytes, bytes]]) -> list[Claim | ClaimGroup]:
    """Lift every R and P in one kernel call; the signatures as one group (the validator's
    path: ``validator.scripts.SchnorrItem.claims``)."""
    points = lift_many([x for key, _, sig in sigs for x in (sig[:32], key)])
    assert all(p is not None for p in points)
    return [SchnorrClaims(consensus_generators().fixed, [("sig", i) for i in range(len(sigs))],
                          b"".join(points),  # type: ignore[arg-type]
                          [k for k, _, _ in sigs], [m for _, m, _ in sigs],
                          [s for _, _, s in sigs])]


def _batch(claims: list[Claim | ClaimGroup]) -> bool:
    batch = BatchVerifier(consensus_generators().fixed)
    batch.extend(claims)
    return batch.verify()


def _range_claims(n_tx: int) -> list[Claim | ClaimGroup]:
    """The range-proof claims of ``bench block``'s benchmark block (one group, as the
    validator builds them)."""
    block = parse_block(load_blocks(n_tx)[2])
    outs = [(i, j, out) for i, tx in enumerate(block.transactions[1:])
            for j, out in enumerate(tx.outputs) if out.range_proof]
    group = output_range_proof_claims([o.range_proof for _, _, o in outs],
                                      [o.value for _, _, o in outs],
                                      [o.asset for _, _, o in outs],
                                      [o.script_pubkey for _, _, o in outs],
                                      [(i, j) for i, j, _ in outs])
    return [group]


def _sighash_case(n_inputs: int) -> tuple[Transaction, list[TxOut]]:
    """A transaction spending ``n_inputs`` explicit coins into two blinded outputs."""
    proof = bytes(675)  # the consensus Bulletproof's size
    surj = bytes(67)
    outs = [TxOut(asset=b"\x0a" + bytes(range(32)), value=b"\x08" + bytes(range(32)),
                  nonce=b"\x02" + bytes(32), script_pubkey=b"\x51\x20" + bytes(32),
                  surjection_proof=surj, range_proof=proof) for _ in range(2)]
    outs.append(TxOut(asset=bytes(32), value=1000))
    inputs = [TxIn(prevout_hash=sha256(i.to_bytes(4, "big")), prevout_index=i % 3,
                   script_witness=(bytes(64),)) for i in range(n_inputs)]
    spent = [TxOut(asset=bytes(32), value=10**8 + i, script_pubkey=b"\x51\x20" + bytes(32))
             for i in range(n_inputs)]
    return Transaction(version=2, inputs=inputs, outputs=outs), spent


def _interleaved(fns: list[Callable[[], object]], repeat: int) -> list[list[float]]:
    """Wall-time samples of each of ``fns``, the functions taking turns (one warm-up call each,
    the garbage collector paused): a load spike on a shared machine then hits both sides of a
    comparison instead of one."""
    for fn in fns:
        fn()
    samples: list[list[float]] = [[] for _ in fns]
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for fn, out in zip(fns, samples):
                start = time.perf_counter()
                fn()
                out.append(time.perf_counter() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def run(quick: bool, t_us: float) -> list[Row]:
    n = 200 if quick else 1000
    sigs = _signatures(n)
    ref = signatures()
    repeat = 5 if quick else 9

    def reference() -> None:
        assert ref is not None
        for key, msg, sig in sigs:
            ref.schnorr_verify(key, msg, sig)

    assert _batch(_schnorr_claims(sigs))
    if ref is not None:
        ref_samples, batch_samples = _interleaved(
            [reference, lambda: _batch(_schnorr_claims(sigs))], repeat)
        ref_s = statistics.median(ref_samples) / n
    else:
        [batch_samples] = _interleaved([lambda: _batch(_schnorr_claims(sigs))], repeat)
        ref_s = float("nan")
    ref_t = ref_s * 1e6 / t_us
    batch_s = statistics.median(batch_samples) / n
    rows = [make_row("schnorr_single_ref", n, ref_s, t_us,
                     note="secp256k1-zkp schnorrsig_verify via ctypes (key parsed per call)"),
            make_row("schnorr_batch", n, batch_s, t_us, reference_t=ref_t, target_t=0.5 * ref_t,
                     note=f"{batch_s / ref_s:.2f}x the reference (target <= 0.5x); "
                          "lift R,P + challenges + claims + one MSM")]

    range_claims = _range_claims(100 if quick else 1000)
    alone_samples, joined_samples = _interleaved(
        [lambda: _batch(list(range_claims)), lambda: _batch(range_claims + _schnorr_claims(sigs))],
        repeat)
    alone = statistics.median(alone_samples)
    marginal = statistics.median(j - a for a, j in zip(alone_samples, joined_samples)) / n
    rows.append(make_row("schnorr_in_block", n, marginal, t_us, reference_t=ref_t,
                         target_t=0.25 * ref_t,
                         note=f"{marginal / ref_s:.2f}x the reference (target <= 0.25x); "
                              f"added to a batch of {sum(map(len, range_claims))} range-proof "
                              "claims "
                              f"({alone * 1e3:.1f} ms alone)"))

    n_inputs = 100
    tx, spent = _sighash_case(n_inputs)
    genesis = sha256(b"bench genesis")
    code = b"\x76\xa9\x14" + bytes(20) + b"\x88\xac"

    def v0() -> None:
        pre = PrecomputedTransaction(tx)
        for i in range(n_inputs):
            segwit_v0_sighash(pre, i, code, spent[i].value, 1, True)

    def taproot() -> None:
        pre = PrecomputedTransaction(tx, spent, genesis)
        for i in range(n_inputs):
            taproot_sighash(pre, i, 0)

    for name, fn in (("sighash_v0", v0), ("sighash_taproot", taproot)):
        seconds = median_time(fn, repeat=repeat) / n_inputs
        rows.append(make_row(name, n_inputs, seconds, t_us, target_t=5.0 / t_us,
                             note=f"per input of a {n_inputs}-input tx, streams shared "
                                  "(target <= 5 us)"))
    return rows
