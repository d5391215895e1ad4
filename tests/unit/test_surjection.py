"""Asset surjection proofs: format, generate → verify, tampering, and agreement with
secp256k1-zkp (libwally's ``asset_surjectionproof`` for generation, its bundled
``secp256k1_surjectionproof_{parse,verify}`` through ctypes for verification)."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ctplugin.errors import CtpluginError, ProofError
from ctplugin.pedersen import Generator, generator_generate, generator_generate_blinded
from ctplugin.secp256k1.params import N
from ctplugin.surjection import (
    MAX_INPUTS,
    PreparedTargets,
    SurjectionProof,
    generate,
    rings_of_many_prepared,
    select_inputs,
    serialized_size,
    surjection_message,
    verify,
    verify_bytes,
    verify_many_prepared,
    verify_prepared,
)
from ctplugin.surjection.prover import SeededIndexStream, nonce_scalars
from harness.zkp import surjection as libsecp_surjection

wally = pytest.importorskip("wallycore")
LIBSECP = libsecp_surjection()

blind32 = st.integers(min_value=1, max_value=N - 1).map(lambda v: v.to_bytes(32, "big"))
bytes32 = st.binary(min_size=32, max_size=32)


def _wallet(rng: random.Random, n_inputs: int, n_assets: int) -> dict[str, object]:
    """A random spend: n inputs over n_assets distinct assets; the output reuses input k's."""
    pool = [rng.randbytes(32) for _ in range(n_assets)]
    assets = [rng.choice(pool) for _ in range(n_inputs)]
    blinds = [rng.randbytes(32) for _ in range(n_inputs)]
    out_asset = rng.choice(assets)
    out_blind = rng.randbytes(32)
    return dict(input_assets=assets, input_blinds=blinds,
                input_generators=[generator_generate_blinded(a, b)
                                  for a, b in zip(assets, blinds)],
                output_asset=out_asset, output_blind=out_blind,
                output_generator=generator_generate_blinded(out_asset, out_blind),
                seed=rng.randbytes(32))


def _wally_generate(case: dict[str, object]) -> bytes:
    gens = case["input_generators"]
    return bytes(wally.asset_surjectionproof(
        case["output_asset"], case["output_blind"], case["output_generator"].serialize(),
        case["seed"], b"".join(case["input_assets"]), b"".join(case["input_blinds"]),
        b"".join(g.serialize() for g in gens)))


def _libsecp_verify(proof: bytes, gens: list[Generator], out: Generator) -> bool:
    assert LIBSECP is not None
    return LIBSECP.verify(proof, [g.serialize() for g in gens], out.serialize())


# --- generation: byte-identical to libwally, and verifies everywhere -------------------------

@pytest.mark.parametrize("n_inputs,n_assets", [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 2),
                                               (7, 3), (16, 16), (40, 5)])
def test_generate_matches_libwally_bytes(n_inputs: int, n_assets: int) -> None:
    rng = random.Random(1000 * n_inputs + n_assets)
    for _ in range(3):
        case = _wallet(rng, n_inputs, n_assets)
        ours = generate(**case)
        assert ours.serialize() == _wally_generate(case)
        assert ours.n_used == min(3, n_inputs)
        assert verify(ours, case["input_generators"], case["output_generator"])
        if LIBSECP is not None:
            assert _libsecp_verify(ours.serialize(), case["input_generators"],
                                   case["output_generator"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64), n_inputs=st.integers(1, 9), n_assets=st.integers(1, 4))
def test_generate_verify_property(seed: int, n_inputs: int, n_assets: int) -> None:
    case = _wallet(random.Random(seed), n_inputs, n_assets)
    proof = generate(**case)
    assert verify(proof, case["input_generators"], case["output_generator"])
    assert proof.serialize() == _wally_generate(case)
    assert SurjectionProof.parse(proof.serialize()) == proof


def test_generate_max_inputs_and_explicit_input_assets() -> None:
    """256 inputs (the format's limit), some unblinded (blind 0: explicit input assets)."""
    rng = random.Random(7)
    case = _wallet(rng, MAX_INPUTS, 12)
    blinds = list(case["input_blinds"])
    for i in range(0, MAX_INPUTS, 5):
        blinds[i] = bytes(32)
    case["input_blinds"] = blinds
    case["input_generators"] = [generator_generate_blinded(a, b)
                                for a, b in zip(case["input_assets"], blinds)]
    proof = generate(**case)
    assert proof.n_inputs == MAX_INPUTS and proof.size == serialized_size(MAX_INPUTS, 3)
    assert verify(proof, case["input_generators"], case["output_generator"])
    assert proof.serialize() == _wally_generate(case)


def test_explicit_asset_proof_matches_libwally() -> None:
    """A one-input proof from an explicit (unblinded) asset: libwally's explicit surjection
    proof, byte for byte, and accepted by its verifier."""
    rng = random.Random(12)
    for _ in range(4):
        asset, blind = rng.randbytes(32), rng.randbytes(32)
        out = generator_generate_blinded(asset, blind)
        ours = generate(input_assets=[asset], input_blinds=[bytes(32)],
                        input_generators=[generator_generate(asset)], output_asset=asset,
                        output_blind=blind, seed=rng.randbytes(32))
        assert ours.serialize() == bytes(wally.explicit_surjectionproof(asset, blind,
                                                                         out.serialize()))
        wally.explicit_surjectionproof_verify(ours.serialize(), asset, out.serialize())
        with pytest.raises(RuntimeError):  # wally's WALLY_ERROR
            wally.explicit_surjectionproof_verify(ours.serialize(), rng.randbytes(32),
                                                  out.serialize())


def test_generate_output_generator_defaults_to_blinded_asset() -> None:
    case = _wallet(random.Random(3), 3, 2)
    explicit = generate(**case)
    del case["output_generator"]
    assert generate(**case) == explicit


def test_generate_every_ring_size() -> None:
    case = _wallet(random.Random(4), 6, 2)
    for n_used in range(1, 7):
        proof = generate(**case, n_used=n_used)
        assert proof.n_used == n_used
        assert verify(proof, case["input_generators"], case["output_generator"])
        if LIBSECP is not None:
            assert _libsecp_verify(proof.serialize(), case["input_generators"],
                                   case["output_generator"])


def test_generate_refusals() -> None:
    rng = random.Random(5)
    case = _wallet(rng, 3, 3)
    with pytest.raises(ProofError, match="carries the output asset"):
        generate(**{**case, "output_asset": rng.randbytes(32)})
    with pytest.raises(ProofError, match="below the group order"):
        generate(**{**case, "output_blind": N.to_bytes(32, "big")})
    with pytest.raises(ProofError, match="same length"):
        generate(**{**case, "input_blinds": case["input_blinds"][:2]})
    with pytest.raises(ProofError, match="seed"):
        generate(**{**case, "seed": bytes(31)})
    with pytest.raises(ProofError, match="cannot use"):
        generate(**case, n_used=4)
    # An input generator equal to the output generator (secp256k1-zkp refuses: zero ring key).
    k = case["input_assets"].index(case["output_asset"])
    same = dict(case, output_blind=case["input_blinds"][k], output_generator=None)
    with pytest.raises(ProofError, match="equals the output generator"):
        generate(**same)
    with pytest.raises(ProofError):
        generate(**{**case, "input_assets": []})


def test_select_inputs_is_deterministic_and_finds_the_asset() -> None:
    rng = random.Random(6)
    assets = [rng.randbytes(32) for _ in range(10)]
    for trial in range(50):
        seed = rng.randbytes(32)
        target = assets[trial % 10]
        used, real = select_inputs(assets, target, 3, seed)
        assert (used, real) == select_inputs(assets, target, 3, seed)
        assert len(used) == 3 and real in used and assets[real] == target


def test_seeded_index_stream_is_uniform_enough() -> None:
    stream = SeededIndexStream(bytes(range(32)))
    counts = [0] * 7
    for _ in range(7000):
        counts[stream.next(7)] += 1
    assert all(850 < c < 1150 for c in counts)


def test_nonce_scalars_chain_previous_digests() -> None:
    """genrand feeds each digest back into the next hash input (bytes 4..31 of it)."""
    import hashlib
    secret = bytes(range(1, 33))
    first, second = nonce_scalars(2, secret)
    assert first == hashlib.sha256(bytes(4) + secret).digest()
    assert second == hashlib.sha256(b"\x01\x00\x00\x00" + first[4:] + secret[28:]).digest()


# --- verification rejects every kind of tampering, agreeing with libsecp -------------------

def _verdict(proof_bytes: bytes, gens: list[Generator], out: Generator) -> bool:
    try:
        return verify_bytes(proof_bytes, gens, out)
    except ProofError:
        return False


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64), data=st.data())
def test_bit_flips_reject_and_agree_with_libsecp(seed: int, data: st.DataObject) -> None:
    case = _wallet(random.Random(seed % 16), 3, 2)  # a few fixed proofs, many flips
    raw = generate(**case).serialize()
    position = data.draw(st.integers(0, len(raw) - 1))
    bit = data.draw(st.integers(0, 7))
    tampered = bytearray(raw)
    tampered[position] ^= 1 << bit
    gens, out = case["input_generators"], case["output_generator"]
    ours = _verdict(bytes(tampered), gens, out)
    assert not ours
    if LIBSECP is not None:
        assert LIBSECP.verify(bytes(tampered), [g.serialize() for g in gens],
                              out.serialize()) == ours


def test_wrong_context_rejects() -> None:
    rng = random.Random(8)
    case = _wallet(rng, 4, 4)
    proof = generate(**case)
    gens, out = list(case["input_generators"]), case["output_generator"]
    assert verify(proof, gens, out)
    assert not verify(proof, gens, generator_generate_blinded(case["output_asset"],
                                                              rng.randbytes(32)))
    assert not verify(proof, gens, generator_generate(case["output_asset"]))
    assert not verify(proof, gens[::-1], out)
    assert not verify(proof, gens[1:] + gens[:1], out)
    assert not verify(proof, gens[:-1], out)
    assert not verify(proof, [*gens, gens[0]], out)
    # Replacing an unused input changes the message, so the proof fails too.
    unused = next(i for i in range(4) if i not in proof.used) if proof.n_used < 4 else None
    if unused is not None:
        swapped = list(gens)
        swapped[unused] = generator_generate(rng.randbytes(32))
        assert not verify(proof, swapped, out)


def test_used_input_equal_to_output_is_rejected_not_crashing() -> None:
    """A ring key A − T = infinity must be a False verdict (as in secp256k1-zkp)."""
    case = _wallet(random.Random(9), 2, 2)
    proof = generate(**case)
    gens = list(case["input_generators"])
    gens[proof.used[0]] = case["output_generator"]
    assert not verify(proof, gens, case["output_generator"])
    if LIBSECP is not None:
        assert not _libsecp_verify(proof.serialize(), gens, case["output_generator"])


# --- strict parsing --------------------------------------------------------------------------

def _valid_raw() -> bytes:
    return generate(**_wallet(random.Random(10), 10, 3)).serialize()


@pytest.mark.parametrize("mutate,reason", [
    (lambda r: b"", "shorter than its header"),
    (lambda r: r[:1], "shorter than its header"),
    (lambda r: b"\x00\x00" + r[2:], "covers 0 inputs"),
    (lambda r: b"\x01\x01" + r[2:], "covers 257 inputs"),
    (lambda r: b"\xff\xff" + r[2:], "covers 65535 inputs"),
    (lambda r: r[:3], "inside its used-input bitmap"),
    (lambda r: r[:3] + bytes([r[3] | 0x80]) + r[4:], "beyond n_inputs"),
    (lambda r: r[:2] + b"\x00\x00" + r[4:4 + 32], "uses no input"),
    (lambda r: r[:-1], "expected"),
    (lambda r: r + b"\x00", "expected"),
    (lambda r: r[:-32] + N.to_bytes(32, "big"), "not below the group order"),
    (lambda r: r[:-32] + bytes(32), "zero"),
    (lambda r: r[:-32] + b"\xff" * 32, "not below the group order"),
])
def test_parse_rejects(mutate: object, reason: str) -> None:
    raw = _valid_raw()
    assert SurjectionProof.parse(raw).serialize() == raw
    with pytest.raises(ProofError, match=reason):
        SurjectionProof.parse(mutate(raw))  # type: ignore[operator]


def test_parse_ring_size_cap() -> None:
    case = _wallet(random.Random(11), 6, 2)
    raw = generate(**case, n_used=5).serialize()
    assert SurjectionProof.parse(raw).n_used == 5
    assert SurjectionProof.parse(raw, max_used=5).n_used == 5
    with pytest.raises(ProofError, match="uses 5 inputs, over 3"):
        SurjectionProof.parse(raw, max_used=3)


def test_value_type_rejects_inconsistent_fields() -> None:
    proof = SurjectionProof.parse(_valid_raw())
    with pytest.raises(ProofError):
        SurjectionProof(proof.n_inputs, proof.used[::-1], proof.e0, proof.s)
    with pytest.raises(ProofError):
        SurjectionProof(proof.n_inputs, proof.used, proof.e0, proof.s[:-1])
    with pytest.raises(ProofError):
        SurjectionProof(2, (0, 5), proof.e0, proof.s[:2])
    with pytest.raises(AttributeError):
        proof.n_inputs = 3  # type: ignore[misc]


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.binary(max_size=200),
    st.builds(lambda n, body: n.to_bytes(2, "little") + body,
              st.integers(0, 300), st.binary(max_size=300)),
))
def test_parse_fuzz_only_proof_error(data: bytes) -> None:
    """Arbitrary bytes: a ProofError or a proof that re-serializes to the same bytes, and
    anything we accept secp256k1-zkp's parser accepts too."""
    try:
        proof = SurjectionProof.parse(data)
    except ProofError:
        return
    except CtpluginError as exc:  # pragma: no cover - would be a wrong error type
        raise AssertionError(f"unexpected {exc!r}") from exc
    assert proof.serialize() == data
    if LIBSECP is not None:
        assert LIBSECP.parse_proof(data) is not None


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 20), used_mask=st.integers(1, 2**20 - 1), e0=bytes32,
       s=st.lists(blind32, min_size=20, max_size=20))
def test_parse_serialize_roundtrip(n: int, used_mask: int, e0: bytes, s: list[bytes]) -> None:
    used = tuple(i for i in range(n) if used_mask >> i & 1)
    assume(used)
    proof = SurjectionProof(n, used, e0, tuple(s[: len(used)]))
    raw = proof.serialize()
    assert len(raw) == proof.size == serialized_size(n, len(used))
    assert SurjectionProof.parse(raw) == proof
    # A random (non-)proof never verifies and never raises.
    gens = [generator_generate(bytes([i]) * 32) for i in range(n)]
    assert not verify(proof, gens, generator_generate(b"\xee" * 32))


# --- prepared targets (a transaction's outputs share one target list) ------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), n_inputs=st.integers(1, 6), n_outputs=st.integers(1, 4))
def test_prepared_targets_agree_with_verify(seed: int, n_inputs: int, n_outputs: int) -> None:
    """One PreparedTargets serves every output of a spend: same verdicts as ``verify``, and its
    message is ``surjection_message``; a proof checked against the wrong output or wrong count
    fails both ways."""
    rng = random.Random(seed)
    base = _wallet(rng, n_inputs, min(n_inputs, 2))
    gens = list(base["input_generators"])
    targets = PreparedTargets(gens)
    assert len(targets) == n_inputs
    outputs = []
    for _ in range(n_outputs):
        case = dict(base, output_blind=rng.randbytes(32), seed=rng.randbytes(32))
        case["output_generator"] = generator_generate_blinded(case["output_asset"],
                                                              case["output_blind"])
        outputs.append((generate(**case), case["output_generator"]))
    for proof, out in outputs:
        packed = out.point.packed
        assert targets.message(packed) == surjection_message(gens, out)
        assert verify_prepared(proof, targets, packed) and verify(proof, gens, out)
        other = outputs[0][1] if out is not outputs[0][1] else generator_generate(bytes(32))
        assert not verify_prepared(proof, targets, other.point.packed)
        assert not verify(proof, gens, other)
        assert not verify_prepared(proof, PreparedTargets([*gens, gens[0]]), packed)


def test_prepared_targets_output_equal_to_used_input_is_false() -> None:
    case = _wallet(random.Random(12), 2, 2)
    proof = generate(**case)
    gens = list(case["input_generators"])
    assert not verify_prepared(proof, PreparedTargets(gens), gens[proof.used[0]].point.packed)


# --- many proofs at once (a block's: one ring-kernel call) -----------------------------------

@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), n_tx=st.integers(1, 6), data=st.data())
def test_verify_many_prepared_agrees_with_verify_prepared(seed: int, n_tx: int,
                                                          data: st.DataObject) -> None:
    """Valid proofs, bit-flipped ones, wrong outputs, wrong target counts, a used input equal
    to the output; outputs sharing target lists — every verdict equals ``verify_prepared``'s,
    whatever the thread count."""
    rng = random.Random(seed)
    cases: list[tuple[SurjectionProof, PreparedTargets, bytes]] = []
    for _ in range(n_tx):
        base = _wallet(rng, rng.randint(1, 5), 2)
        gens = list(base["input_generators"])
        targets = PreparedTargets(gens)
        for _ in range(rng.randint(1, 3)):  # a transaction's outputs share its targets
            case = dict(base, output_blind=rng.randbytes(32), seed=rng.randbytes(32))
            case["output_generator"] = generator_generate_blinded(case["output_asset"],
                                                                  case["output_blind"])
            proof = generate(**case)
            out = case["output_generator"].point.packed
            kind = data.draw(st.sampled_from(["valid", "flip", "other", "count", "equal"]))
            if kind == "flip":
                raw = bytearray(proof.serialize())
                raw[data.draw(st.integers(2 + (proof.n_inputs + 7) // 8, len(raw) - 1))] ^= 1
                try:
                    proof = SurjectionProof.parse(bytes(raw))
                except ProofError:
                    continue  # a flip into an invalid scalar: not a well-formed case
            elif kind == "other":
                out = generator_generate(rng.randbytes(32)).point.packed
            elif kind == "count":
                cases.append((proof, PreparedTargets([*gens, gens[0]]), out))
                continue
            elif kind == "equal":
                out = gens[proof.used[0]].point.packed
            cases.append((proof, targets, out))
    want = [verify_prepared(p, t, o) for p, t, o in cases]
    for threads in (1, 2, 3):
        assert verify_many_prepared(cases, threads) == want
    assert verify_many_prepared([]) == []
    # the two-part form: its ring kernel's call run on another thread gives the same verdicts
    rings = rings_of_many_prepared(cases)
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(rings, 2).result() == want
    assert rings_of_many_prepared([])(1) == []
