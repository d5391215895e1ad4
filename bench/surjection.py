"""Surjection proof benchmarks: verify with 2 and 3 inputs (Elements' typical rings), generate.

Rows: ``surjection_verify_2in`` (reference 3.2 t: secp256k1-zkp, docs/design.md),
``surjection_verify_3in``, ``surjection_generate`` (3 inputs), and ``*_libsecp`` rows: the same
proofs checked by the secp256k1-zkp bundled in wallycore through ctypes, measured in this run
(when wallycore is installed), so the ratio to the C reference is visible on any machine.
"""

from __future__ import annotations

import random

from bench.common import Row, make_row
from ctplugin.pedersen import Generator, generator_generate_blinded
from ctplugin.surjection import SurjectionProof, generate, verify
from ctplugin.timing import median_time
from harness.zkp import surjection as libsecp_surjection

REFERENCE_T_2IN = 3.2


def _case(n_inputs: int, seed: int) -> tuple[SurjectionProof, list[Generator], Generator,
                                              dict[str, object]]:
    rng = random.Random(seed)
    assets = [rng.randbytes(32) for _ in range(n_inputs)]
    blinds = [rng.randbytes(32) for _ in range(n_inputs)]
    gens = [generator_generate_blinded(a, b) for a, b in zip(assets, blinds)]
    out_blind = rng.randbytes(32)
    out_asset = assets[n_inputs - 1]
    out_gen = generator_generate_blinded(out_asset, out_blind)
    kwargs: dict[str, object] = dict(input_assets=assets, input_blinds=blinds,
                                     input_generators=gens, output_asset=out_asset,
                                     output_blind=out_blind, output_generator=out_gen,
                                     seed=rng.randbytes(32))
    return generate(**kwargs), gens, out_gen, kwargs  # type: ignore[arg-type]


def _libsecp_row(name: str, proof: SurjectionProof, gens: list[Generator], out_gen: Generator,
                 t_us: float, reference_t: float | None, repeat: int, number: int) -> Row | None:
    wally = libsecp_surjection()
    if wally is None:
        return None
    parsed = wally.parse_proof(proof.serialize())
    inputs = wally.parse_generators([g.serialize() for g in gens])
    output = wally.parse_generators([out_gen.serialize()])
    assert parsed is not None and inputs is not None and output is not None
    n = len(gens)
    assert wally.verify_parsed(parsed, inputs, n, output)
    seconds = median_time(lambda: wally.verify_parsed(parsed, inputs, n, output),
                          repeat=repeat, number=number)
    return make_row(name, n, seconds, t_us, reference_t,
                    note="secp256k1-zkp (wallycore) via ctypes, parsed inputs, this run")


def run(quick: bool, t_us: float) -> list[Row]:
    number = 100 if quick else 1000
    repeat = 3 if quick else 7
    rows = []
    for n_inputs, ref in ((2, REFERENCE_T_2IN), (3, None)):
        name = f"surjection_verify_{n_inputs}in"
        proof, gens, out_gen, _ = _case(n_inputs, n_inputs)
        assert verify(proof, gens, out_gen)
        seconds = median_time(lambda p=proof, g=gens, o=out_gen: verify(p, g, o),
                              repeat=repeat, number=number)
        rows.append(make_row(name, n_inputs, seconds, t_us, ref,
                             note=f"{proof.n_used} used inputs, parsed proof and generators"))
        libsecp = _libsecp_row(f"{name}_libsecp", proof, gens, out_gen, t_us, ref, repeat,
                               number)
        if libsecp is not None:
            rows.append(libsecp)
    _, _, _, kwargs = _case(3, 7)
    seconds = median_time(lambda: generate(**kwargs),  # type: ignore[arg-type]
                          repeat=repeat, number=max(number // 4, 10))
    rows.append(make_row("surjection_generate", 3, seconds, t_us, None,
                         note="3 inputs, all used; output generator given"))
    return rows
