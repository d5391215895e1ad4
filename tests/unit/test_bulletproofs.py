"""Bulletproofs: reference vectors (prover bytes, verdicts, batches, rewind), property tests,
strict parsing and limits."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.bulletproofs import main
from ctplugin.batch import BatchVerifier
from ctplugin.bulletproofs import (
    CONSENSUS_N_GENS,
    CONSENSUS_NBITS,
    CONSENSUS_PROOF_LENGTH,
    MAX_PROOF_LENGTH,
    generator_set,
    proof_length,
    prove,
    range_proof_claim,
    range_proof_claims,
    verify,
)
from ctplugin.bulletproofs.rewind import rewind
from ctplugin.bulletproofs.vectors import check
from ctplugin.errors import ProofError
from ctplugin.pedersen import H_GENERATOR, commit, generator_generate
from ctplugin.secp256k1 import P
from tests.conftest import FIXTURES, SLOW_SCALE, load_json, shared_path

GENS = generator_set(256)
HG = H_GENERATOR.serialize()
CUSTOM = generator_generate(b"\x42" * 32)


def make(value: int, blind: int = 0x1234567, nonce: bytes = b"\x07" * 32,
         gen=H_GENERATOR, extra: bytes | None = None, message: bytes | None = None,
         nbits: int = 64) -> tuple[bytes, bytes]:
    proof = prove([value], [blind], gen, nonce, extra_commit=extra, message=message,
                  nbits=nbits, gens=GENS)
    return proof, commit(value, blind, gen).serialize()


PROOF, COMMIT = make(123456789)


def verdict(proof: bytes, commitment: bytes = COMMIT, **kw) -> bool:
    """Verify, with a malformed proof counting as a reject."""
    try:
        return verify(proof, [commitment], kw.pop("gen", HG), kw.pop("extra", None),
                      kw.pop("nbits", 64), kw.pop("gens", GENS), **kw)
    except ProofError:
        return False


# --- vectors ---------------------------------------------------------------------------------

def test_cli_small_fixture() -> None:
    lines: list[str] = []
    assert check(load_json(FIXTURES / "bulletproofs_vectors_small.json"), lines.append)
    assert lines and not [line for line in lines if not line.startswith("PASS ")]


def test_cli_full_vectors(capsys: pytest.CaptureFixture[str]) -> None:
    path = shared_path("bulletproofs", "vectors.json")
    assert main(["check", str(path)]) == 0
    text = capsys.readouterr().out
    data = load_json(path)
    n_cases = sum(len(data[k]) for k in ("valid", "invalid", "quirks"))
    assert text.count("PASS ") >= n_cases + len(data["batches"])
    assert "FAIL" not in text


def test_cli_reports_mismatch(tmp_path) -> None:
    data = load_json(FIXTURES / "bulletproofs_vectors_small.json")
    data["invalid"][0]["expected"] = True  # a lie: the tool must notice
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["check", str(bad)]) == 1
    assert main(["check", str(tmp_path / "missing.json")]) == 2


def test_sizes() -> None:
    assert [proof_length(64, m) for m in (1, 2, 4, 8, 16, 64)] == [675, 739, 803, 867, 932, 1060]
    assert len(PROOF) == CONSENSUS_PROOF_LENGTH == proof_length(CONSENSUS_NBITS, 1)
    assert MAX_PROOF_LENGTH == 1060 and CONSENSUS_N_GENS == 256


# --- properties ------------------------------------------------------------------------------

@settings(max_examples=int(8 * SLOW_SCALE), deadline=None)
@given(value=st.integers(0, 2**64 - 1), blind=st.integers(1, 2**256 - 2**129),
       nonce=st.binary(min_size=32, max_size=32), extra=st.none() | st.binary(max_size=40),
       custom=st.booleans())
def test_prove_verify_rewind(value: int, blind: int, nonce: bytes, extra: bytes | None,
                             custom: bool) -> None:
    gen = CUSTOM if custom else H_GENERATOR
    message = nonce[:20]
    proof, c = make(value, blind, nonce, gen, extra, message)
    g = gen.serialize()
    assert verdict(proof, c, gen=g, extra=extra)
    got = rewind(proof, c, g, nonce, extra, gens=GENS)
    assert got is not None and (got.value, got.message) == (value, message)
    assert int.from_bytes(got.blind, "big") == blind
    other = b"" if extra is None else None  # None and empty extra_commit differ
    assert not verdict(proof, c, gen=g, extra=other)
    assert rewind(proof, c, g, bytes(b ^ 0xFF for b in nonce), extra, gens=GENS) is None


@settings(max_examples=int(60 * SLOW_SCALE), deadline=None)
@given(st.integers(0, 8 * CONSENSUS_PROOF_LENGTH - 1))
def test_single_bit_flip_rejects(bit: int) -> None:
    flipped = bytearray(PROOF)
    flipped[bit // 8] ^= 1 << (bit % 8)
    assert not verdict(bytes(flipped))


@pytest.mark.slow
def test_every_bit_flip_rejects() -> None:
    step = max(1, int(16 / SLOW_SCALE))  # every 16th bit in CI, all of them at SLOW_SCALE ≥ 16
    for bit in range(0, 8 * len(PROOF), step):
        flipped = bytearray(PROOF)
        flipped[bit // 8] ^= 1 << (bit % 8)
        assert not verdict(bytes(flipped)), bit


def test_batch_of_100_names_the_bad_proof() -> None:
    items = []
    for i in range(100):
        proof, c = make(i * 1_000_003, 5 + i, os.urandom(32))
        items.append((proof, c))
    bad = 37
    proof, _ = items[bad]
    items[bad] = (proof, commit(bad * 1_000_003 + 1, 5 + bad, H_GENERATOR).serialize())
    batch = BatchVerifier(GENS.fixed)
    for i, (proof, c) in enumerate(items):
        batch.add(range_proof_claim(proof, [c], HG, None, 64, GENS, label=(i, 0, "rangeproof")))
    assert not batch.verify()
    assert batch.failures() == [(bad, 0, "rangeproof")]


def test_mixed_batch() -> None:
    gens = generator_set(512)  # capacity 256 = 4 x 64 bits
    cases = []
    for i, (m, nbits, gen, extra) in enumerate([
        (1, 64, H_GENERATOR, None), (2, 64, CUSTOM, b""), (4, 64, H_GENERATOR, b"script"),
        (1, 32, CUSTOM, b"\x00\x14" + bytes(20)), (2, 16, H_GENERATOR, None),
    ]):
        values = [(i * 77 + j) % (1 << nbits) for j in range(m)]
        blinds = [1000 + 10 * i + j for j in range(m)]
        proof = prove(values, blinds, gen, bytes([i]) * 32, extra_commit=extra, nbits=nbits,
                      gens=gens)
        commits = [commit(v, b, gen).serialize() for v, b in zip(values, blinds)]
        assert len(proof) == proof_length(nbits, m)
        cases.append((proof, commits, gen.serialize(), extra, nbits))
    batch = BatchVerifier(gens.fixed)
    for i, (proof, commits, g, extra, nbits) in enumerate(cases):
        batch.add(range_proof_claim(proof, commits, g, extra, nbits, gens, label=i))
    # a consensus-set proof (other fixed base) joins the same batch
    batch.add(range_proof_claim(PROOF, [COMMIT], HG, None, 64, GENS, label="n256"))
    assert batch.verify()
    proof, commits, g, extra, nbits = cases[2]
    batch.add(range_proof_claim(proof, commits[::-1], g, extra, nbits, gens, label="swapped"))
    assert batch.failures() == ["swapped"]


def test_generator_set_dependence_and_cache() -> None:
    assert generator_set(256) is GENS
    assert not verdict(PROOF, gens=generator_set(1024))


# --- strict parsing and limits ---------------------------------------------------------------

def _with(proof: bytes, offset: int, data: bytes) -> bytes:
    return proof[:offset] + data + proof[offset + len(data):]


def test_strict_flag_bits() -> None:
    with pytest.raises(ProofError, match="unused flag bits"):
        verify(_with(PROOF, 64, bytes([PROOF[64] | 0x10])), [COMMIT], HG)
    with pytest.raises(ProofError, match="unused L/R flag bits"):
        verify(_with(PROOF, 354, bytes([PROOF[354] | 0x04])), [COMMIT], HG)


def test_x_not_below_p_and_scalars() -> None:
    with pytest.raises(ProofError, match="proof point"):
        verify(_with(PROOF, 65, (P + 1).to_bytes(32, "big")), [COMMIT], HG)
    for off in (0, 32, 193, 225, 257, 289, 321):
        with pytest.raises(ProofError, match="zero or not below n"):
            verify(_with(PROOF, off, bytes(32)), [COMMIT], HG)
        with pytest.raises(ProofError, match="zero or not below n"):
            verify(_with(PROOF, off, b"\xff" * 32), [COMMIT], HG)


def test_parameter_limits() -> None:
    with pytest.raises(ProofError):
        verify(PROOF + b"\x00", [COMMIT], HG)
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT] * 3, HG)  # m not a power of two
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT] * 128, HG)
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT], HG, nbits=128)
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT], HG, nbits=3)
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT] * 4, HG)  # N = 256 > capacity 128
    with pytest.raises(ProofError):
        verify(PROOF, [], HG)
    with pytest.raises(ProofError):
        verify(PROOF, [b"\x0a" + COMMIT[1:]], HG)
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT], COMMIT)  # a commitment prefix where a generator belongs
    with pytest.raises(ProofError):
        verify(PROOF, [COMMIT], HG, min_value=[1 << 32])
    with pytest.raises(ProofError):
        prove([1 << 64], [1], H_GENERATOR, bytes(32))
    with pytest.raises(ProofError):
        prove([256], [1], H_GENERATOR, bytes(32), nbits=8)
    with pytest.raises(ProofError):
        prove([1, 2], [1, 2], H_GENERATOR, bytes(32), message=bytes(20))


@settings(max_examples=int(60 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([None, b"", b"x"]), st.integers(0, 6), st.integers(0, 6))
def test_hostile_input_only_proof_error_or_false(data, extra, lg_m: int, lg_nbits: int) -> None:
    m, nbits = 1 << lg_m, 1 << lg_nbits
    try:
        length = proof_length(nbits, m)
    except ProofError:
        length = 675
    blob = data.draw(st.binary(max_size=1200) | st.binary(min_size=length, max_size=length)
                     | st.binary(min_size=675, max_size=675))
    with contextlib.suppress(ProofError):
        assert verify(blob, [COMMIT] * m, HG, extra, nbits, GENS) is False
    with contextlib.suppress(ProofError):
        rewind(blob, COMMIT, HG, bytes(32), extra, nbits, GENS)


@settings(max_examples=int(40 * SLOW_SCALE), deadline=None)
@given(st.integers(0, CONSENSUS_PROOF_LENGTH - 33), st.binary(min_size=32, max_size=32))
def test_hostile_overwrites(offset: int, junk: bytes) -> None:
    """Arbitrary 32-byte overwrites of a valid proof never verify and never crash."""
    tampered = _with(PROOF, offset, junk)
    if tampered != PROOF:
        assert not verdict(tampered)


def test_consensus_helpers() -> None:
    from ctplugin.bulletproofs import (
        consensus_generators,
        output_range_proof_claim,
        prove_output,
        rewind_output,
        verify_output,
    )

    script = bytes.fromhex("0014") + bytes(range(20))
    proof = prove_output(42, 99, CUSTOM, b"\x05" * 32, script, message=b"m" * 20)
    c = commit(42, 99, CUSTOM).serialize()
    g = CUSTOM.serialize()
    assert len(proof) == CONSENSUS_PROOF_LENGTH and consensus_generators() is GENS
    assert verify_output(proof, c, g, script)
    assert not verify_output(proof, c, g, b"")  # the script is bound into the transcript
    got = rewind_output(proof, c, g, b"\x05" * 32, script)
    assert got is not None and (got.value, got.message) == (42, b"m" * 20)
    batch = BatchVerifier(consensus_generators().fixed)
    batch.add(output_range_proof_claim(proof, c, g, script, label=(0, 1, "rangeproof")))
    batch.add(output_range_proof_claim(proof, c, g, script + b"\x00", label=(0, 2, "rangeproof")))
    assert batch.failures() == [(0, 2, "rangeproof")]


def test_block_style_batch_with_balance_equation() -> None:
    """Range proofs and a Pedersen balance equation in ONE batch (docs/design.md)."""
    from ctplugin.batch import Claim
    from ctplugin.bulletproofs import consensus_generators, output_range_proof_claim
    from ctplugin.secp256k1 import N, decode_points, kernel

    def pedersen_point(c: bytes) -> bytes:
        return kernel.backend.decode_points_var(c, kernel.KIND_PEDERSEN)

    h_point = decode_points(HG, kernel.KIND_GENERATOR)[0].packed
    in_c = commit(1000, 11, H_GENERATOR).serialize()
    out_values, out_blinds = [600, 390], [5, 6]  # fee 10; blinds 11 = 5 + 6
    outs = [make(v, b, bytes([b]) * 32, extra=b"") for v, b in zip(out_values, out_blinds)]

    def balance(fee: int, label: str) -> Claim:
        points = pedersen_point(in_c) + b"".join(pedersen_point(c) for _, c in outs)
        scalars = (1).to_bytes(32, "big") + (N - 1).to_bytes(32, "big") * 2
        return Claim(label=label, base=consensus_generators().fixed, free_scalars=scalars,
                     free_points=points, shared=((h_point, N - fee),))

    batch = BatchVerifier(consensus_generators().fixed)
    for i, (proof, c) in enumerate(outs):
        batch.add(output_range_proof_claim(proof, c, HG, b"", label=(0, i, "rangeproof")))
    batch.add(balance(10, "balance"))
    assert batch.verify()
    batch.add(balance(11, "inflation"))
    assert batch.failures() == ["inflation"]


def test_predecoded_commitment_points() -> None:
    from ctplugin.secp256k1 import kernel

    packed = kernel.backend.decode_points_var(COMMIT, kernel.KIND_PEDERSEN)
    claim = range_proof_claim(PROOF, [COMMIT], HG, commitment_points=packed)
    batch = BatchVerifier(GENS.fixed)
    batch.add(claim)
    assert batch.verify()
    other = kernel.backend.decode_points_var(make(5)[1], kernel.KIND_PEDERSEN)
    with pytest.raises(ProofError, match="do not match"):
        range_proof_claim(PROOF, [COMMIT], HG, commitment_points=other)
    with pytest.raises(ProofError, match="do not match"):
        range_proof_claim(PROOF, [COMMIT], HG, commitment_points=packed[:32])


# --- claim groups (one kernel call per batch) -----------------------------------------------------

def _group_items(count: int) -> tuple[list[bytes], list[list[bytes]]]:
    proofs, commits = [], []
    for i in range(count):
        proof, c = make(1000 + i, 77 + i, bytes([i + 3]) * 32)
        proofs.append(proof)
        commits.append([c])
    return proofs, commits


def test_range_proof_claims_group_names_malformed_and_false_members() -> None:
    proofs, commits = _group_items(6)
    proofs[1] = proofs[1][:-1]  # malformed: length
    proofs[2] = _with(proofs[2], 64, bytes([proofs[2][64] | 0x40]))  # malformed: flag bits
    commits[4] = [make(5)[1]]  # well-formed, false
    labels = [("out", i) for i in range(6)]
    group = range_proof_claims(proofs, commits, [HG] * 6, None, 64, GENS, labels=labels)
    assert [label for label, _ in group.failures] == [("out", 1), ("out", 2)]
    assert [exc.reason for _, exc in group.failures] == ["length", "flag-bits"]
    assert group.labels == (("out", 0), ("out", 3), ("out", 4), ("out", 5))
    assert group.generator_points == {HG: H_GENERATOR.point.packed}
    batch = BatchVerifier(GENS.fixed)
    batch.add(group)
    assert not batch.verify()
    assert batch.failures() == [("out", 4)]
    assert batch.first_failure() == ("out", 4)
    # label order across plain claims and group members
    other = range_proof_claim(proofs[0], [make(6)[1]], HG, None, 64, GENS, label=("out", 9))
    batch.add(other)
    assert batch.first_failure(key=lambda label: -label[1]) == ("out", 9)
    assert batch.first_failure() == ("out", 4)


def test_claim_group_relabelled_and_added_twice() -> None:
    proofs, commits = _group_items(3)
    group = range_proof_claims(proofs, commits, [HG] * 3, None, 64, GENS)
    assert group.labels == (0, 1, 2)
    renamed = group.relabelled(["a", "b", "c"])
    assert renamed.labels == ("a", "b", "c") and group.labels == (0, 1, 2)
    with pytest.raises(ValueError):
        group.relabelled(["a"])
    batch = BatchVerifier(GENS.fixed)
    batch.extend([group, renamed])
    assert len(batch) == 6 and batch.verify()
    assert batch.labels == (0, 1, 2, "a", "b", "c")


def test_claim_group_subset_keeps_the_chosen_members_only() -> None:
    """A subset is its own group over the same prepared data: a false member left out no
    longer fails the batch, one kept still does, and is still the one named."""
    proofs, commits = _group_items(4)
    commits[2] = [make(5)[1]]  # well-formed, false
    group = range_proof_claims(proofs, commits, [HG] * 4, None, 64, GENS,
                               labels=["a", "b", "c", "d"])
    assert group.subset([0, 1, 2, 3]) is group
    without = group.subset([3, 0, 1])
    assert without.labels == ("d", "a", "b") and len(without) == 3
    batch = BatchVerifier(GENS.fixed)
    batch.add(without)
    assert batch.verify()
    kept = group.subset([1, 2])
    batch = BatchVerifier(GENS.fixed)
    batch.extend([kept, without])
    assert not batch.verify()
    assert batch.first_failure() == "c" and batch.failures() == ["c"]
    assert kept.relabelled(["x", "y"]).labels == ("x", "y")
    with pytest.raises(ValueError):
        group.subset([4])


def test_range_proof_claims_mixed_m_and_unsupported_min_value() -> None:
    proofs, commits = _group_items(3)
    commits[1] = commits[1] * 2
    group = range_proof_claims(proofs, commits, [HG] * 3, None, 64, GENS,
                               min_values=[None, None, [1 << 40]])
    assert [(label, exc.reason) for label, exc in group.failures] == [
        (1, "parameters"), (2, "min-value-unsupported")]
    batch = BatchVerifier(GENS.fixed)
    batch.add(group)
    assert batch.verify()


def test_proof_error_reasons_are_stable() -> None:
    cases = {
        "length": lambda: verify(PROOF + b"\x00", [COMMIT], HG),
        "scalar-range": lambda: verify(_with(PROOF, 0, bytes(32)), [COMMIT], HG),
        "field-range": lambda: verify(_with(PROOF, 65, (P + 1).to_bytes(32, "big")), [COMMIT],
                                      HG),
        "commitment-prefix": lambda: verify(PROOF, [b"\x0a" + COMMIT[1:]], HG),
        "value-generator": lambda: verify(PROOF, [COMMIT], COMMIT),
        "parameters": lambda: verify(PROOF, [COMMIT] * 3, HG),
        "generators": lambda: verify(PROOF, [COMMIT] * 4, HG),
    }
    for reason, call in cases.items():
        with pytest.raises(ProofError) as info:
            call()
        assert info.value.reason == reason, (reason, info.value)


@pytest.mark.parametrize("document", ['{"transactions": 5}', '{"cases": [{"x": 1}]}', "[]",
                                      '{"valid": [], "generators": {}}'])
def test_cli_a_file_without_cases_is_malformed(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               document: str) -> None:
    """A wrong file never looks like a pass (QA: "all cases match", exit 0, for a file with no
    Bulletproof case at all)."""
    path = tmp_path / "f.json"
    path.write_text(document)
    assert main(["check", str(path)]) == 2
    captured = capsys.readouterr()
    assert f"malformed vectors file {path}: no Bulletproof cases" in captured.err
    assert "all cases match" not in captured.out and "PASS" not in captured.out
