"""Generators and commitments agree with secp256k1-zkp (via wallycore) and the shared vectors."""

from __future__ import annotations

import pytest
import wallycore
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.errors import EncodingError
from ctplugin.hashes import sha256
from ctplugin.pedersen import (
    H_GENERATOR,
    Commitment,
    Generator,
    H,
    blind_sum,
    commit,
    generator_generate,
    generator_generate_blinded,
    verify_tally,
)
from ctplugin.secp256k1 import G, N, P, Point
from tests.conftest import load_json, shared_path

secrets32 = st.integers(min_value=1, max_value=N - 1).map(lambda v: v.to_bytes(32, "big"))
keys32 = st.binary(min_size=32, max_size=32)
values = st.integers(min_value=1, max_value=2**64 - 1)


def test_h_matches_elements_constant() -> None:
    assert H_GENERATOR.serialize().hex() == (
        "0b50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0")
    x = int.from_bytes(sha256(G.to_bytes(compressed=False)), "big")
    assert Point.from_x_qr(x, non_residue=True) == H


def test_generators_match_shared_vectors() -> None:
    vectors = load_json(shared_path("bulletproofs", "vectors.json"))["generators"]
    assert H.packed.hex() == vectors["H_value_gen_xy"]
    custom = generator_generate(bytes.fromhex(vectors["custom_value_gen_key32"]))
    assert custom.point.packed.hex() == vectors["custom_value_gen_xy"]
    assert custom.serialize().hex() == vectors["custom_value_gen_33"]
    blinded = generator_generate_blinded(sha256(b"asset-tag" + bytes(4)),
                                         sha256(b"asset-blind" + bytes(4)))
    assert blinded.point.packed.hex() == vectors["blinded_asset_gen_xy"]
    assert blinded.serialize().hex() == vectors["blinded_asset_gen_33"]


@settings(max_examples=120, deadline=None)
@given(asset=keys32, abf=secrets32, vbf=secrets32, value=values)
def test_generator_and_commitment_equal_wallycore(asset: bytes, abf: bytes, vbf: bytes,
                                                  value: int) -> None:
    reference_gen = wallycore.asset_generator_from_bytes(asset, abf)
    ours = generator_generate_blinded(asset, abf)
    assert ours.serialize() == reference_gen
    assert Generator.parse(reference_gen) == ours
    reference_commit = wallycore.asset_value_commitment(value, vbf, reference_gen)
    assert commit(value, vbf, ours).serialize() == reference_commit
    assert Commitment.parse(reference_commit).serialize() == reference_commit


@settings(max_examples=40, deadline=None)
@given(asset=keys32, amounts=st.lists(st.integers(1, 2**40), min_size=2, max_size=5),
       blinds=st.lists(st.integers(1, N - 1), min_size=4, max_size=4))
def test_tally_balances_only_when_amounts_and_blinds_do(asset: bytes, amounts: list[int],
                                                        blinds: list[int]) -> None:
    gen = generator_generate(asset)
    total = sum(amounts)
    in_blinds = blinds[:2]
    out_blinds = [blinds[2]] * (len(amounts) - 1)
    # the last output takes the balancing blind: Σ in − Σ other outs
    last = blind_sum(in_blinds + out_blinds, n_positive=2)
    inputs = [commit(total - 1, in_blinds[0], gen), commit(1, in_blinds[1], gen)]
    outputs = [commit(a, b, gen) for a, b in zip(amounts[:-1], out_blinds)]
    outputs.append(commit(amounts[-1], last, gen) if last else commit(amounts[-1], 0, gen))
    assert verify_tally(inputs, outputs)
    inflated = [*outputs[:-1], commit(amounts[-1] + 1, last, gen)]
    assert not verify_tally(inputs, inflated)


@pytest.mark.parametrize("data, kind", [
    (b"\x08" + bytes(32), Commitment),               # x = 0: not on the curve
    (b"\x07" + H.xonly(), Commitment),               # wrong prefix
    (b"\x0a" + H.xonly(), Commitment),               # generator prefix for a commitment
    (b"\x08" + P.to_bytes(32, "big"), Commitment),   # x = p
    (b"\x08" + H.xonly()[:-1], Commitment),          # short
    (b"\x08" + H.xonly() + b"\x00", Commitment),     # long
    (b"\x0c" + H.xonly(), Generator),                # wrong prefix
    (b"\x0a" + (P + 1).to_bytes(33, "big")[1:], Generator),
])
def test_malformed_encodings_raise_encoding_error(data: bytes, kind: type) -> None:
    with pytest.raises(EncodingError):
        kind.parse(data)


def test_commit_rejects_out_of_range_inputs() -> None:
    with pytest.raises(EncodingError):
        commit(2**64, 1, H_GENERATOR)
    with pytest.raises(EncodingError):
        commit(1, N, H_GENERATOR)
    with pytest.raises(EncodingError):
        commit(0, 0, H_GENERATOR)  # infinity, as secp256k1_pedersen_commit fails
