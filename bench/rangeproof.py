"""Borromean range proof benchmarks: one 52-bit Liquid-default proof (4174 bytes: min
1, exp 0, message asset ‖ abf, extra commit = a 22-byte P2WPKH script) unless said.

Rows (per proof; the ``*_ref`` rows are secp256k1-zkp as wallycore bundles it, through ctypes, in
this same run, with commitments and generators parsed beforehand; each target is ours / its
reference, and ``target_t`` is that factor × the row's reference_t):

- ``borromean_verify`` / ``borromean_verify_ref``: ``ctplugin.borromean.verify`` (parse, digits,
  message, ring members, the ring kernel, one thread) vs ``secp256k1_rangeproof_verify``;
  target <= 0.5x.
- ``borromean_verify_many``: n distinct proofs (1000; --quick 100) in ONE ``verify_many`` call,
  one thread, per proof; target <= 0.4x ``borromean_verify_many_ref``.
- ``borromean_verify_many_threads``: the same call on every core, wall time per proof; target
  <= 0.25x ``borromean_verify_many_ref`` (2 cores here).
- ``borromean_verify_many_ref``: the C verifying those same n proofs, one call each, per proof.
- ``borromean_verify_ring_points``: the single proof checked with its signer's ring points (one
  MSM instead of the ring kernel: what a wallet's own send costs its node, docs/borromean.md
  §5), one thread, vs ``borromean_verify_ref``; no target of its own (a send's row is
  ``bench rpcsend``).
- ``borromean_rewind`` / ``_ref``: rewind with the signer's nonce (verify included); target
  <= 0.6x.
- ``borromean_sign`` / ``_ref``: sign the same statement (the outputs are byte-identical:
  checked); target <= 0.8x.

Ours and the reference are timed in turns (``ctplugin.timing.interleaved_times``): the single-
proof rows in one group, the three many rows in another, so each ratio compares timings taken
under the same machine load. The one-thread notes give the ratio of thread CPU times too, which
a loaded machine disturbs far less than wall time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

from bench.common import Row, make_row
from ctplugin import borromean
from ctplugin.borromean.elements import output_rangeproof, output_rangeproof_with_ring_points
from ctplugin.pedersen import commit, generator_generate_blinded
from ctplugin.timing import interleaved_times
from harness.zkp import rangeproof

SCRIPT = bytes.fromhex("0014") + bytes(range(20))


class _Case:
    """One output's secrets and its Elements-style proof."""

    def __init__(self, seed: int) -> None:
        h = hashlib.sha256(seed.to_bytes(8, "big")).digest
        self.asset = hashlib.sha256(b"asset" + h()).digest()
        self.abf = hashlib.sha256(b"abf" + h()).digest()
        self.vbf = hashlib.sha256(b"vbf" + h()).digest()
        self.nonce = hashlib.sha256(b"nonce" + h()).digest()
        self.value = 1 + int.from_bytes(h()[:6], "big")
        self.gen = generator_generate_blinded(self.asset, self.abf)
        self.commitment = commit(self.value, self.vbf, self.gen)
        self.c_enc, self.g_enc = self.commitment.serialize(), self.gen.serialize()

    def sign(self) -> bytes:
        return output_rangeproof(self.value, self.nonce, self.asset, self.abf, self.vbf,
                                 self.commitment, self.gen, SCRIPT)

    def ring_points(self) -> bytes:
        return output_rangeproof_with_ring_points(
            self.value, self.nonce, self.asset, self.abf, self.vbf, self.commitment, self.gen,
            SCRIPT).ring_points

    def claim(self, proof: bytes) -> borromean.RangeProofClaim:
        return borromean.RangeProofClaim(proof, self.c_enc, self.g_enc, SCRIPT)


def _many(n: int) -> list[borromean.RangeProofClaim]:
    """n distinct valid proofs, signed by the C reference when present (faster to build)."""
    ref = rangeproof()
    claims = []
    for seed in range(1, n + 1):
        case = _Case(seed)
        proof = None
        if ref is not None:
            proof = ref.sign(case.value, case.vbf, case.nonce, case.c_enc, case.g_enc, 1, 0, 52,
                             case.asset + case.abf, SCRIPT)
        claims.append(case.claim(proof if proof is not None else case.sign()))
    return claims


# Targets from the issue, ours / the C reference (all wall time).
TARGETS = {"verify": 0.5, "verify_many": 0.4, "verify_many_threads": 0.25, "rewind": 0.6,
           "sign": 0.8}


def _target(name: str, reference_t: float | None) -> float | None:
    factor = TARGETS.get(name)
    return None if factor is None or reference_t is None else factor * reference_t


def _target_note(name: str) -> str:
    """The row's target as its note states it (from ``TARGETS``, the one place it is set)."""
    factor = TARGETS.get(name)
    return "no target" if factor is None else f"target <= {factor}x ref"


def _cpu_note(cpu: float, ref: tuple[float, float] | None) -> str:
    """Ours / the reference in thread CPU time (both one-threaded, timed in the same turns)."""
    return "" if ref is None else f"; CPU {cpu / ref[1]:.2f}x ref"


def run(quick: bool, t_us: float) -> list[Row]:
    repeat = 3 if quick else 7
    number = 5 if quick else 20
    case = _Case(0)
    proof = case.sign()
    assert len(proof) == 4174 and borromean.verify(proof, case.commitment, case.gen, SCRIPT)
    ref = rangeproof()
    claim, points = case.claim(proof), case.ring_points()
    assert isinstance(borromean.verify_many([claim], 1, [points])[0], tuple)
    ours: dict[str, Callable[[], object]] = {
        "verify": lambda: borromean.verify(proof, case.c_enc, case.g_enc, SCRIPT),
        "verify_ring_points": lambda: borromean.verify_many([claim], 1, [points]),
        "rewind": lambda: borromean.rewind(proof, case.c_enc, case.g_enc, SCRIPT, case.nonce),
        "sign": case.sign,
    }
    refs: dict[str, Callable[[], object]] = {}
    if ref is not None:
        c, g = ref.parse_commitment(case.c_enc), ref.parse_generator(case.g_enc)
        assert c is not None and g is not None
        assert ref.verify_parsed(proof, c, g, SCRIPT) == (1, 2**52)
        ref_sign = ref.sign_parsed(case.value, case.vbf, case.nonce, c, g, 1, 0, 52,
                                   case.asset + case.abf, SCRIPT)
        if ref_sign != proof:
            raise AssertionError("the C reference signs different bytes")
        refs = {
            "verify": lambda: ref.verify_parsed(proof, c, g, SCRIPT),
            "rewind": lambda: ref.rewind_parsed(proof, c, g, SCRIPT, case.nonce, 64),
            "sign": lambda: ref.sign_parsed(case.value, case.vbf, case.nonce, c, g, 1, 0, 52,
                                            case.asset + case.abf, SCRIPT),
        }
    # ours and the reference in turns: a change in machine load hits both alike
    timed = interleaved_times({**ours,
                               **{f"{k}_ref": f for k, f in refs.items()}},
                              repeat=repeat, number=number)
    rows: list[Row] = []
    ref_t: dict[str, float | None] = {k: None for k in ours}
    for name in refs:
        wall, _ = timed[f"{name}_ref"]
        row = make_row(f"borromean_{name}_ref", 1, wall, t_us,
                       note="secp256k1-zkp (wallycore) via ctypes, parsed C and gen")
        ref_t[name] = row.t
        rows.append(row)
    ref_t["verify_ring_points"] = ref_t["verify"]
    notes = {"verify": "one thread",
             "verify_ring_points": "with the signer's ring points, one thread (vs verify_ref)",
             "rewind": "verify + DRBG + opening check",
             "sign": "byte-identical to the reference"}
    for name in ours:
        wall, cpu = timed[name]
        ref_name = "verify_ref" if name == "verify_ring_points" else f"{name}_ref"
        rows.append(make_row(f"borromean_{name}", 1, wall, t_us, ref_t[name],
                             note=f"{notes[name]}; {_target_note(name)}"
                                  + _cpu_note(cpu, timed.get(ref_name)),
                             target_t=_target(name, ref_t[name])))
    rows += _many_rows(100 if quick else 1000, t_us)
    order = ["borromean_verify", "borromean_verify_ref", "borromean_verify_many",
             "borromean_verify_many_threads", "borromean_verify_many_ref",
             "borromean_verify_ring_points", "borromean_rewind", "borromean_rewind_ref",
             "borromean_sign", "borromean_sign_ref"]
    return sorted(rows, key=lambda r: order.index(r.name))


def _many_rows(n: int, t_us: float) -> list[Row]:
    """verify_many over n proofs (one thread, every core) and the C verifying the same n proofs
    one by one, timed in turns: their own reference, not the single proof's timed minutes
    earlier under another load."""
    claims = _many(n)
    assert all(isinstance(r, tuple) for r in borromean.verify_many(claims[:4], threads=1))
    threads = os.cpu_count() or 1  # every core (the bench runs the kernel on one by default)
    group: dict[str, Callable[[], object]] = {
        "verify_many": lambda: borromean.verify_many(claims, threads=1),
        "verify_many_threads": lambda: borromean.verify_many(claims, threads=threads),
    }
    ref = rangeproof()
    if ref is not None:
        # C and gen parsed beforehand, as for borromean_verify_ref: the proof work alone
        parsed = []
        for cl in claims:
            c, g = ref.parse_commitment(cl.commitment), ref.parse_generator(cl.generator)
            assert c is not None and g is not None
            parsed.append((cl.proof, c, g, cl.extra_commit))
        assert all(ref.verify_parsed(*item) == (1, 2**52) for item in parsed[:4])
        group["verify_many_ref"] = lambda: [ref.verify_parsed(*item) for item in parsed]
    # each call is n proofs' work (seconds at full size): few repeats keep the run's length
    timed = interleaved_times(group, repeat=3)
    rows: list[Row] = []
    reference_t = None
    ref_timed = timed.get("verify_many_ref")
    if ref_timed is not None:
        row = make_row("borromean_verify_many_ref", n, ref_timed[0] / n, t_us,
                       note="secp256k1-zkp (wallycore) via ctypes, the same n proofs one call "
                            "each, parsed C and gen, in turns with the two above")
        reference_t = row.t
        rows.append(row)
    wall, cpu = timed["verify_many"]
    rows.append(make_row("borromean_verify_many", n, wall / n, t_us, reference_t,
                         note="one call, one thread, per proof (vs verify_many_ref); "
                              + _target_note("verify_many") + _cpu_note(cpu, ref_timed),
                         target_t=_target("verify_many", reference_t)))
    wall, _ = timed["verify_many_threads"]
    rows.append(make_row("borromean_verify_many_threads", n, wall / n, t_us, reference_t,
                         note=f"{threads} threads ({os.cpu_count()} cores), wall per proof "
                              f"(vs verify_many_ref); {_target_note('verify_many_threads')}",
                         target_t=_target("verify_many_threads", reference_t)))
    return rows
