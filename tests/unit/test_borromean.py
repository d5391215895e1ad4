"""Borromean range proofs (secp256k1-zkp ``rangeproof``): vectors A-C, F, G of
``docs/borromean.md`` §4, the C reference through ctypes (``harness.zkp``) and
wallycore as oracles, and hostile proofs.

Data: ``tests/fixtures/borromean_vectors.json`` (copied from the sources named in it).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import wallycore
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ctplugin import borromean
from ctplugin.borromean import REASONS, drbg, elements
from ctplugin.borromean.format import proof_len
from ctplugin.errors import EncodingError, ProofError
from ctplugin.hashes import Rfc6979HmacSha256, rfc6979_hmac_sha256
from ctplugin.pedersen import (
    H_GENERATOR,
    Commitment,
    Generator,
    commit,
    generator_generate,
    generator_generate_blinded,
)
from ctplugin.secp256k1.params import N, P
from harness import zkp
from tests.conftest import FIXTURES, load_json

VECTORS = load_json(FIXTURES / "borromean_vectors.json")
H = H_GENERATOR.serialize()
REF = zkp.rangeproof()
needs_ref = pytest.mark.skipif(REF is None, reason="wallycore's secp256k1-zkp not loadable")


def hx(value: str) -> bytes:
    return bytes.fromhex(value)


def reason_of(exc: pytest.ExceptionInfo[ProofError]) -> str:
    reason = getattr(exc.value, "reason", None)
    assert reason in REASONS
    return str(reason)


# --- A: secp256k1-zkp fixed vectors --------------------------------------------------------

@pytest.mark.parametrize("vector", VECTORS["zkp_fixed"], ids=lambda v: v["name"])
def test_zkp_fixed_vectors_verify_and_rewind(vector: dict[str, Any]) -> None:
    proof, c = hx(vector["proof"]), hx(vector["commitment"])
    assert borromean.verify(proof, c, H) == (vector["min_value"], vector["max_value"])
    result = borromean.rewind(proof, c, H, b"", hx(vector["nonce"]))
    assert result is not None
    assert result.value == vector["value"]
    assert result.blind.hex() == vector["blind"]
    assert (result.min_value, result.max_value) == (vector["min_value"], vector["max_value"])
    assert len(result.message) == vector["message_len"]
    prefix = hx(vector["message_prefix"])
    assert result.message.startswith(prefix)
    assert not any(result.message[len(prefix):])
    # another generator, a wrong nonce: no verdict / no opening
    assert borromean.verify(proof, c, generator_generate(bytes(32))) is False
    assert borromean.rewind(proof, c, H, b"", bytes(32)) is None


@pytest.mark.parametrize("vector", VECTORS["zkp_fixed"], ids=lambda v: v["name"])
def test_rewinding_a_known_valid_proof_recovers_what_rewind_does(vector: dict[str, Any]) -> None:
    """rewind_known_valid (the wallet's path for accepted transactions) computes only the
    challenges it needs, and recovers the same value, blind and message; a wrong nonce opens
    nothing."""
    proof, c, nonce = hx(vector["proof"]), hx(vector["commitment"]), hx(vector["nonce"])
    full = borromean.rewind(proof, c, H, b"", nonce)
    assert borromean.rewind_known_valid(proof, c, H, b"", nonce) == full
    assert full is not None
    for length in (0, 1, 32, 64, 100):
        part = borromean.rewind_known_valid(proof, c, H, b"", nonce, message_len=length)
        assert part is not None
        assert part.message == full.message[:length]
        assert (part.value, part.blind) == (full.value, full.blind)
    assert borromean.rewind_known_valid(proof, c, H, b"", bytes(32)) is None
    # the precondition broken (a damaged proof): still None or a true opening of C, never a
    # wrong value
    for at in range(0, len(proof), max(1, len(proof) // 23)):
        damaged = bytearray(proof)
        damaged[at] ^= 0x04
        try:
            got = borromean.rewind_known_valid(bytes(damaged), c, H, b"", nonce)
        except ProofError:
            continue
        assert got is None or commit(got.value, got.blind, H_GENERATOR).serialize() == c


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_rewind_known_valid_agrees_with_rewind(data: st.DataObject) -> None:
    case = _random_case(data, 12)
    blind = int.from_bytes(case["blind"], "big")
    assume(0 < blind < N)
    gen = generator_generate(case["asset"])
    c = commit(case["value"], case["blind"], gen)
    message = data.draw(st.binary(max_size=200), label="message")
    try:
        proof = borromean.sign(case["value"], case["blind"], case["nonce"], gen,
                               min_value=case["min_value"], exp=case["exp"],
                               min_bits=case["min_bits"], message=message,
                               extra_commit=case["extra"])
    except ProofError:
        return
    full = borromean.rewind(proof, c, gen, case["extra"], case["nonce"])
    assert full is not None
    assert borromean.rewind_known_valid(proof, c, gen, case["extra"], case["nonce"]) == full
    wrong = bytes(b ^ 1 for b in case["nonce"])
    assert borromean.rewind_known_valid(proof, c, gen, case["extra"], wrong) is None


def test_exact_value_vector_is_73_bytes_with_min_equal_max() -> None:
    vector = VECTORS["zkp_fixed"][2]
    head = borromean.info(hx(vector["proof"]))
    assert head.is_exact and head.exp == -1 and head.mantissa == 0
    assert head.min_value == head.max_value == 2**64 - 1
    assert head.proof_len == borromean.EXACT_PROOF_LEN == 73


# --- B: byte-exact signing -----------------------------------------------------------------

@pytest.mark.parametrize("vector", VECTORS["zkp_reproducible"]["vectors"], ids=lambda v: v["name"])
def test_zkp_reproducible_vectors_sign_byte_for_byte(vector: dict[str, Any]) -> None:
    shared = VECTORS["zkp_reproducible"]
    blind, nonce = hx(shared["blind"]), hx(shared["nonce"])
    message = hx(vector["message_byte"]) * vector["message_len"]
    proof = borromean.sign(vector["value"], blind, nonce, H_GENERATOR,
                           min_value=vector["min_value"], exp=vector["exp"],
                           min_bits=vector["min_bits"], message=message)
    assert proof.hex() == vector["proof"]
    c = commit(vector["value"], blind, H_GENERATOR).serialize()
    assert c.hex() == vector["commitment"]
    assert borromean.verify(proof, c, H) == tuple(vector["range"])
    result = borromean.rewind(proof, c, H, b"", nonce)
    assert result is not None and result.value == vector["value"] and result.blind == blind
    assert result.message[: len(message)] == message
    assert not any(result.message[len(message):])


# --- C: libwally's Elements output ---------------------------------------------------------

WALLY = {k: hx(v) if isinstance(v, str) else v for k, v in VECTORS["wally_unblind"].items()}


def test_wally_elements_output_verifies_only_with_its_script() -> None:
    w = WALLY
    assert borromean.verify(w["proof"], w["value_commitment"], w["asset_commitment"],
                            w["script_pubkey"]) == (1, 2**36)
    assert borromean.verify(w["proof"], w["value_commitment"], w["asset_commitment"]) is False


def test_wally_elements_output_unblinds_and_resigns_byte_for_byte() -> None:
    w = WALLY
    out = elements.unblind_output(w["blinding_key"], w["ephemeral_pubkey"], w["proof"],
                                  w["value_commitment"], w["asset_commitment"],
                                  w["script_pubkey"])
    assert out == elements.UnblindedOutput(w["value"], w["asset"], w["asset_blind"],
                                           w["value_blind"])
    nonce = elements.ecdh_nonce(w["blinding_key"], w["ephemeral_pubkey"])
    assert nonce == bytes(wallycore.ecdh_nonce_hash(w["ephemeral_pubkey"], w["blinding_key"]))
    again = elements.output_rangeproof(
        out.value, nonce, out.asset, out.asset_blind, out.value_blind,
        Commitment.parse(w["value_commitment"]), Generator.parse(w["asset_commitment"]),
        w["script_pubkey"], min_value=w["min_value"], exp=w["exp"], min_bits=w["min_bits"])
    assert again == w["proof"]
    # the wrong receiver key opens nothing
    assert elements.unblind_output(bytes(31) + b"\x01", w["ephemeral_pubkey"], w["proof"],
                                   w["value_commitment"], w["asset_commitment"],
                                   w["script_pubkey"]) is None


# --- F: vulpem fixtures (gen = H, nonce = the value commitment's first 32 bytes) ------------

VULPEM = VECTORS["vulpem"]


@pytest.mark.parametrize("case", VULPEM["sign"], ids=lambda c: c["value"])
def test_vulpem_sign(case: dict[str, str]) -> None:
    c = hx(case["valueCommitment"])
    proof = borromean.sign(int(case["value"]), hx(case["valueBlinder"]), c[:32],
                           Generator.parse(hx(case["assetCommitment"])),
                           min_value=int(case["minValue"]), exp=0, min_bits=0,
                           message=hx(case["message"]), extra_commit=hx(case["extraCommitment"]),
                           commitment=Commitment.parse(c))
    assert proof.hex() == case["expected"]


@pytest.mark.parametrize("case", VULPEM["info"], ids=lambda c: c["expected"]["minValue"])
def test_vulpem_info(case: dict[str, Any]) -> None:
    head, want = borromean.info(hx(case["proof"])), case["expected"]
    assert (head.exp, head.mantissa, head.min_value, head.max_value) == (
        int(want["exp"]), int(want["mantissa"]), int(want["minValue"]), int(want["maxValue"]))


@pytest.mark.parametrize("case", VULPEM["verify"] + VULPEM["rewind"],
                         ids=lambda c: c["valueCommitment"][:10])
def test_vulpem_verify_and_rewind(case: dict[str, Any]) -> None:
    args = (hx(case["proof"]), hx(case["valueCommitment"]), hx(case["assetCommitment"]),
            hx(case["extraCommitment"]))
    assert borromean.verify(*args) is not False
    if isinstance(case["expected"], dict):
        want = case["expected"]
        result = borromean.rewind(*args, hx(case["valueCommitment"])[:32])
        assert result is not None
        assert (result.value, result.min_value, result.max_value) == (
            int(want["value"]), int(want["minValue"]), int(want["maxValue"]))
        assert result.message[:64].hex() == want["message"]
        assert result.blind.hex() == want["blinder"]


# --- G: noble-curves (m 37, min 0, empty scriptPubKey) -------------------------------------

def test_noble_unblind_vector() -> None:
    case = VECTORS["noble_verify"]
    want = case["expected"]
    nonce = elements.ecdh_nonce(hx(case["blindingPrivkey"]), hx(case["ephemeralPubkey"]))
    proof, c, gen = hx(case["rangeproof"]), hx(case["valueCommitment"]), hx(case["assetGenerator"])
    assert borromean.verify(proof, c, gen, hx(case["scriptPubkey"])) == (0, 2**37 - 1)
    result = borromean.rewind(proof, c, gen, b"", nonce)
    assert result is not None
    assert result.value == int(want["value"])
    assert result.blind.hex() == want["valueBlindingFactor"]
    assert result.message[:32].hex() == want["asset"]
    assert result.message[32:64].hex() == want["assetBlindingFactor"]
    # The vector's assetGenerator is not generator_generate_blinded(asset, abf) (wallycore
    # agrees), so the full Elements unblind (which checks it) refuses this output.
    assert generator_generate_blinded(result.message[:32], result.message[32:64]).serialize() != gen
    assert elements.unblind_with_nonce(nonce, proof, c, gen, b"") is None


# --- DRBG and format -----------------------------------------------------------------------

@pytest.mark.parametrize("case", VECTORS["rfc6979"], ids=["key1", "key2"])
def test_rfc6979_hmac_sha256_vectors(case: dict[str, Any]) -> None:
    rng = Rfc6979HmacSha256(hx(case["seed"]))
    assert [rng.generate().hex() for _ in case["outputs"]] == case["outputs"]
    stream = rfc6979_hmac_sha256(hx(case["seed"]), len(case["outputs"]))  # the C generator
    assert stream.hex() == "".join(case["outputs"])


def test_prover_draws_continue_past_the_expected_count() -> None:
    """A rejected draw (about 2^-128 per scalar) needs more outputs than expected: the stream
    then continues exactly where the first call stopped."""
    seed = b"\x07" * 40
    draws = list(itertools.islice(drbg._outputs(seed, 2), 9))
    want = Rfc6979HmacSha256(seed)
    assert draws == [want.generate() for _ in range(9)]


@pytest.mark.parametrize(("mantissa", "with_min", "without_min"), [
    (0, 73, 65), (32, 2572, 2564), (33, 2668, 2660), (36, 2893, 2885), (39, 3149, 3141),
    (52, 4174, 4166), (64, 5134, 5126)])
def test_proof_sizes_match_the_notes_table(mantissa: int, with_min: int, without_min: int) -> None:
    assert proof_len(mantissa, True) == with_min
    assert proof_len(mantissa, False) == without_min


def test_liquid_default_header_info() -> None:
    """Elements' blind_tests: the default proof is exp 0, m 52, min 1, max 2^52 (vector H)."""
    head = borromean.info(bytes.fromhex("60330000000000000001") + bytes(4164))
    assert (head.exp, head.mantissa, head.min_value, head.max_value) == (0, 52, 1, 2**52)


# --- random cases against the C reference and wallycore ------------------------------------

def _random_case(data: st.DataObject, max_bits: int) -> dict[str, Any]:
    exp = data.draw(st.integers(-1, 18), label="exp")
    min_bits = data.draw(st.integers(0, max_bits), label="min_bits")
    value = data.draw(st.one_of(st.integers(0, 2**max_bits + 1000), st.integers(0, 2**64 - 1)),
                      label="value")
    min_value = data.draw(st.one_of(st.just(0), st.just(1), st.integers(0, value)),
                          label="min_value")
    return {"value": value, "min_value": min(min_value, value), "exp": exp,
            "min_bits": min_bits, "blind": data.draw(st.binary(min_size=32, max_size=32)),
            "nonce": data.draw(st.binary(min_size=32, max_size=32)),
            "extra": data.draw(st.binary(max_size=40)),
            "asset": data.draw(st.binary(min_size=32, max_size=32))}


@needs_ref
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_sign_verify_rewind_agree_with_the_c_reference(data: st.DataObject) -> None:
    assert REF is not None
    case = _random_case(data, 10)
    if int.from_bytes(case["blind"], "big") in (0,) or int.from_bytes(case["blind"], "big") >= N:
        return
    gen = generator_generate(case["asset"])
    c = commit(case["value"], case["blind"], gen)
    try:
        rings = len(borromean.prove_params(case["value"], case["min_value"], case["exp"],
                                           case["min_bits"]).ring_sizes)
    except ProofError:
        rings = 1
    message = data.draw(st.binary(max_size=min(128 * (rings - 1), 300)), label="message")
    ref = REF.sign(case["value"], case["blind"], case["nonce"], c.serialize(), gen.serialize(),
                   case["min_value"], case["exp"], case["min_bits"], message, case["extra"])
    try:
        ours: bytes | None = borromean.sign(
            case["value"], case["blind"], case["nonce"], gen, min_value=case["min_value"],
            exp=case["exp"], min_bits=case["min_bits"], message=message,
            extra_commit=case["extra"])
    except ProofError:
        ours = None
    assert ours == ref
    if ours is None:
        return
    assert borromean.verify(ours, c, gen, case["extra"]) == REF.verify(
        ours, c.serialize(), gen.serialize(), case["extra"])
    got = borromean.rewind(ours, c, gen, case["extra"], case["nonce"])
    want = REF.rewind(ours, c.serialize(), gen.serialize(), case["extra"], case["nonce"])
    assert want is not None and got is not None
    assert (got.value, got.blind, got.message, got.min_value, got.max_value) == want


@needs_ref
@settings(max_examples=10, deadline=None)
@given(st.integers(1, 2**40), st.binary(min_size=32, max_size=32),
       st.binary(min_size=32, max_size=32),
       st.sampled_from([b"\x6a", bytes.fromhex("0014") + b"\x11" * 20]))
def test_elements_outputs_agree_with_wallycore(value: int, asset: bytes, seed: bytes,
                                               script: bytes) -> None:
    """wallycore's asset_rangeproof and asset_unblind (min 1, exp 0, 36 bits: faster than 52;
    wally refuses an empty script)."""
    abf = (int.from_bytes(seed, "big") % (N - 1) + 1).to_bytes(32, "big")
    vbf = (int.from_bytes(seed[::-1], "big") % (N - 1) + 1).to_bytes(32, "big")
    receiver = (int.from_bytes(seed[:16] * 2, "big") % (N - 1) + 1).to_bytes(32, "big")
    ephemeral = (int.from_bytes(seed[16:] * 2, "big") % (N - 1) + 1).to_bytes(32, "big")
    receiver_pub = bytes(wallycore.ec_public_key_from_private_key(receiver))
    ephemeral_pub = bytes(wallycore.ec_public_key_from_private_key(ephemeral))
    gen = bytes(wallycore.asset_generator_from_bytes(asset, abf))
    assert gen == generator_generate_blinded(asset, abf).serialize()
    c = bytes(wallycore.asset_value_commitment(value, vbf, gen))
    proof = bytes(wallycore.asset_rangeproof(value, receiver_pub, ephemeral, asset, abf, vbf, c,
                                             script, gen, 1, 0, 36))
    nonce = elements.ecdh_nonce(receiver, ephemeral_pub)
    ours = elements.output_rangeproof(value, nonce, asset, abf, vbf, Commitment.parse(c),
                                      Generator.parse(gen), script, min_bits=36)
    assert ours == proof
    unblinded = elements.unblind_output(receiver, ephemeral_pub, proof, c, gen, script)
    assert unblinded is not None
    assert elements.unblind_with_nonce(nonce, proof, c, gen, script,
                                       known_valid=True) == unblinded
    assert (unblinded.value, unblinded.asset, unblinded.asset_blind, unblinded.value_blind) == \
        tuple(bytes(x) if isinstance(x, bytearray) else x for x in wallycore.asset_unblind(
            ephemeral_pub, receiver, proof, c, script, gen))


def test_blind_value_proofs_match_wallycore_explicit_rangeproofs() -> None:
    value, nonce, vbf = 123_456_789, bytes(range(32)), bytes(31) + b"\x07"
    gen = generator_generate_blinded(bytes(range(1, 33)), bytes(31) + b"\x05")
    c = commit(value, vbf, gen)
    proof = elements.blind_value_proof(value, nonce, vbf, c, gen)
    assert len(proof) == 73
    assert proof == bytes(wallycore.explicit_rangeproof(value, nonce, vbf, c.serialize(),
                                                        gen.serialize()))
    assert elements.verify_blind_value_proof(proof, value, c, gen)
    assert not elements.verify_blind_value_proof(proof, value + 1, c, gen)


# --- hostile proofs ------------------------------------------------------------------------

SMALL = VECTORS["zkp_fixed"][1]  # 323 bytes, m 4: fast to mutate
SMALL_PROOF, SMALL_C = hx(SMALL["proof"]), hx(SMALL["commitment"])


def _verdict(proof: bytes) -> bool:
    """Our verdict with typed errors folded into 'invalid' (anything else propagates)."""
    try:
        return borromean.verify(proof, SMALL_C, H) is not False
    except ProofError:
        return False


@needs_ref
def test_every_bit_flip_agrees_with_the_c_reference() -> None:
    """All 2584 single-bit mutants of a 323-byte proof: none verifies, ours and the C agree."""
    assert REF is not None
    for bit in range(8 * len(SMALL_PROOF)):
        mutant = bytearray(SMALL_PROOF)
        mutant[bit >> 3] ^= 1 << (bit & 7)
        ours = _verdict(bytes(mutant))
        assert ours == (REF.verify(bytes(mutant), SMALL_C, H) is not None), bit
        assert not ours  # no single flip keeps a proof valid


def test_every_truncation_and_extension_is_a_typed_error() -> None:
    for length in range(len(SMALL_PROOF)):
        with pytest.raises(ProofError) as exc:
            borromean.verify(SMALL_PROOF[:length], SMALL_C, H)
        assert reason_of(exc) in ("proof-too-short", "proof-truncated")
    for extra in (b"\x00", b"\x01" * 32, bytes(5000)):
        with pytest.raises(ProofError) as exc:
            borromean.verify(SMALL_PROOF + extra, SMALL_C, H)
        assert reason_of(exc) == "trailing-bytes"


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda p: p[:64], "proof-too-short"),
    (lambda p: b"\x80" + p[1:], "reserved-flag"),
    (lambda p: bytes((0x40 | 19,)) + p[1:], "exponent-too-large"),
    (lambda p: p[:1] + b"\x40" + p[2:], "mantissa-too-large"),
    (lambda p: bytes((0x40 | 18,)) + b"\x3f" + p[2:], "range-overflow"),
    (lambda p: p[:-1], "proof-truncated"),
    (lambda p: p + b"\x00", "trailing-bytes"),
    (lambda p: p[:2] + bytes((p[2] | 0x80,)) + p[3:], "sign-padding"),
    (lambda p: p[:3] + b"\xff" * 32 + p[35:], "digit-x-range"),
    (lambda p: p[:-32] + N.to_bytes(32, "big"), "scalar-range"),
    (lambda p: p[:-32] + bytes(32), "scalar-zero"),
])
def test_hostile_proofs_raise_typed_errors(mutate: Any, reason: str) -> None:
    with pytest.raises(ProofError) as exc:
        borromean.verify(mutate(SMALL_PROOF), SMALL_C, H)
    assert reason_of(exc) == reason
    if REF is not None:
        assert REF.verify(mutate(SMALL_PROOF), SMALL_C, H) is None


def test_digit_off_curve_and_x_at_p() -> None:
    # x = p: not below the field size; x = 5: 5^3 + 7 = 132 is not a square mod p
    for x, reason in ((P, "digit-x-range"), (5, "digit-off-curve")):
        bad = SMALL_PROOF[:3] + x.to_bytes(32, "big") + SMALL_PROOF[35:]
        with pytest.raises(ProofError) as exc:
            borromean.verify(bad, SMALL_C, H)
        assert reason_of(exc) == reason


def test_huge_claimed_sizes_are_bounded() -> None:
    """A header claiming m = 64 over a short or huge body is rejected before any work; the
    largest well-formed size is 5134 bytes."""
    header = bytes((0x40, 63))  # m = 64, min 0: 5126 bytes expected
    with pytest.raises(ProofError) as exc:
        borromean.verify(header + bytes(100), SMALL_C, H)
    assert reason_of(exc) == "proof-truncated"
    with pytest.raises(ProofError) as exc:
        borromean.verify(header + bytes(10**6), SMALL_C, H)
    assert reason_of(exc) == "trailing-bytes"
    assert proof_len(64, True) == borromean.MAX_PROOF_LEN


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=700))
def test_random_bytes_never_crash(data: bytes) -> None:
    try:
        assert borromean.verify(data, SMALL_C, H) is False
    except ProofError as exc:
        assert getattr(exc, "reason", None) in REASONS


def test_bad_encodings_and_swapped_inputs() -> None:
    with pytest.raises(EncodingError):
        borromean.verify(SMALL_PROOF, b"\x02" + SMALL_C[1:], H)
    with pytest.raises(EncodingError):
        borromean.verify(SMALL_PROOF, SMALL_C, H[:32])
    assert borromean.verify(SMALL_PROOF, SMALL_C, H, b"extra") is False
    assert borromean.verify(SMALL_PROOF, H_GENERATOR.serialize()[:0] + b"\x08" + H[1:], H) is False


def test_verify_many_reports_each_claim() -> None:
    good = borromean.RangeProofClaim.of(SMALL_PROOF, SMALL_C, H)
    bad_extra = borromean.RangeProofClaim.of(SMALL_PROOF, SMALL_C, H, b"x")
    malformed = borromean.RangeProofClaim.of(SMALL_PROOF + b"\x00", SMALL_C, H)
    results = borromean.verify_many([good, bad_extra, malformed, good], threads=2)
    assert results[0] == results[3] == (0, 15)
    assert results[1] is False
    assert isinstance(results[2], ProofError) and getattr(results[2], "reason", "") == \
        "trailing-bytes"


def test_sign_rejects_bad_parameters() -> None:
    gen = H_GENERATOR
    blind, nonce = bytes(31) + b"\x01", bytes(32)
    for kwargs in ({"min_value": 11}, {"exp": 19}, {"exp": -2}, {"min_bits": 65}):
        with pytest.raises(ProofError) as exc:
            borromean.sign(10, blind, nonce, gen, **kwargs)
        assert reason_of(exc) == "sign-parameters"
    with pytest.raises(ProofError) as exc:
        borromean.sign(10, blind, nonce, gen, min_bits=8, message=b"x" * 513)
    assert reason_of(exc) == "sign-message-too-long"
    with pytest.raises(ProofError):
        borromean.sign(10, N.to_bytes(32, "big"), nonce, gen)


def test_cores_default() -> None:
    """The ring kernel's threads follow the kernel setting (like Core's -par): all cores by
    default, what ``kernel.set_threads`` says otherwise."""
    from ctplugin.secp256k1 import kernel

    assert borromean.default_threads() == kernel.threads() >= 1
    previous = kernel.set_threads(3)
    try:
        assert borromean.default_threads() == 3
    finally:
        kernel.set_threads(previous)
